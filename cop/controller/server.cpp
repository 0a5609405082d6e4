// copd's daemon loop (server.h): datagrams in, frames checked against who may
// send them. The channels' life (registration and leases, the driver's enrol and
// task_end requests) is in server_channels.cpp, commands and their answers in
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

using link::Entry;
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
        c.runs = config.runs;  // the core's run path with copd's (ServerConfig::runs)
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
    // Each slot's buffer, once: a receive writes only a slot's size and sender.
    rx_in_.clear();
    for (auto& b : rx_) rx_in_.push_back(link::InDatagram{std::span<uint8_t>(b)});
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

void Server::refuse(const sockaddr_in& to, link::Refusal why, const Frame& refused, const std::string& text) {
  Frame f;
  f.type = FrameType::refused;
  f.channel = refused.channel;
  // The refused frame's nonce, seq, type and session: a node takes a REFUSED only for
  // its own registration (nonce Nc) or for the session it is in (cop/link.h "REFUSED").
  f.nonce = refused.nonce;
  f.seq = refused.seq;
  f.session = refused.session;
  f.info[0] = static_cast<uint32_t>(why);
  f.info[1] = static_cast<uint32_t>(refused.type);
  f.text = text;
  const link::Key key = link::refusal_key(link::channel_down_key(config_.key, refused.channel));
  send_frame(f, to, &key);
}

void Server::handle_datagram(std::span<const uint8_t> bytes, const sockaddr_in& from) {
  // Decoded into the same Frame (or runs) each time: its entries' storage is kept (link.h decode).
  const bool whole = decode_datagram(bytes, keep_runs(), rx_runs_, rx_decoded_);
  handle_decoded(bytes, from, rx_decoded_, nullptr, whole ? &rx_runs_ : nullptr);
}

bool Server::decode_datagram(std::span<const uint8_t> bytes, bool keep_runs, link::FrameRuns& runs,
                             std::variant<Frame, link::LinkError>& decoded) {
  if (auto bad = link::decode_runs(bytes, runs)) {
    decoded = std::move(*bad);
    return false;
  }
  // A command frame with a burst (a run of elements) goes to handle_command as its runs;
  // every other frame as decode() gives it, its entries from the runs.
  if (keep_runs && runs.frame.type == FrameType::command && runs.elements > runs.runs.size()) return true;
  auto* f = std::get_if<Frame>(&decoded);
  if (!f) f = &decoded.emplace<Frame>();
  std::vector<Entry> keep = std::move(f->entries);
  *f = runs.frame;
  f->entries = std::move(keep);
  f->entries.clear();
  for (const link::EntryRun& r : runs.runs)
    for (size_t k = 0; k < r.count; ++k) f->entries.push_back(r.count == 1 ? r.first : r.element(k));
  return false;
}

const Frame& Server::with_entries(const Frame& f, const link::FrameRuns* runs) {
  if (!runs) return f;
  std::vector<Entry> keep = std::move(runs_frame_.entries);
  runs_frame_ = runs->frame;
  runs_frame_.entries = std::move(keep);
  runs_frame_.entries.clear();
  for (const link::EntryRun& r : runs->runs)
    for (size_t k = 0; k < r.count; ++k) runs_frame_.entries.push_back(r.element(k));
  return runs_frame_;
}

void Server::handle_decoded(std::span<const uint8_t> bytes, const sockaddr_in& from,
                            const std::variant<Frame, link::LinkError>& decoded, const PreVerified* pre,
                            const link::FrameRuns* runs) {
  if (auto* err = runs ? nullptr : std::get_if<link::LinkError>(&decoded)) {
    answer_malformed(bytes, from, *err);
    return;
  }
  // (runs: a command frame, and this copd has no parent: keep_runs.)
  const Frame& f = runs ? runs->frame : std::get<Frame>(decoded);
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
    refuse(from, link::Refusal::not_registered, f, "this address has registered no channel");
    return;
  }
  handle_channel_frame(it->second, f, bytes, from, pre, runs);
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

bool Server::fresh_command(const Channel& ch, const Frame& f, bool driver) {
  const Task& t = driver ? ch.driver : ch.tasks[f.tkno];
  return !t.executed || link::seq_after(f.seq, t.seq);
}

void Server::handle_channel_frame(int c, const Frame& f, std::span<const uint8_t> bytes, const sockaddr_in& from,
                                  const PreVerified* pre, const link::FrameRuns* runs) {
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
  // The lease is renewed by fresh frames only (a new heartbeat, command or request):
  // a replayed one, MACed as it is, must not keep a dead driver's channel alive.
  switch (f.type) {
    case FrameType::command:
      if (config_.controller.level == 2 || fresh_command(ch, f, driver)) ch.last_heard = Clock::now();
      take_ack(c, f);
      if (config_.controller.level == 2)
        handle_child_frame(c, with_entries(f, runs));  // a level-1 controller's (its driver key: unauthorised() checked)
      else
        handle_command(c, f, driver, runs);
      break;
    case FrameType::ack:
      take_ack(c, f);
      break;
    case FrameType::heartbeat:
      if (!link::seq_after(f.seq, ch.heartbeat_seq)) {
        stats_.stale_heartbeats++;
        refuse_forged(c, f, fmt::format("heartbeat not after the driver's last ({}): a replay", ch.heartbeat_seq));
        break;
      }
      ch.heartbeat_seq = f.seq;
      ch.last_heard = Clock::now();
      take_ack(c, f);
      answer_heartbeat(c, f, from);
      break;
    case FrameType::enrol:
    case FrameType::join:
    case FrameType::task_end:
      if (f.session == ch.session && link::seq_after(f.seq, ch.sup_seq)) ch.last_heard = Clock::now();
      handle_driver_request(c, f);
      break;
    case FrameType::bye:
      drop_channel(c, "its driver left");
      break;
    default:
      log_limited(fmt::format("channel {}: unexpected {} frame ignored", c, link::frame_type_name(f.type)));
  }
}

}  // namespace cop::controller
