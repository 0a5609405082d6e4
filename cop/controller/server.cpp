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

namespace cop::controller {

using link::Entry;
using link::EntryKind;
using link::Frame;
using link::FrameType;
using wire::Direction;
using wire::Opcode;

namespace {

// Serial-number order (RFC 1982): a is after b.
bool newer(uint32_t a, uint32_t b) { return int32_t(a - b) > 0; }

}  // namespace

Server::Server(const ServerConfig& config, Log log)
    : config_(config),
      log_(std::move(log)),
      socket_(config.listen),
      controller_(config.controller),
      channels_(size_t(config.controller.channels)) {
  // Sessions start at a random number, so a frame from before a restart of copd
  // is not taken for one of the new registration.
  if (::getrandom(&next_session_, sizeof next_session_, 0) != sizeof next_session_)
    next_session_ = uint32_t(Clock::now().time_since_epoch().count());
  if (next_session_ == 0) next_session_ = 1;
}

int Server::registered_channels() const {
  return static_cast<int>(std::count_if(channels_.begin(), channels_.end(), [](const Channel& c) { return c.registered; }));
}

void Server::log_limited(const std::string& line) {
  const auto now = Clock::now();
  if (now - log_second_ >= std::chrono::seconds(1)) {
    if (log_suppressed_ > 0) log_(fmt::format("({} more such lines suppressed)", log_suppressed_));
    log_second_ = now;
    log_lines_ = 0;
    log_suppressed_ = 0;
  }
  if (log_lines_++ < kLogBurst)
    log_(line);
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
        handle(std::span<const uint8_t>(rx_[size_t(i)].data(), rx_in_[size_t(i)].size), rx_in_[size_t(i)].from);
    }
    controller_.run(deliveries_);
    route(deliveries_);
    flush();
    check_leases();
  }
}

void Server::send_frame(const Frame& f, const sockaddr_in& to) {
  link::encode(f, out_buf_);
  if (!socket_.send_to(out_buf_, to) && config_.verbose)
    log_(fmt::format("send to {} failed: {}", link::to_string(to), std::strerror(errno)));
}

void Server::refuse(const sockaddr_in& to, link::Refusal why, uint16_t channel, const std::string& text) {
  Frame f;
  f.type = FrameType::refused;
  f.channel = channel;
  f.info[0] = static_cast<uint32_t>(why);
  f.text = text;
  send_frame(f, to);
}

void Server::handle(std::span<const uint8_t> bytes, const sockaddr_in& from) {
  auto decoded = link::decode(bytes);
  if (auto* err = std::get_if<link::LinkError>(&decoded)) {
    log_limited(fmt::format("malformed frame from {} ({} bytes): {}", link::to_string(from), bytes.size(), err->detail));
    // Only a registered node is answered: the NACK asks it to resend.
    if (by_address_.find(link::endpoint_key(from)) == by_address_.end()) return;
    Frame nack;
    nack.type = FrameType::frame_nack;
    // The sequence number is where it should be if the header made it.
    if (bytes.size() >= 16) std::memcpy(&nack.seq, bytes.data() + 12, 4);
    nack.info[0] = static_cast<uint32_t>(err->code);
    nack.text = err->detail;
    send_frame(nack, from);
    return;
  }
  const Frame& f = std::get<Frame>(decoded);
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
  const int c = it->second;
  Channel& ch = chan(c);
  // Who sent it: the driver (its secret) or an enrolled task (its token).
  const bool driver = f.token == ch.secret;
  const bool task = !driver && f.tkno < ch.tasks.size() && ch.tasks[f.tkno].enrolled &&
                    ch.tasks[f.tkno].token == f.token;
  switch (f.type) {
    case FrameType::command:
      if (!driver && !task) {
        forged(c, f, f.tkno < ch.tasks.size() ? "token does not match the task's" : "TKNO beyond the channel's tasks");
        return;
      }
      ch.last_heard = Clock::now();
      take_ack(c, f);
      handle_command(c, f, driver);
      break;
    case FrameType::ack:
      if (!driver && !task) {
        forged(c, f, "acknowledgment with a wrong token");
        return;
      }
      ch.last_heard = Clock::now();
      take_ack(c, f);
      break;
    case FrameType::heartbeat: {
      if (!driver) {
        forged(c, f, "heartbeat without the driver secret");
        return;
      }
      ch.last_heard = Clock::now();
      take_ack(c, f);
      Frame ack;
      ack.type = FrameType::heartbeat_ack;
      ack.channel = static_cast<uint16_t>(c);
      ack.seq = f.seq;
      ack.session = ch.session;
      ack.cycles = controller_.cycles();
      send_frame(ack, from);
      break;
    }
    case FrameType::enrol:
    case FrameType::task_end:
      if (!driver) {
        forged(c, f, fmt::format("{} without the driver secret", link::frame_type_name(f.type)));
        return;
      }
      ch.last_heard = Clock::now();
      handle_driver_request(c, f);
      break;
    case FrameType::bye:
      if (!driver) {
        forged(c, f, "bye without the driver secret");
        return;
      }
      drop_channel(c, "its driver left");
      break;
    default:
      log_limited(fmt::format("channel {}: unexpected {} frame ignored", c, link::frame_type_name(f.type)));
  }
}

void Server::forged(int c, const Frame& f, const std::string& why) {
  Channel& ch = chan(c);
  ch.forged++;
  log_limited(fmt::format("channel {}: {} frame seq {} claiming TKNO {} refused ({}; {} so far): NACK protection", c,
                          link::frame_type_name(f.type), f.seq, f.tkno, why, ch.forged));
  if (f.type != FrameType::command || f.entries.empty()) return;
  // Every command of the frame: NACK protection, nothing executed. Outside the
  // sequenced stream (not resent): only the sender of the frame waits for it.
  Frame r;
  r.type = FrameType::reply;
  r.channel = static_cast<uint16_t>(c);
  r.session = ch.session;
  r.cycles = controller_.cycles();
  for (size_t i = 0; i < f.entries.size() && i < size_t(link::kMaxEntries); ++i) {
    wire::Message nack = wire::make(Opcode::NACK, uint16_t(f.tkno & wire::kMaxTkno));
    nack.data1 = wire::nack_data(wire::Error::protection, wire::instruction_opcode(f.entries[i].words[0]));
    r.entries.push_back(link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, uint16_t(i),
                                         controller_.cycles()));
  }
  send_frame(r, ch.addr);
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
    log_(fmt::format("channel {} registered by {} (session {})", c, link::to_string(from), ch.session));
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

void Server::take_ack(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // from before this registration
  if (newer(f.ack, ch.acked) && !newer(f.ack, ch.tx_seq)) {
    ch.acked = f.ack;
    while (!ch.unacked.empty() && !newer(ch.unacked.front().seq, f.ack)) {
      ch.unacked_bytes -= ch.unacked.front().bytes.size();
      ch.unacked.pop_front();
    }
    ch.rto_ms = kRtoMs;
    ch.resend_at = ch.unacked.empty() ? Clock::time_point{} : Clock::now() + std::chrono::milliseconds(ch.rto_ms);
  }
  // The node saw a gap (a frame lost or late): resend from the first
  // unacknowledged frame at once instead of on the timer (go-back-N), at most
  // every few milliseconds.
  if (f.type == FrameType::ack && f.info[0] == 1 && !ch.unacked.empty()) {
    const auto now = Clock::now();
    if (now >= ch.fast_resend_at) {
      ch.resend_at = now;
      ch.fast_resend_at = now + std::chrono::milliseconds(5);
    }
  }
}

void Server::handle_driver_request(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // a request of the previous registration
  if (newer(f.seq, ch.sup_seq)) {
    if (f.tkno >= ch.tasks.size()) {
      log_limited(fmt::format("channel {}: {} of TKNO {} beyond the channel's {} tasks ignored", c,
                              link::frame_type_name(f.type), f.tkno, ch.tasks.size()));
    } else {
      // Enrolling a number ends whoever held it before.
      if (ch.tasks[f.tkno].enrolled || f.type == FrameType::task_end) end_task(c, f.tkno);
      if (f.type == FrameType::enrol) {
        Task& t = ch.tasks[f.tkno];
        t.enrolled = true;
        t.token = f.info64();
      }
      if (config_.verbose)
        log_(fmt::format("channel {}: task {} {}", c, f.tkno, f.type == FrameType::enrol ? "enrolled" : "ended"));
    }
    ch.sup_seq = f.seq;
  }
  if (newer(f.seq, ch.sup_seq)) return;
  Frame ack;
  ack.type = FrameType::sup_ack;
  ack.channel = static_cast<uint16_t>(c);
  ack.tkno = f.tkno;
  ack.seq = f.seq;
  ack.session = ch.session;
  send_frame(ack, ch.addr);
}

void Server::end_task(int c, uint16_t tkno) {
  Channel& ch = chan(c);
  // Results still queued for routing go first: they are not the ended task's.
  route(deliveries_);
  // The controller drops the task's queued commands unanswered (controller.h,
  // end_task): so do their places in the answer order, which is what is left
  // in the fifo (everything answered has been routed just now).
  std::erase_if(ch.fifo, [&](const Origin& o) { return !o.supervisor && o.tkno == tkno; });
  const int failed = controller_.end_task(c, tkno, deliveries_);
  if (failed > 0 || config_.verbose)
    log_(fmt::format("channel {}: task {} ended; {} global operation(s) it took part in failed", c, tkno, failed));
  ch.tasks[tkno] = Task{};
  route_failures();
}

Server::Task* Server::task_of(Channel& ch, const Origin& o) {
  if (o.supervisor) return &ch.driver;
  return o.tkno < ch.tasks.size() ? &ch.tasks[o.tkno] : nullptr;
}

void Server::handle_command(int c, const Frame& f, bool supervisor) {
  Channel& ch = chan(c);
  Task& task = supervisor ? ch.driver : ch.tasks[f.tkno];
  if (task.executed && task.seq == f.seq) {
    // A resend (XMIT): the answers we gave, not a second execution.
    if (config_.verbose) log_(fmt::format("channel {} tkno {}: resend of frame {}", c, f.tkno, f.seq));
    ch.out.insert(ch.out.end(), task.answers.begin(), task.answers.end());
    ch.urgent = true;
    if (task.outstanding > 0) {
      // Not lost, waiting for service: the node must not give up on it.
      Frame busy;
      busy.type = FrameType::reply;
      busy.channel = static_cast<uint16_t>(c);
      busy.session = ch.session;
      busy.cycles = controller_.cycles();
      busy.entries.push_back(link::make_entry(wire::make(Opcode::ACK, uint16_t(f.tkno & wire::kMaxTkno)),
                                              Direction::to_node, EntryKind::answer, f.seq, link::kInProgressIndex,
                                              controller_.cycles()));
      send_frame(busy, ch.addr);
    }
    return;
  }
  if (task.executed && !newer(f.seq, task.seq)) {
    // An older frame, late or duplicated on the way: executed already.
    if (config_.verbose)
      log_(fmt::format("channel {} tkno {}: late frame {} (last {}) ignored", c, f.tkno, f.seq, task.seq));
    return;
  }
  task.executed = true;
  task.seq = f.seq;
  task.answers.clear();
  const wire::Limits limits = config_.controller.limits();
  const Sender sender{supervisor, f.tkno};
  // Does the task wait for a result after this frame (its answers may be held for it)?
  bool waits = false;
  for (const Entry& e : f.entries) {
    const auto op = static_cast<Opcode>(wire::instruction_opcode(e.words[0]));
    waits |= op == Opcode::BENTRY || (wire::is_opcode(uint32_t(op)) && wire::is_reduction(op));
  }
  for (size_t i = 0; i < f.entries.size(); ++i) {
    const Entry& e = f.entries[i];
    const auto index = static_cast<uint16_t>(i);
    auto decoded = wire::decode(e.span(), Direction::to_controller, limits);
    if (auto* m = std::get_if<wire::Message>(&decoded)) {
      const Opcode op = m->ins.opcode;
      // The link itself acknowledges and resends (a frame sent again is the XMIT).
      if (op == Opcode::ACK || op == Opcode::NACK || op == Opcode::XMIT)
        decoded = wire::DecodeError{wire::Error::unknown_opcode,
                                    fmt::format("{} is link-level: the frame is resent instead", wire::opcode_name(op))};
      // The U/S bit is the sender's, not the command's to claim: only the
      // driver (its secret) sends supervisor commands.
      else if (m->ins.supervisor && !supervisor)
        decoded = wire::DecodeError{wire::Error::privilege, "U/S set by a task (only its driver is supervisor)"};
    }
    if (e.kind != EntryKind::command || std::holds_alternative<wire::DecodeError>(decoded)) {
      const wire::DecodeError err = e.kind != EntryKind::command
                                        ? wire::DecodeError{wire::Error::word_count, "entry is not a command"}
                                        : std::get<wire::DecodeError>(decoded);
      log_limited(fmt::format("channel {} tkno {} frame {} command {}: malformed ({}: {}), NACK", c, f.tkno, f.seq, i,
                              wire::error_name(err.code), err.detail));
      wire::Message nack = wire::make(Opcode::NACK, f.tkno);
      nack.data1 = wire::nack_data(err.code, wire::instruction_opcode(e.words[0]));
      Entry a = link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, index, controller_.cycles());
      task.answers.push_back(a);
      ch.out.push_back(a);
      ch.urgent = true;
      continue;
    }
    const wire::Message& m = std::get<wire::Message>(decoded);
    ch.fifo.push_back(Origin{f.tkno, supervisor, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, waits});
    task.outstanding++;
    controller_.receive(c, m, controller_.cycles(), sender, deliveries_);
  }
}

void Server::route(std::vector<Delivery>& deliveries) {
  for (const Delivery& d : deliveries) {
    const Opcode op = d.msg.ins.opcode;
    const bool ack = d.link_level && (op == Opcode::ACK || op == Opcode::NACK) && std::has_single_bit(d.channels);
    if (ack || (!d.link_level && wire::has_answer_data(op) && std::has_single_bit(d.channels))) {
      const int c = std::countr_zero(d.channels) + 1;
      Channel& ch = chan(c);
      if (ack) {
        if (ch.fifo.empty()) {  // cannot happen: every serviced command was queued by us
          log_limited(fmt::format("channel {}: answer with no command waiting for it: dropped", c));
          continue;
        }
        ch.last_answered = ch.fifo.front();
        ch.fifo.pop_front();
        if (Task* t = task_of(ch, ch.last_answered); t && t->executed && t->seq == ch.last_answered.seq &&
                                                     t->outstanding > 0)
          t->outstanding--;
      }
      const Origin& o = ch.last_answered;
      if (!o.frame_waits) {
        ch.urgent = true;
      } else if (ack && op == Opcode::ACK && will_receive_result(c, o) && ch.hold_until == Clock::time_point{}) {
        ch.hold_until = Clock::now() + kHoldAck;
      }
      // Answers carry the asking task's TKNO (the Pid register reads it); the
      // command's own TKNO field is a count for SETTC/SETBM.
      wire::Message m = d.msg;
      m.ins.tkno = o.tkno;
      Entry e = link::make_entry(m, Direction::to_node, EntryKind::answer, o.seq, o.index, d.at_cycle);
      if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq) t->answers.push_back(e);
      if (ch.registered) ch.out.push_back(e);
      continue;
    }
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int c = 1; c <= config_.controller.channels; ++c)
      if (d.to(c) && chan(c).registered) {
        chan(c).out.push_back(e);
        chan(c).urgent = true;
      }
  }
  deliveries.clear();
}

// fail_channel's and end_task's NACKs are for everyone taking part: broadcasts by tag.
void Server::route_failures() {
  for (const Delivery& d : deliveries_) {
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int k = 1; k <= config_.controller.channels; ++k)
      if (d.to(k) && chan(k).registered) {
        chan(k).out.push_back(e);
        chan(k).urgent = true;
      }
  }
  deliveries_.clear();
}

bool Server::will_receive_result(int c, const Origin& o) const {
  if (o.op != Opcode::BENTRY && !wire::is_reduction(o.op)) return false;
  if (o.tag >= config_.controller.gas_words || o.ppn >= controller_.ram().partitions()) return false;
  const TcEntry& tc = controller_.ram().tc(o.ppn, o.tag);
  const BmEntry& bm = controller_.ram().bm(o.ppn, o.tag);
  const uint64_t to = bm.accessed ? bm.mask : (o.op == Opcode::BENTRY ? tc.mask : 0);
  return tc.accessed && (to & channel_bit(c));
}

void Server::flush() {
  const auto now = Clock::now();
  std::vector<link::OutDatagram> batch;
  std::vector<int> overflowed;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) {
      ch.out.clear();
      continue;
    }
    // Go-back-N: nothing acknowledged within the resend timer, everything unacknowledged again.
    if (!ch.unacked.empty() && ch.resend_at != Clock::time_point{} && now >= ch.resend_at) {
      for (const Sent& s : ch.unacked) batch.push_back(link::OutDatagram{s.bytes, &ch.addr});
      if (config_.verbose)
        log_(fmt::format("channel {}: resending {} frame(s) from {}", c, ch.unacked.size(), ch.unacked.front().seq));
      ch.rto_ms = std::min(ch.rto_ms * 2, kRtoMaxMs);
      ch.resend_at = now + std::chrono::milliseconds(ch.rto_ms);
    }
    if (ch.out.empty()) continue;
    if (!ch.urgent && ch.hold_until != Clock::time_point{} && now < ch.hold_until) continue;
    Frame f;
    f.type = FrameType::reply;
    f.channel = static_cast<uint16_t>(c);
    f.session = ch.session;
    f.cycles = controller_.cycles();
    // At most kMaxEntries entries a frame.
    for (size_t at = 0; at < ch.out.size(); at += link::kMaxEntries) {
      const size_t end = std::min(ch.out.size(), at + link::kMaxEntries);
      f.entries.assign(ch.out.begin() + long(at), ch.out.begin() + long(end));
      if (++ch.tx_seq == 0) ch.tx_seq = 1;
      f.seq = ch.tx_seq;
      Sent s{f.seq, {}};
      link::encode(f, s.bytes);
      ch.unacked_bytes += s.bytes.size();
      ch.unacked.push_back(std::move(s));  // a deque: the batch's references stay valid
      batch.push_back(link::OutDatagram{ch.unacked.back().bytes, &ch.addr});
      if (ch.resend_at == Clock::time_point{}) ch.resend_at = now + std::chrono::milliseconds(ch.rto_ms);
    }
    if (ch.unacked.size() > kMaxUnackedFrames || ch.unacked_bytes > kMaxUnackedBytes) overflowed.push_back(c);
    ch.out.clear();
    ch.urgent = false;
    ch.hold_until = Clock::time_point{};
  }
  if (!batch.empty() && link::send_datagrams(socket_.fd(), batch) < 0 && config_.verbose)
    log_(fmt::format("send failed: {}", std::strerror(errno)));
  for (int c : overflowed)
    drop_channel(c, fmt::format("its node acknowledged none of {} reply frames ({} bytes): the resend window is full",
                                chan(c).unacked.size(), chan(c).unacked_bytes));
}

int Server::next_timeout_ms() const {
  const auto now = Clock::now();
  auto until = now + std::chrono::milliseconds(50);
  for (const Channel& ch : channels_) {
    if (!ch.out.empty() && ch.hold_until != Clock::time_point{}) until = std::min(until, ch.hold_until);
    if (!ch.unacked.empty() && ch.resend_at != Clock::time_point{}) until = std::min(until, ch.resend_at);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
  return int(std::clamp<long long>(ms + 1, 0, 50));
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
  route(deliveries_);
  ch = Channel{};
  const int failed = controller_.fail_channel(c, deliveries_);
  log_(fmt::format("channel {} down ({}); {} global operation(s) waiting for it failed with link_down", c, why,
                   failed));
  route_failures();
  flush();
}

}  // namespace cop::controller
