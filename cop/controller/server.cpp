// copd's daemon loop and the channels' life (server.h): datagrams in, frames
// checked against who may send them, registration and leases, the driver's
// enrol and task_end requests. Commands and their answers are in
// server_commands.cpp, the sequenced reply stream in server_stream.cpp.
#include "controller/server.h"

#include <fmt/format.h>

#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cop::controller {

using link::Frame;
using link::FrameType;

Server::Server(const ServerConfig& config, Log log)
    : config_(config),
      log_(std::move(log)),
      socket_(config.listen),
      controller_(config.controller),
      jobs_(config.controller.partitions),
      channels_(size_t(config.controller.channels)) {
  // Sessions start at a random number, so a frame from before a restart of copd
  // is not taken for one of the new registration.
  if (::getrandom(&next_session_, sizeof next_session_, 0) != sizeof next_session_)
    next_session_ = uint32_t(Clock::now().time_since_epoch().count());
  if (next_session_ == 0) next_session_ = 1;
  if (config.controller.has_parent != config.parent.has_value())
    throw std::invalid_argument("a level-1 controller with a parent needs the parent's address, and only it");
  if (config.parent) parent_ = std::make_unique<ParentLink>(*config.parent, socket_.fd(), log_);
}

int Server::registered_channels() const {
  return static_cast<int>(std::count_if(channels_.begin(), channels_.end(), [](const Channel& c) { return c.registered; }));
}

void Server::log_limited(const std::string& line) {
  const auto now = Clock::now();
  if (now - log_second_ >= std::chrono::seconds(1)) {
    if (log_suppressed_ > 0) log_(link::LogLevel::warn, fmt::format("({} more such lines suppressed)", log_suppressed_));
    log_second_ = now;
    log_lines_ = 0;
    log_suppressed_ = 0;
  }
  if (log_lines_++ < kLogBurst)
    log_(link::LogLevel::warn, line);
  else
    log_suppressed_++;
}

void Server::run(const std::atomic<bool>& stop) {
  if (rx_.size() < size_t(kBatch)) {
    rx_.assign(size_t(kBatch), std::vector<uint8_t>(link::kMaxFrameBytes + 64));
    rx_in_.resize(size_t(kBatch));
  }
  while (!stop.load()) {
    // Take every datagram that is there, then answer them all: answers to one
    // channel from one round go out in one frame.
    pollfd p{socket_.fd(), POLLIN, 0};
    bool ready = false;
    if (config_.poll_us > 0) {
      const auto until = last_rx_ + std::chrono::microseconds(config_.poll_us);
      while (!(ready = ::poll(&p, 1, 0) > 0) && std::chrono::steady_clock::now() < until) sched_yield();
    }
    const bool holding = link::fault_flush();
    if (ready || ::poll(&p, 1, holding ? std::min(1, next_timeout_ms()) : next_timeout_ms()) > 0 || holding) {
      for (size_t i = 0; i < size_t(kBatch); ++i) rx_in_[i] = link::InDatagram{std::span<uint8_t>(rx_[i])};
      const int got = link::recv_datagrams(socket_.fd(), rx_in_, MSG_DONTWAIT);
      if (got > 0) last_rx_ = std::chrono::steady_clock::now();
      for (int i = 0; i < got; ++i)
        handle_datagram(std::span<const uint8_t>(rx_[size_t(i)].data(), rx_in_[size_t(i)].size), rx_in_[size_t(i)].from);
    }
    controller_.run(deliveries_);
    route_deliveries(deliveries_);
    parent_tick();
    send_replies();
    send_confirmations();
    check_leases();
  }
}

void Server::send_frame(const Frame& f, const sockaddr_in& to) {
  link::encode(f, out_buf_);
  if (!socket_.send_to(out_buf_, to) && config_.verbose)
    log_(link::LogLevel::warn, fmt::format("send to {} failed: {}", link::to_string(to), std::strerror(errno)));
}

void Server::refuse(const sockaddr_in& to, link::Refusal why, uint16_t channel, const std::string& text) {
  Frame f;
  f.type = FrameType::refused;
  f.channel = channel;
  f.info[0] = static_cast<uint32_t>(why);
  f.text = text;
  send_frame(f, to);
}

void Server::handle_datagram(std::span<const uint8_t> bytes, const sockaddr_in& from) {
  auto decoded = link::decode(bytes);
  if (auto* err = std::get_if<link::LinkError>(&decoded)) {
    answer_malformed(bytes, from, *err);
    return;
  }
  const Frame& f = std::get<Frame>(decoded);
  if (parent_ && parent_->from_parent(from)) {
    take_from_parent(f);
    return;
  }
  if (f.type == FrameType::register_) {
    handle_register(f, from);
    return;
  }
  auto it = by_address_.find(link::endpoint_key(from));
  if (it == by_address_.end()) {
    log_limited(fmt::format("{} frame from {}, which holds no channel: refused", link::frame_type_name(f.type),
                            link::to_string(from)));
    refuse(from, link::Refusal::not_registered, f.channel, "this address has registered no channel");
    return;
  }
  handle_channel_frame(it->second, f, from);
}

void Server::answer_malformed(std::span<const uint8_t> bytes, const sockaddr_in& from, const link::LinkError& err) {
  log_limited(fmt::format("malformed frame from {} ({} bytes): {}", link::to_string(from), bytes.size(), err.detail));
  // Only a registered node is answered: the NACK asks it to resend.
  if (by_address_.find(link::endpoint_key(from)) == by_address_.end()) return;
  Frame nack;
  nack.type = FrameType::frame_nack;
  // The sequence number is where it should be if the header made it.
  if (bytes.size() >= 16) std::memcpy(&nack.seq, bytes.data() + 12, 4);
  nack.info[0] = static_cast<uint32_t>(err.code);
  nack.text = err.detail;
  send_frame(nack, from);
}

std::string Server::unauthorised(const Channel& ch, const Frame& f, bool driver, bool task) {
  switch (f.type) {
    case FrameType::command:
      if (driver || task) return {};
      return f.tkno < ch.tasks.size() ? "token does not match the task's" : "TKNO beyond the channel's tasks";
    case FrameType::ack:
      return driver || task ? "" : "acknowledgment with a wrong token";
    case FrameType::heartbeat:
    case FrameType::enrol:
    case FrameType::join:
    case FrameType::task_end:
    case FrameType::bye:
      return driver ? "" : fmt::format("{} without the driver secret", link::frame_type_name(f.type));
    default:
      return {};
  }
}

void Server::handle_channel_frame(int c, const Frame& f, const sockaddr_in& from) {
  Channel& ch = chan(c);
  // Who sent it: the driver (its secret) or an enrolled task (its token).
  const bool driver = f.token == ch.secret;
  const bool task = !driver && f.tkno < ch.tasks.size() && ch.tasks[f.tkno].enrolled &&
                    ch.tasks[f.tkno].token == f.token;
  if (const std::string why = unauthorised(ch, f, driver, task); !why.empty()) {
    refuse_forged(c, f, why);
    return;
  }
  switch (f.type) {
    case FrameType::command:
      ch.last_heard = Clock::now();
      take_ack(c, f);
      if (config_.controller.level == 2)
        handle_child_frame(c, f);  // a level-1 controller's (its driver secret: unauthorised() checked)
      else
        handle_command(c, f, driver);
      break;
    case FrameType::ack:
      ch.last_heard = Clock::now();
      take_ack(c, f);
      break;
    case FrameType::heartbeat:
      ch.last_heard = Clock::now();
      take_ack(c, f);
      answer_heartbeat(c, f, from);
      break;
    case FrameType::enrol:
    case FrameType::join:
    case FrameType::task_end:
      ch.last_heard = Clock::now();
      handle_driver_request(c, f);
      break;
    case FrameType::bye:
      drop_channel(c, "its driver left");
      break;
    default:
      log_limited(fmt::format("channel {}: unexpected {} frame ignored", c, link::frame_type_name(f.type)));
  }
}

void Server::answer_heartbeat(int c, const Frame& f, const sockaddr_in& from) {
  Frame ack;
  ack.type = FrameType::heartbeat_ack;
  ack.channel = static_cast<uint16_t>(c);
  ack.seq = f.seq;
  ack.session = chan(c).session;
  ack.cycles = controller_.cycles();
  send_frame(ack, from);
}

void Server::handle_register(const Frame& f, const sockaddr_in& from) {
  const int c = f.channel;
  if (c < 1 || c > config_.controller.channels) {
    log_limited(fmt::format("registration of channel {} from {} refused: copd has channels 1..{}", c,
                            link::to_string(from), config_.controller.channels));
    refuse(from, link::Refusal::unknown_channel, f.channel,
           fmt::format("copd has channels 1..{}", config_.controller.channels));
    return;
  }
  if (f.token == 0) {
    refuse(from, link::Refusal::bad_secret, f.channel, "a registration must carry a (nonzero) driver secret");
    return;
  }
  const uint64_t key = link::endpoint_key(from);
  Channel& ch = chan(c);
  if (ch.registered && !(link::endpoint_key(ch.addr) == key && ch.secret == f.token)) {
    if (ch.addr.sin_addr.s_addr != from.sin_addr.s_addr) {
      log_limited(fmt::format("registration of channel {} from {} refused: held by {}", c, link::to_string(from),
                              link::to_string(ch.addr)));
      refuse(from, link::Refusal::already_registered, f.channel,
             fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
      return;
    }
    // The same node with a new driver (restarted within its lease): it takes
    // its channel back, and what the old one left waiting fails.
    drop_channel(c, fmt::format("taken over by a new driver at {}", link::to_string(from)));
  }
  if (auto it = by_address_.find(key); it != by_address_.end() && it->second != c) {
    refuse(from, link::Refusal::already_registered, f.channel,
           fmt::format("this address holds channel {}", it->second));
    return;
  }
  if (!ch.registered) {
    controller_.reset_channel(c);
    ch = Channel{};
    ch.registered = true;
    ch.addr = from;
    ch.secret = f.token;
    ch.session = next_session_++;
    if (ch.session == 0) ch.session = next_session_++;
    ch.tasks.resize(config_.controller.tasks_per_channel);
    ch.rto_ms = kRtoMs;
    by_address_[key] = c;
    log_(link::LogLevel::info, fmt::format("channel {} registered by {} (session {})", c, link::to_string(from), ch.session));
  }
  ch.last_heard = Clock::now();
  Frame ok;
  ok.type = FrameType::registered;
  ok.channel = static_cast<uint16_t>(c);
  ok.tkno = controller_.channel_partition(c);
  ok.session = ch.session;
  ok.cycles = controller_.cycles();
  ok.info = {uint32_t(config_.controller.channels), config_.controller.tasks_per_channel,
             config_.controller.tas_words, config_.controller.gas_words};
  send_frame(ok, from);
}

void Server::handle_driver_request(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // a request of the previous registration
  // In order only (the driver resends the oldest unconfirmed one): a JOIN is done
  // before the ENROL after it, even when the two are sent together and arrive swapped.
  const uint32_t next = ch.sup_seq + 1 == 0 ? 1 : ch.sup_seq + 1;
  if (link::seq_after(f.seq, ch.sup_seq) && f.seq != next) return;
  if (link::seq_after(f.seq, ch.sup_seq)) {
    if (f.tkno >= ch.tasks.size()) {
      log_limited(fmt::format("channel {}: {} of TKNO {} beyond the channel's {} tasks ignored", c,
                              link::frame_type_name(f.type), f.tkno, ch.tasks.size()));
    } else if (f.type == FrameType::join) {
      ch.sup_answer = join_job(c, f);
    } else {
      ch.sup_answer = {};
      // The task's job, when its JOIN came first (copdrv sends it before the ENROL, so
      // the task's first command already acts in its job's partition).
      const auto joined = ch.joined.find(f.tkno);
      const bool has_job = f.type == FrameType::enrol && joined != ch.joined.end();
      // Enrolling a number ends whoever held it before.
      if (ch.tasks[f.tkno].enrolled || f.type == FrameType::task_end) end_task(c, f.tkno, !has_job);
      if (f.type == FrameType::enrol) {
        Task& t = ch.tasks[f.tkno];
        t.enrolled = true;
        t.token = f.info64();
        if (has_job) controller_.set_task_partition(c, f.tkno, joined->second);
      }
      ch.joined.erase(f.tkno);
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: task {} {}", c, f.tkno, f.type == FrameType::enrol ? "enrolled" : "ended"));
    }
    ch.sup_seq = f.seq;
  }
  if (link::seq_after(f.seq, ch.sup_seq)) return;
  Frame ack;
  ack.type = FrameType::sup_ack;
  ack.channel = static_cast<uint16_t>(c);
  ack.tkno = f.tkno;
  ack.seq = f.seq;
  ack.session = ch.session;
  if (f.seq == ch.sup_seq) {
    ack.info[0] = ch.sup_answer[0];
    ack.info[1] = ch.sup_answer[1];
  }
  send_frame(ack, ch.addr);
}

std::array<uint32_t, 2> Server::join_job(int c, const Frame& f) {
  Channel& ch = chan(c);
  const std::string job = f.text;
  const uint32_t uid = f.info[2];
  // Not done for two levels: the partition of a level-1 controller's nodes is the
  // level 2's SAS word [c] (a two-level partition takes whole level-1 controllers).
  // With one partition (--partitions 1) every job shares the channels' own.
  if (config_.controller.level != 1 || config_.controller.has_parent || config_.controller.partitions < 2)
    return {1u + controller_.channel_partition(c), 0};
  uint8_t ppn = 0;
  leave_job(c, f.tkno);  // whatever job the number's last task was in
  ch.joined.erase(f.tkno);
  const link::JoinRefusal why = jobs_.join(c, f.tkno, job, uid, f.info[3] ? int(f.info[3]) - 1 : -1, ppn);
  if (why != link::JoinRefusal::none) {
    log_limited(fmt::format("channel {}: task {} of uid {} refused job '{}' ({})", c, f.tkno, uid, job,
                            why == link::JoinRefusal::other_user     ? "another user's job"
                            : why == link::JoinRefusal::no_partition ? "no partition free"
                                                                     : "bad request"));
    return {0, uint32_t(why)};
  }
  ch.joined[f.tkno] = ppn;  // for its ENROL, which follows
  if (config_.verbose)
    log_(link::LogLevel::info, fmt::format("channel {}: task {} joined job '{}' (uid {}) in partition {}", c, f.tkno, job, uid, ppn));
  return {1u + ppn, 0};
}

void Server::leave_job(int c, uint16_t tkno) {
  if (const auto freed = jobs_.leave(c, tkno)) {
    controller_.clear_partition(*freed);
    if (config_.verbose) log_(link::LogLevel::info, fmt::format("partition {} free (its job's last task ended)", *freed));
  }
}

void Server::end_task(int c, uint16_t tkno, bool leave) {
  Channel& ch = chan(c);
  // Results still queued for routing go first: they are not the ended task's.
  route_deliveries(deliveries_);
  // The controller drops the task's queued commands unanswered (controller.h,
  // end_task): so do their places in the answer order, which is what is left
  // in the fifo (everything answered has been routed just now).
  std::erase_if(ch.fifo, [&](const Origin& o) { return !o.supervisor && o.tkno == tkno; });
  std::erase_if(ch.forwarded, [&](const Origin& o) { return !o.supervisor && o.tkno == tkno; });
  const int failed = controller_.end_task(c, tkno, deliveries_);
  if (failed > 0 || config_.verbose)
    log_(failed > 0 ? link::LogLevel::warn : link::LogLevel::info,
         fmt::format("channel {}: task {} ended; {} global operation(s) it took part in failed", c, tkno, failed));
  ch.tasks[tkno] = Task{};
  if (leave) leave_job(c, tkno);
  route_failures();
}

void Server::check_leases() {
  const auto now = Clock::now();
  if (now - last_lease_check_ < std::chrono::milliseconds(50)) return;
  last_lease_check_ = now;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) continue;
    const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - ch.last_heard).count();
    if (silent > config_.lease_ms) drop_channel(c, fmt::format("no frame for {} ms", silent));
  }
}

void Server::drop_channel(int c, const std::string& why) {
  Channel& ch = chan(c);
  by_address_.erase(link::endpoint_key(ch.addr));
  route_deliveries(deliveries_);
  ch = Channel{};
  const int failed = controller_.fail_channel(c, deliveries_);
  for (uint32_t t = 0; t < config_.controller.tasks_per_channel; ++t) leave_job(c, uint16_t(t));
  log_(link::LogLevel::warn, fmt::format("channel {} down ({}); {} global operation(s) waiting for it failed with link_down", c, why,
                   failed));
  route_failures();
  send_replies();
}

}  // namespace cop::controller
