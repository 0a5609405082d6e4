// copd's daemon loop and the channels' life (server.h): datagrams in, frames
// checked against who may send them, registration and leases, the driver's
// enrol and task_end requests. Commands and their answers are in
// server_commands.cpp, the sequenced reply stream in server_stream.cpp.
#include "controller/server.h"
#include "link/auth.h"

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
      socket_(config.listen, config.io_threads > 1 ? link::UdpSocket::Group::first : link::UdpSocket::Group::none),
      controller_([&] {
        Config c = config.controller;
        c.lock_limit_us = uint64_t(std::max(config.lock_limit_ms, 0)) * 1000;
        // A channel without a task is treated as one without a driver: its lease.
        c.vacant_limit_us = uint64_t(std::max(config.lease_ms, 0)) * 1000;
        return c;
      }()),
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
  if (config.io_threads < 1 || config.io_threads > wire::kChannels)
    throw std::invalid_argument(fmt::format("io_threads {}: 1..{}", config.io_threads, wire::kChannels));
  start_io();
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
  if (io_) {
    run_threaded(stop);
    return;
  }
  if (rx_.size() < size_t(kBatch)) {
    rx_.assign(size_t(kBatch), std::vector<uint8_t>(link::kMaxFrameBytes + 64));
    rx_in_.resize(size_t(kBatch));
  }
  while (!stop.load()) {
    // Take every datagram that is there, then answer them all: answers to one
    // channel from one round go out in one frame.
    pollfd p{socket_.fd(), POLLIN, 0};
    bool ready = false;
    if (config_.poll || config_.poll_us > 0) {
      // --poll: spin until a datagram or the next timer; --poll-us: a while after the last datagram.
      const auto until = config_.poll ? Clock::now() + std::chrono::milliseconds(next_timeout_ms())
                                      : last_rx_ + std::chrono::microseconds(config_.poll_us);
      while (!(ready = ::poll(&p, 1, 0) > 0) && Clock::now() < until && !stop.load()) sched_yield();
    }
    const bool holding = link::fault_flush();
    const int wait_ms = config_.poll ? 0 : holding ? std::min(1, next_timeout_ms()) : next_timeout_ms();
    if (ready || ::poll(&p, 1, wait_ms) > 0 || holding) {
      for (size_t i = 0; i < size_t(kBatch); ++i) rx_in_[i] = link::InDatagram{std::span<uint8_t>(rx_[i])};
      const int got = link::recv_datagrams(socket_.fd(), rx_in_, MSG_DONTWAIT);
      if (got > 0) last_rx_ = std::chrono::steady_clock::now();
      for (int i = 0; i < got; ++i)
        handle_datagram(std::span<const uint8_t>(rx_[size_t(i)].data(), rx_in_[size_t(i)].size), rx_in_[size_t(i)].from);
    }
    finish_round();
  }
}

void Server::finish_round() {
  tick_controller();
  controller_.run(deliveries_);
  route_deliveries(deliveries_);
  parent_tick();
  send_replies();
  send_confirmations();
  check_leases();
}

void Server::tick_controller() {
  const int holder = controller_.locked_channel();
  const auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count();
  route_deliveries(deliveries_);  // answers first: what tick adds goes to whole masks
  const bool taken_back = controller_.tick(uint64_t(now_us), deliveries_);
  if (!deliveries_.empty()) {
    log_limited("operation(s) waiting for a channel whose tasks have all ended voided: NACK task_ended");
    route_failures();
  }
  if (taken_back)
    log_limited(fmt::format("channel {}: LOCK held longer than {} ms: taken back (deadlock timer); the rest of its "
                            "locked sequence gets NACK lock_timeout",
                            holder, config_.lock_limit_ms));
}

void Server::send_frame(const Frame& f, const sockaddr_in& to, const link::Key* key) {
  link::encode(f, out_buf_, key);
  transmit(f.channel, out_buf_, to);
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
  handle_decoded(bytes, from, link::decode(bytes), nullptr);
}

void Server::handle_decoded(std::span<const uint8_t> bytes, const sockaddr_in& from,
                            const std::variant<Frame, link::LinkError>& decoded, const PreVerified* pre) {
  if (auto* err = std::get_if<link::LinkError>(&decoded)) {
    answer_malformed(bytes, from, *err);
    return;
  }
  const Frame& f = std::get<Frame>(decoded);
  if (parent_ && parent_->from_parent(from)) {
    take_from_parent(f, bytes);
    return;
  }
  if (f.type == FrameType::register_) {
    handle_register(f, from);
    return;
  }
  if (f.type == FrameType::prove) {
    handle_prove(f, bytes, from);
    return;
  }
  auto it = by_address_.find(link::endpoint_key(from));
  if (it == by_address_.end()) {
    log_limited(fmt::format("{} frame from {}, which holds no channel: refused", link::frame_type_name(f.type),
                            link::to_string(from)));
    refuse(from, link::Refusal::not_registered, f.channel, "this address has registered no channel");
    return;
  }
  handle_channel_frame(it->second, f, bytes, from, pre);
}

void Server::answer_malformed(std::span<const uint8_t> bytes, const sockaddr_in& from, const link::LinkError& err) {
  log_limited(fmt::format("malformed frame from {} ({} bytes): {}", link::to_string(from), bytes.size(), err.detail));
  // Only a registered node is answered: the NACK asks it to resend.
  const auto it = by_address_.find(link::endpoint_key(from));
  if (it == by_address_.end()) return;
  Frame nack;
  nack.type = FrameType::frame_nack;
  // The sequence number is where it should be if the header made it.
  if (bytes.size() >= 16) std::memcpy(&nack.seq, bytes.data() + 12, 4);
  nack.info[0] = static_cast<uint32_t>(err.code);
  nack.text = err.detail;
  nack.channel = static_cast<uint16_t>(it->second);
  nack.session = chan(it->second).session;
  send_frame(nack, from, &chan(it->second).down_key);
}

std::string Server::unauthorised(const Channel& ch, const Frame& f, bool driver, bool task) {
  switch (f.type) {
    case FrameType::command:
      if (driver || task) return {};
      return f.tkno < ch.tasks.size() ? "MAC is not the task's" : "TKNO beyond the channel's tasks";
    case FrameType::ack:
      return driver || task ? "" : "acknowledgment with a wrong MAC";
    case FrameType::heartbeat:
    case FrameType::enrol:
    case FrameType::join:
    case FrameType::task_end:
    case FrameType::bye:
      return driver ? "" : fmt::format("{} not MACed with the driver's key", link::frame_type_name(f.type));
    default:
      return {};
  }
}

void Server::handle_channel_frame(int c, const Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from,
                                  const PreVerified* pre) {
  Channel& ch = chan(c);
  // Who sent it: the key that verifies its MAC, the task's it names (a command
  // or an acknowledgment) or else the driver's. Every key is this session's:
  // a frame of another session verifies under none (cop/link.h "Keys").
  const bool task_frame = f.type == FrameType::command || f.type == FrameType::ack;
  const bool enrolled = f.tkno < ch.tasks.size() && ch.tasks[f.tkno].enrolled;
  // An I/O thread's check counts where it used the key the channel has now.
  const bool task = task_frame && enrolled &&
                    (pre && pre->task_tried && pre->task_key == ch.tasks[f.tkno].key
                         ? pre->task_ok
                         : link::verify(bytes, ch.tasks[f.tkno].key));
  const bool driver = !task && (pre && pre->driver_tried && pre->driver_key == ch.driver_key
                                    ? pre->driver_ok
                                    : link::verify(bytes, ch.driver_key));
  if (!task && !driver) {
    if (f.session != ch.session) {
      stats_.other_session++;
      refuse_forged(c, f, fmt::format("session {}, not the channel's {}", f.session, ch.session));
    } else if (task_frame && !enrolled && f.tkno < ch.tasks.size()) {
      // copdrv has registered again and not yet enrolled this task again: the
      // task's transmit timer resends the frame, and it executes then.
      stats_.not_enrolled++;
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: frame {} of TKNO {}, not enrolled (yet): dropped", c, f.seq, f.tkno));
    } else {
      stats_.bad_mac++;
      refuse_forged(c, f, unauthorised(ch, f, false, false));
    }
    return;
  }
  if (const std::string why = unauthorised(ch, f, driver, task); !why.empty()) {
    stats_.bad_mac++;
    refuse_forged(c, f, why);
    return;
  }
  switch (f.type) {
    case FrameType::command:
      ch.last_heard = Clock::now();
      take_ack(c, f);
      if (config_.controller.level == 2)
        handle_child_frame(c, f);  // a level-1 controller's (its driver key: unauthorised() checked)
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
  send_frame(ack, from, &chan(c).down_key);
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
  const Channel& ch = chan(c);
  if (ch.registered && ch.addr.sin_addr.s_addr != from.sin_addr.s_addr) {
    log_limited(fmt::format("registration of channel {} from {} refused: held by {}", c, link::to_string(from),
                            link::to_string(ch.addr)));
    refuse(from, link::Refusal::already_registered, f.channel,
           fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
    return;
  }
  // Prove the cluster key: a fresh challenge, answered once (handle_prove).
  const auto now = Clock::now();
  while (!pending_.empty() && (pending_.front().expires < now || pending_.size() >= kMaxPending)) pending_.pop_front();
  Pending p{uint16_t(c), link::endpoint_key(from), f.nonce, link::random_challenge(),
            now + std::chrono::milliseconds(kChallengeMs)};
  pending_.push_back(p);
  Frame ch_frame;
  ch_frame.type = FrameType::challenge;
  ch_frame.channel = uint16_t(c);
  ch_frame.nonce = f.nonce;
  std::copy(p.ns.begin(), p.ns.end(), ch_frame.info.begin());
  send_frame(ch_frame, from);
}

void Server::handle_prove(const Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from) {
  const int c = f.channel;
  const uint64_t key = link::endpoint_key(from);
  link::Challenge ns;
  std::copy(f.info.begin(), f.info.end(), ns.begin());
  const auto now = Clock::now();
  // A wrong proof is refused; a right one for no open challenge (a duplicate or
  // a late copy of one taken already, or a replay) changes nothing and is not
  // answered: a refusal would take the channel down at its holder.
  if (!link::verify(bytes, link::register_key(config_.key, uint16_t(c), f.nonce, ns))) {
    stats_.bad_proofs++;
    log_limited(fmt::format("registration of channel {} from {} refused: wrong proof of the cluster key ({} so far)", c,
                            link::to_string(from), stats_.bad_proofs));
    refuse(from, link::Refusal::bad_secret, f.channel, "no valid proof of the cluster key for a challenge of copd");
    return;
  }
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) {
    return p.channel == c && p.from == key && p.nc == f.nonce && p.ns == ns && p.expires >= now;
  });
  if (it == pending_.end()) {
    stats_.stale++;
    if (config_.verbose)
      log_(link::LogLevel::info, fmt::format("channel {}: proof from {} for no open challenge (a copy): ignored", c,
                                             link::to_string(from)));
    return;
  }
  pending_.erase(it);  // a challenge is answered once
  Channel& ch = chan(c);
  if (ch.registered && link::endpoint_key(ch.addr) != key) {
    if (ch.addr.sin_addr.s_addr != from.sin_addr.s_addr) {
      refuse(from, link::Refusal::already_registered, f.channel,
             fmt::format("channel {} is held by {}", c, link::to_string(ch.addr)));
      return;
    }
    // The same node with a new driver holding the key (restarted within its
    // lease): it takes its channel back, and what the old one left waiting fails.
    drop_channel(c, fmt::format("taken over by a new driver at {}", link::to_string(from)));
  }
  if (auto at = by_address_.find(key); at != by_address_.end() && at->second != c) {
    refuse(from, link::Refusal::already_registered, f.channel,
           fmt::format("this address holds channel {}", at->second));
    return;
  }
  if (!ch.registered) {
    controller_.reset_channel(c);
    ch = Channel{};
    ch.registered = true;
    ch.addr = from;
    ch.session = next_session_++;
    if (ch.session == 0) ch.session = next_session_++;
    ch.down_key = link::session_key(link::channel_down_key(config_.key, uint16_t(c)), ch.session);
    ch.tasks.resize(config_.controller.tasks_per_channel);
    ch.rto_ms = kRtoMs;
    by_address_[key] = c;
    log_(link::LogLevel::info, fmt::format("channel {} registered by {} (session {})", c, link::to_string(from), ch.session));
  }
  // The holder proving again (it took the channel for down) keeps its session
  // and tasks; its driver's key is the one of this proof.
  ch.driver_key = link::driver_key(config_.key, uint16_t(c), ch.session, f.nonce);
  ch.last_heard = Clock::now();
  Frame ok;
  ok.type = FrameType::registered;
  ok.channel = static_cast<uint16_t>(c);
  ok.tkno = controller_.channel_partition(c);
  ok.session = ch.session;
  ok.nonce = f.nonce;
  ok.cycles = controller_.cycles();
  ok.info = {uint32_t(config_.controller.channels), config_.controller.tasks_per_channel,
             config_.controller.tas_words, config_.controller.gas_words};
  publish_keys(c);
  send_frame(ok, from, &ch.down_key);
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
        t.key = link::session_key(link::task_key(config_.key, uint16_t(c), f.tkno, f.nonce), ch.session);
        if (has_job) controller_.set_task_partition(c, f.tkno, joined->second);
        controller_.set_vacant(c, false);
      } else if (std::none_of(ch.tasks.begin(), ch.tasks.end(), [](const Task& t) { return t.enrolled; })) {
        // Its last task ended: operations waiting for the channel are voided unless one enrols in time.
        controller_.set_vacant(c, true);
      }
      ch.joined.erase(f.tkno);
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: task {} {}", c, f.tkno, f.type == FrameType::enrol ? "enrolled" : "ended"));
    }
    ch.sup_seq = f.seq;
    publish_keys(c);
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
  send_frame(ack, ch.addr, &ch.down_key);
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
  // The number's task back after its channel's lease ran out, re-joined by its
  // driver with the PPN it had: it keeps its place (and its job the partition's words).
  if (away_.erase({c, f.tkno}) > 0 && f.info[3] != 0)
    if (const auto kept = jobs_.member_of(c, f.tkno, job, uid); kept && *kept + 1u == f.info[3]) {
      ch.joined[f.tkno] = *kept;
      return {1u + *kept, 0};
    }
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
  publish_keys(c);
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
    if (silent > config_.lease_ms) drop_channel(c, fmt::format("no frame for {} ms", silent), true);
  }
  for (auto it = away_.begin(); it != away_.end();) {  // not back within another lease: they leave
    if (it->second > now) {
      ++it;
      continue;
    }
    leave_job(it->first.first, it->first.second);
    it = away_.erase(it);
  }
}

void Server::drop_channel(int c, const std::string& why, bool may_return) {
  Channel& ch = chan(c);
  by_address_.erase(link::endpoint_key(ch.addr));
  route_deliveries(deliveries_);
  ch = Channel{};
  publish_keys(c);
  const int failed = controller_.fail_channel(c, deliveries_);
  for (uint32_t t = 0; t < config_.controller.tasks_per_channel; ++t) {
    away_.erase({c, uint16_t(t)});
    if (!may_return) leave_job(c, uint16_t(t));
    else if (jobs_.member(c, uint16_t(t))) away_[{c, uint16_t(t)}] = Clock::now() + std::chrono::milliseconds(config_.lease_ms);
  }
  log_(link::LogLevel::warn, fmt::format("channel {} down ({}); {} global operation(s) waiting for it failed with link_down", c, why,
                   failed));
  route_failures();
  send_replies();
}

}  // namespace cop::controller
