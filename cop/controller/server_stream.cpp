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
  std::vector<link::OutDatagram> batch;
  std::vector<int> batch_channel;  // whose I/O thread sends each (io_threads > 1)
  std::vector<int> overflowed;
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    if (!ch.registered) {
      ch.out.clear();
      continue;
    }
    // Go-back-N: nothing acknowledged within the resend timer, everything unacknowledged again.
    if (!ch.unacked.empty() && ch.resend_at != Clock::time_point{} && now >= ch.resend_at) {
      for (const Sent& s : ch.unacked) {
        batch.push_back(link::OutDatagram{s.bytes, &ch.addr});
        batch_channel.push_back(c);
      }
      if (config_.verbose)
        log_(link::LogLevel::info, fmt::format("channel {}: resending {} frame(s) from {}", c, ch.unacked.size(), ch.unacked.front().seq));
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
    // To a level-1 controller: its last command frame is confirmed in the reply's ack.
    if (config_.controller.level == 2) {
      f.ack = ch.driver.seq;
      ch.confirmed = ch.driver.seq;
    }
    // At most kMaxEntries elements a frame: nearly always one frame of everything
    // (a 16 KB burst's ACKs or words as one ElementRun each, not an Entry per element).
    size_t elements = 0;
    for (const link::ElementRun& r : ch.out) elements += r.count;
    for (size_t s = 0, k = 0; s < ch.out.size();) {
      const bool whole = elements <= size_t(link::kMaxEntries);
      if (whole) s = ch.out.size();
      else next_frame(ch.out, s, k, frame_out_);
      if (++ch.tx_seq == 0) ch.tx_seq = 1;
      f.seq = ch.tx_seq;
      Sent sent{f.seq, {}};
      link::encode(f, whole ? std::span<const link::ElementRun>(ch.out) : frame_out_, sent.bytes, &ch.down_key);
      ch.unacked_bytes += sent.bytes.size();
      ch.unacked.push_back(std::move(sent));  // a deque: the batch's references stay valid
      batch.push_back(link::OutDatagram{ch.unacked.back().bytes, &ch.addr});
      batch_channel.push_back(c);
      if (ch.resend_at == Clock::time_point{}) ch.resend_at = now + std::chrono::milliseconds(ch.rto_ms);
    }
    if (ch.unacked.size() > kMaxUnackedFrames || ch.unacked_bytes > kMaxUnackedBytes) overflowed.push_back(c);
    ch.out.clear();
    ch.urgent = false;
    ch.hold_until = Clock::time_point{};
  }
  if (io_) {
    for (size_t i = 0; i < batch.size(); ++i) transmit(batch_channel[i], batch[i].bytes, *batch[i].to);
  } else if (!batch.empty() && link::send_datagrams(socket_.fd(), batch) < 0 && config_.verbose)
    log_(link::LogLevel::warn, fmt::format("send failed: {}", std::strerror(errno)));
  for (int c : overflowed)
    drop_channel(c, fmt::format("its node acknowledged none of {} reply frames ({} bytes): the resend window is full",
                                chan(c).unacked.size(), chan(c).unacked_bytes));
}

void Server::next_frame(const std::vector<link::ElementRun>& out, size_t& s, size_t& k,
                        std::vector<link::ElementRun>& into) {
  into.clear();
  for (size_t room = link::kMaxEntries; room > 0 && s < out.size();) {
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
