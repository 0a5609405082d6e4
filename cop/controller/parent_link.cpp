// The level-1 copd's link to its level-2 copd (parent_link.h): the node side
// of cop/link.h, driven by copd's loop instead of a waiting task.
#include "controller/parent_link.h"
#include "link/auth.h"

#include <fmt/format.h>
#include <sys/random.h>

#include <algorithm>

#include "link/udp.h"

namespace cop::controller {

using link::Entry;
using link::EntryKind;
using link::Frame;
using link::FrameType;
using wire::Direction;
using wire::Opcode;

namespace {

// entry.seq between levels: bits 0..9 TKNO, bit 15 supervisor, bits 16..23 CHNO, 24..27 the hop kind.
constexpr uint32_t kSupervisorBit = 1u << 15;

uint32_t pack(const Hop& h) {
  return (uint32_t(h.origin.tkno) & wire::kMaxTkno) | (h.origin.supervisor ? kSupervisorBit : 0) |
         (uint32_t(h.origin.chno) << 16) | (uint32_t(h.kind) << 24);
}

Hop unpack(uint32_t seq, uint16_t index) {
  Hop h;
  h.kind = static_cast<Hop::Kind>((seq >> 24) & 0xF);
  h.origin.tkno = static_cast<uint16_t>(seq & wire::kMaxTkno);
  h.origin.supervisor = (seq & kSupervisorBit) != 0;
  h.origin.chno = static_cast<uint8_t>(seq >> 16);
  h.origin.cntno = static_cast<uint8_t>(index);
  return h;
}

bool is_link_level(Opcode op) { return op == Opcode::ACK || op == Opcode::NACK; }

}  // namespace

Entry level_entry(const Delivery& d) {
  const bool command = d.hop.kind == Hop::command;
  const EntryKind kind = command ? EntryKind::command
                                 : (d.hop.kind == Hop::answer ? EntryKind::answer : EntryKind::broadcast);
  return link::make_entry(d.msg, command ? Direction::to_controller : Direction::to_node, kind, pack(d.hop),
                          d.hop.origin.cntno, d.at_cycle);
}

std::optional<Delivery> level_delivery(const Entry& e, bool up, const wire::Limits& limits) {
  const Hop hop = unpack(e.seq, e.index);
  if (hop.kind > Hop::release) return std::nullopt;
  const Direction dir = hop.kind == Hop::command ? Direction::to_controller : Direction::to_node;
  auto decoded = link::decode_entry(e, dir, limits);
  if (!std::holds_alternative<wire::Message>(decoded)) return std::nullopt;
  const wire::Message& m = std::get<wire::Message>(decoded);
  return Delivery{0, m, e.at_cycle, is_link_level(m.ins.opcode), up, hop};
}

ParentLink::ParentLink(const ParentLinkOptions& options, int fd, Log log) : opt_(options), fd_(fd), log_(std::move(log)) {
  down_base_ = link::channel_down_key(opt_.key, uint16_t(opt_.cntno + 1));
  nc_ = link::random_nonce();
}

bool ParentLink::from_parent(const sockaddr_in& a) const { return link::endpoint_key(a) == link::endpoint_key(opt_.parent); }

Frame ParentLink::header(FrameType type) const {
  Frame f;
  f.type = type;
  f.channel = static_cast<uint16_t>(opt_.cntno + 1);
  f.session = session_;
  f.ack = rx_next_ - 1;
  return f;
}

void ParentLink::send(const Frame& f) {
  std::vector<uint8_t> bytes;
  // REGISTER has no key yet; PROVE is MACed with the registration's key; the rest with the driver's.
  link::Key reg{};
  if (f.type == FrameType::prove) reg = link::register_key(opt_.key, f.channel, nc_, ns_);
  link::encode(f, bytes, f.type == FrameType::register_ ? nullptr : f.type == FrameType::prove ? &reg : &driver_key_);
  link::send_datagram(fd_, bytes, &opt_.parent);
  last_sent_ = Clock::now();
  if (f.type != FrameType::register_) ack_due_ = false;
}

void ParentLink::send_up(const Delivery& d) {
  // Unregistered, a command fails (tick) and whatever else had nobody to go to.
  if (!registered() && d.hop.kind != Hop::command) return;
  queue_.push_back(level_entry(d));
  // What this level-1 waits on from above: its combined contributions, and the
  // level-2 masks its nodes set (their result or release comes down).
  const wire::Message& m = d.msg;
  const bool mask = m.ins.opcode == Opcode::SETTC || m.ins.opcode == Opcode::SETBM;
  if (d.hop.kind == Hop::command && m.ins.space == wire::Space::GAS && (mask || d.hop.origin.chno == 0)) {
    const uint32_t n = mask ? uint32_t(m.count()) : 1;
    for (uint32_t i = 0; i < n; ++i) waiting_.insert(Tag{m.ins.ppn, m.addr.msgtag + i});
  }
}

void ParentLink::transmit() {
  frame_.ack = rx_next_ - 1;
  frame_.session = session_;
  link::encode(frame_, bytes_, &driver_key_);
  link::send_datagram(fd_, bytes_, &opt_.parent);
  sent_at_ = last_sent_ = Clock::now();
  ack_due_ = false;
}

void ParentLink::send_ack(bool gap) {
  Frame f = header(FrameType::ack);
  f.info[0] = gap ? 1 : 0;
  send(f);
}

void ParentLink::handle(const Frame& f, std::span<const uint8_t> bytes, const wire::Limits& limits,
                        std::vector<Delivery>& down) {
  if (f.channel != opt_.cntno + 1) return;
  // What the level 2 sends is MACed with the session's down key; CHALLENGE and REFUSED cannot be.
  if (f.type == FrameType::registered) {
    if (f.nonce != nc_ || !link::verify(bytes, link::session_key(down_base_, f.session))) return;
  } else if (f.type != FrameType::challenge && f.type != FrameType::refused) {
    if (!registered() || !link::verify(bytes, down_key_)) return;
  }
  switch (f.type) {
    case FrameType::challenge:
      if (f.nonce == nc_) {
        std::copy(f.info.begin(), f.info.end(), ns_.begin());
        Frame p = header(FrameType::prove);
        p.nonce = nc_;
        p.info = f.info;
        send(p);
      }
      break;
    case FrameType::registered:
      // Requests numbered after the last one the level 2 did in this session; one in
      // flight goes again under the next number (JOIN and TASK_END of a slot are idempotent).
      request_seq_ = f.seq;
      request_sent_ = 0;
      driver_key_ = link::driver_key(opt_.key, f.channel, f.session, nc_);
      down_key_ = link::session_key(down_base_, f.session);
      if (f.session != session_) {
        // A new registration: the level 2's stream to us starts at 1 (the same
        // one again, after we gave up on it: its stream runs on).
        if (f.session != stream_session_) rx_next_ = 1;
        session_ = stream_session_ = f.session;
        new_session_ = true;
        log_(link::LogLevel::info, fmt::format("registered with the level-2 controller {} as channel {} (session {})",
                                               link::to_string(opt_.parent), opt_.cntno + 1, session_));
        if (opt_.on_registered) opt_.on_registered();
      }
      last_heard_ = Clock::now();
      break;
    case FrameType::refused:
      // Only the level 2's (the channel's refusal key), for the session we are in (a
      // REFUSED echoes the refused frame's session): a forged or replayed one is ignored.
      if (!registered() || f.session != session_ || !link::verify(bytes, link::refusal_key(down_base_))) {
        refused_ignored_++;
        break;
      }
      refused_ = true;
      log_(link::LogLevel::warn, fmt::format("the level-2 controller {} refused channel {}: {}",
                                             link::to_string(opt_.parent), opt_.cntno + 1, f.text));
      break;
    case FrameType::heartbeat_ack:
      if (f.session == session_) last_heard_ = Clock::now();
      break;
    case FrameType::sup_ack:
      if (f.session != session_) break;
      last_heard_ = Clock::now();
      if (f.info[3] == link::kRequestAck) take_request_ack(f);
      else if (in_flight_ && f.seq == frame_.seq) in_flight_ = false;
      break;
    case FrameType::frame_nack:
      if (in_flight_ && f.seq == frame_.seq) transmit();
      break;
    case FrameType::reply:
      take_reply(f, limits, down);
      break;
    default:
      break;
  }
}

void ParentLink::take_reply(const Frame& f, const wire::Limits& limits, std::vector<Delivery>& down) {
  if (f.session != session_ || f.seq == 0) return;
  last_heard_ = Clock::now();
  if (in_flight_ && f.ack == frame_.seq) in_flight_ = false;  // the level 2 confirms our frame
  if (f.seq != rx_next_) {
    // go-back-N: a duplicate or a frame after a gap; the level 2 hears where we are.
    send_ack(link::seq_after(f.seq, rx_next_));
    return;
  }
  if (++rx_next_ == 0) rx_next_ = 1;
  if (!ack_due_) ack_due_since_ = Clock::now();
  ack_due_ = true;
  for (const Entry& e : f.entries) {
    auto d = level_delivery(e, false, limits);
    if (!d) {
      log_(link::LogLevel::warn, "an entry from the level-2 controller does not decode: dropped");
      continue;
    }
    if (d->hop.kind != Hop::command && d->hop.kind != Hop::answer) waiting_.erase(Tag{d->msg.ins.ppn, d->msg.addr.msgtag});
    if (d->hop.kind == Hop::answer && d->hop.origin.chno == 0 && d->msg.ins.opcode == Opcode::NACK)
      waiting_.erase(Tag{d->msg.ins.ppn, d->msg.addr.msgtag});
    down.push_back(*d);
  }
}

bool ParentLink::fail(const std::string& why, std::vector<Tag>& lost) {
  log_(link::LogLevel::warn, fmt::format("level-2 controller {} down ({}): {} operation(s) waiting for it fail",
                                         link::to_string(opt_.parent), why, waiting_.size()));
  session_ = 0;
  refused_ = false;
  in_flight_ = false;
  queue_.clear();
  lost.assign(waiting_.begin(), waiting_.end());
  waiting_.clear();
  for (JobRequest& r : requests_) answers_.push_back(JobAnswer{std::move(r), {}, true});
  requests_.clear();
  request_sent_ = 0;
  registering_at_ = Clock::time_point{};
  return true;
}

bool ParentLink::tick(std::vector<Tag>& lost) {
  const auto now = Clock::now();
  if (!registered()) {
    // Until the level 2 takes us: a registration every 200 ms; what would go up fails.
    if (!queue_.empty()) return fail("not registered with it", lost);
    if (now - registering_at_ >= std::chrono::milliseconds(200)) {
      registering_at_ = now;
      Frame r = header(FrameType::register_);
      r.nonce = nc_;
      send(r);
    }
    return false;
  }
  if (refused_) return fail("it no longer knows this controller", lost);
  if (now - last_heard_ > std::chrono::milliseconds(opt_.dead_ms))
    return fail(fmt::format("silent for {} ms", opt_.dead_ms), lost);
  if (in_flight_ && now - sent_at_ > std::chrono::milliseconds(int64_t(opt_.ack_timeout_ms) << std::min(backoff_, 5))) {
    if (++resends_ > opt_.retry_limit) return fail("retry limit", lost);
    backoff_++;
    transmit();
  }
  if (!in_flight_ && !queue_.empty()) {
    frame_ = header(FrameType::command);
    if (++tx_seq_ == 0) tx_seq_ = 1;
    frame_.seq = tx_seq_;
    const size_t n = std::min(queue_.size(), size_t(link::kMaxEntries));
    frame_.entries.assign(queue_.begin(), queue_.begin() + long(n));
    queue_.erase(queue_.begin(), queue_.begin() + long(n));
    in_flight_ = true;
    resends_ = backoff_ = 0;
    transmit();
  }
  send_request();
  // The stream's acknowledgment rides on the next frame up; alone after kAckDelay.
  if (ack_due_ && now - ack_due_since_ >= kAckDelay) send_ack(false);
  // Heartbeats numbered: the level 2 renews the lease only for one after the last (a
  // replayed one does not), and only heartbeats and new frames renew it (not ACKs).
  if (now - last_heartbeat_ > std::chrono::milliseconds(opt_.heartbeat_ms)) {
    Frame hb = header(FrameType::heartbeat);
    if (++heartbeat_seq_ == 0) heartbeat_seq_ = 1;
    hb.seq = heartbeat_seq_;
    send(hb);
    last_heartbeat_ = now;
  }
  return false;
}

int ParentLink::next_timeout_ms() const {
  const auto now = Clock::now();
  auto until = now + std::chrono::milliseconds(opt_.heartbeat_ms);
  if (!registered()) until = std::min(until, registering_at_ + std::chrono::milliseconds(200));
  if (in_flight_) until = std::min(until, sent_at_ + std::chrono::milliseconds(int64_t(opt_.ack_timeout_ms) << std::min(backoff_, 5)));
  if (!queue_.empty()) until = now;
  if (ack_due_) until = std::min(until, ack_due_since_ + kAckDelay);
  if (!requests_.empty()) until = std::min(until, request_sent_ ? request_at_ + kRequestResend : now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
  return int(std::clamp<long long>(ms + 1, 0, 50));
}

void ParentLink::request(JobRequest r) { requests_.push_back(std::move(r)); }

std::vector<JobAnswer> ParentLink::take_answers() { return std::exchange(answers_, {}); }

bool ParentLink::take_new_session() { return std::exchange(new_session_, false); }

void ParentLink::send_request() {
  if (requests_.empty() || !registered()) return;
  const auto now = Clock::now();
  if (request_sent_ != 0 && now - request_at_ < kRequestResend) return;
  if (request_sent_ == 0) {
    if (++request_seq_ == 0) request_seq_ = 1;
    request_sent_ = request_seq_;
  }
  const JobRequest& r = requests_.front();
  Frame f = header(r.type);
  f.seq = request_sent_;
  f.tkno = r.slot;
  if (r.type == FrameType::join) {
    f.info[1] = r.had_epoch;
    f.info[2] = r.uid;
    f.info[3] = r.had_ppn;
    f.text = r.job;
  }
  send(f);
  request_at_ = now;
}

void ParentLink::take_request_ack(const Frame& f) {
  // Only the answer of the request in flight, as the level 2 did it (`ack`: its last one).
  if (requests_.empty() || request_sent_ == 0 || f.seq != request_sent_ || f.ack != request_sent_ ||
      f.tkno != requests_.front().slot)
    return;
  answers_.push_back(JobAnswer{std::move(requests_.front()), {f.info[0], f.info[1], f.info[2]}, false});
  requests_.pop_front();
  request_sent_ = 0;
  send_request();
}

}  // namespace cop::controller
