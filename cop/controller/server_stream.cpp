// copd's sequenced reply stream to each channel (cop/link.h, seed 001's
// go-back-N): every reply frame numbered and kept until the node acknowledges
// it, resent on the doubling timer or at once when the node reports a gap;
// answers held a moment so that a barrier's ACK rides with its result.
#include "controller/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace cop::controller {

using link::Frame;
using link::FrameType;

void Server::take_ack(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // from before this registration
  if (link::seq_after(f.ack, ch.acked) && !link::seq_after(f.ack, ch.tx_seq)) {
    ch.acked = f.ack;
    while (!ch.unacked.empty() && !link::seq_after(ch.unacked.front().seq, f.ack)) {
      ch.unacked_bytes -= ch.unacked.front().bytes.size();
      // Its storage kept for the next reply frame (no allocation and page faults per frame).
      if (spare_frames_.size() < kSpareFrames) spare_frames_.push_back(std::move(ch.unacked.front().bytes));
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

void Server::send_replies() {
  const auto now = Clock::now();
  // Kept across rounds (no allocation per round): the round's datagrams, whose I/O thread
  // sends each (io_threads > 1), the channels whose resend window overflowed.
  batch_.clear();
  batch_channel_.clear();
  overflowed_.clear();
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) {
      ch.out.clear();
      continue;
    }
    // Go-back-N: nothing acknowledged within the resend timer, everything unacknowledged again.
    if (!ch.unacked.empty() && ch.resend_at != Clock::time_point{} && now >= ch.resend_at) {
      for (const Sent& s : ch.unacked) {
        batch_.push_back(link::OutDatagram{s.bytes, &ch.addr});
        batch_channel_.push_back(c);
      }
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: resending {} frame(s) from {}", c, ch.unacked.size(), ch.unacked.front().seq));
      ch.rto_ms = std::min(ch.rto_ms * 2, kRtoMaxMs);
      ch.resend_at = now + std::chrono::milliseconds(ch.rto_ms);
    }
    if (ch.out.empty()) continue;
    if (!ch.urgent && ch.hold_until != Clock::time_point{} && now < ch.hold_until) continue;
    send_out(c, ch, now);
    if (ch.unacked.size() > kMaxUnackedFrames || ch.unacked_bytes > kMaxUnackedBytes) overflowed_.push_back(c);
    ch.out.clear();
    ch.urgent = false;
    ch.hold_until = Clock::time_point{};
  }
  if (io_) {
    for (size_t i = 0; i < batch_.size(); ++i) transmit(batch_channel_[i], batch_[i].bytes, *batch_[i].to);
  } else if (!batch_.empty() && link::send_datagrams(socket_.fd(), batch_) < 0 && config_.verbose)
    log_(link::LogLevel::warn, fmt::format("send failed: {}", std::strerror(errno)));
  if (overflowed_.empty()) return;
  std::vector<int> overflowed;  // (drop_channel sends replies again: overflowed_ anew)
  overflowed.swap(overflowed_);
  for (int c : overflowed)
    drop_channel(c, fmt::format("its node acknowledged none of {} reply frames ({} bytes): the resend window is full",
                                chan(c).unacked.size(), chan(c).unacked_bytes));
}

void Server::send_out(int c, Channel& ch, Clock::time_point now) {
  Frame f;
  f.type = FrameType::reply;
  f.channel = static_cast<uint16_t>(c);
  f.session = ch.session;
  f.cycles = controller_.cycles();
  // To a level-1 controller: its last command frame is confirmed in the reply's ack.
  if (config_.controller.level == 2) {
    f.ack = ch.driver.seq;
    ch.confirmed = ch.driver.seq;
  }
  for (size_t s = 0, k = 0; s < ch.out.size();) {
    if (++ch.tx_seq == 0) ch.tx_seq = 1;
    f.seq = ch.tx_seq;
    Sent sent{f.seq, spare_frame()};
    encode_next(ch, f, s, k, sent.bytes);
    ch.unacked_bytes += sent.bytes.size();
    ch.unacked.push_back(std::move(sent));  // a deque: the batch's references stay valid
    batch_.push_back(link::OutDatagram{ch.unacked.back().bytes, &ch.addr});
    batch_channel_.push_back(c);
    if (ch.resend_at == Clock::time_point{}) ch.resend_at = now + std::chrono::milliseconds(ch.rto_ms);
  }
}

void Server::encode_next(const Channel& ch, const Frame& f, size_t& s, size_t& k, std::vector<uint8_t>& bytes) {
  // As much of the rest as the node's decoder takes in one frame (link.h: at most
  // kMaxElements elements, kMaxEntries entries on the wire, kMaxFrameBytes): nearly
  // always everything (a 16 KB burst's root gets its 2048 ACKs and 2048 words as one
  // frame of two compact runs: one MAC, CRC, sendmsg and wake-up). Where that part has
  // more ElementRuns than kMaxEntries, or its encoding more bytes or wire entries than
  // the limits (checked), at most kMaxEntries elements, which always fit.
  for (const size_t room : {size_t(link::kMaxElements), size_t(link::kMaxEntries)}) {
    const bool last_try = room == size_t(link::kMaxEntries);
    size_t s2 = s, k2 = k, elements = 0;
    if (s == 0 && k == 0)
      for (const link::ElementRun& r : ch.out) elements += r.count;
    std::span<const link::ElementRun> part;
    if (s == 0 && k == 0 && elements <= room) {
      part = ch.out;  // all of it, as it is
      s2 = ch.out.size();
    } else {
      next_frame(ch.out, s2, k2, frame_out_, room);
      part = frame_out_;
    }
    if (!last_try && part.size() > size_t(link::kMaxEntries)) continue;
    link::encode(f, part, bytes, &ch.down_key);
    if (last_try || (bytes.size() <= link::kMaxFrameBytes && link::wire_entries(bytes) <= size_t(link::kMaxEntries))) {
      s = s2;
      k = k2;
      return;
    }
  }
}

std::vector<uint8_t> Server::spare_frame() {
  if (spare_frames_.empty()) return {};
  std::vector<uint8_t> b = std::move(spare_frames_.back());
  spare_frames_.pop_back();
  return b;
}

void Server::next_frame(const std::vector<link::ElementRun>& out, size_t& s, size_t& k,
                        std::vector<link::ElementRun>& into, size_t room) {
  into.clear();
  while (room > 0 && s < out.size()) {
    const size_t m = std::min<size_t>(out[s].count - k, room);
    into.push_back(k == 0 && m == out[s].count ? out[s] : out[s].slice(k, m));
    room -= m;
    k += m;
    if (k == out[s].count) ++s, k = 0;
  }
}

int Server::next_timeout_ms() const {
  const auto now = Clock::now();
  auto until = now + std::chrono::milliseconds(50);
  // The deadlock timer of a LOCK held now.
  if (const uint64_t d = controller_.lock_deadline_us(); d != UINT64_MAX)
    until = std::min(until, started_ + std::chrono::microseconds(d));
  for (const Channel& ch : channels_) {
    if (!ch.out.empty() && ch.hold_until != Clock::time_point{}) until = std::min(until, ch.hold_until);
    if (!ch.unacked.empty() && ch.resend_at != Clock::time_point{}) until = std::min(until, ch.resend_at);
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
  const int own = int(std::clamp<long long>(ms + 1, 0, 50));
  return parent_ ? std::min(own, parent_->next_timeout_ms()) : own;
}

}  // namespace cop::controller
