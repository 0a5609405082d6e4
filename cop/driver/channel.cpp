// The task side of a channel (channel.h): commands sent, the link's acknowledgments and
// resends, waiting on the channel; what arrives is matched or filed in channel_entries.cpp.
#include "driver/channel.h"
#include "link/auth.h"
#include "link/udp.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace cop::driver {

using link::Entry;
using link::EntryKind;
using link::Frame;
using link::FrameType;
using wire::Direction;
using wire::Error;
using wire::Opcode;

namespace {

// Answers a command gets: its ACK/NACK, and the data of RSRAM, RMW and PROBE.
int answers_per_command(Opcode op) { return wire::has_answer_data(op) ? 2 : 1; }

}  // namespace

ChannelClient::ChannelClient(Window* window, int udp_fd, uint16_t tkno, const link::Key& task_key,
                             const link::Key& down_key, LinkOptions options)
    : w_(window), fd_(udp_fd), tkno_(tkno), task_key_(task_key), down_base_(down_key), opt_(options) {
  // The wait slice (copdrv sets the same on the channel socket; harmless twice).
  const timeval slice{0, kSliceMs * 1000};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof slice);
}

const link::Key& ChannelClient::up_key(uint32_t session) {
  // copdrv's reader: its driver key is set for one session; in any other its frames fail the MAC.
  if (!driver_key_ && (!have_up_ || up_session_ != session)) {
    up_key_ = link::session_key(task_key_, session);
    up_session_ = session;
    have_up_ = true;
  }
  return up_key_;
}

const link::Key& ChannelClient::down_key(uint32_t session) {
  if (!have_down_ || down_session_ != session) {
    down_key_ = link::session_key(down_base_, session);
    down_session_ = session;
    have_down_ = true;
  }
  return down_key_;
}

Error ChannelClient::csr_error() const {
  if (!w_->csr_err.load(std::memory_order_acquire)) return Error::none;
  return static_cast<Error>(w_->csr_err_code.load());
}

bool ChannelClient::driver_alive() const {
  if (driver_conn_ >= 0) {
    // copdrv's end of the connection closes when it exits (before it is even a
    // zombie, which kill(pid, 0) would still find).
    pollfd p{driver_conn_, POLLRDHUP, 0};
    return ::poll(&p, 1, 0) == 0;
  }
  return ::kill(w_->driver_pid, 0) == 0 || errno == EPERM;
}

bool ChannelClient::nothing_outstanding() const {
  return answers_missing_ == 0 && (results_missing_ == 0 || result_error_ != Error::none);
}

Error ChannelClient::transmit() {
  // Every (re)transmission acknowledges what the channel has received by now: the frame
  // encoded by send_only is sealed again (its MAC and CRC) where that has changed since.
  const uint32_t ack = w_->rx_next.load(std::memory_order_acquire) - 1;
  const uint32_t session = w_->rx_session.load(std::memory_order_relaxed);
  if (ack != frame_.ack || session != frame_.session) {
    frame_.ack = ack;
    frame_.session = session;
    link::reseal(frame_bytes_, ack, session, &up_key(session));
  }
  w_->ack_sent.store(frame_.ack, std::memory_order_relaxed);
  if (!link::send_datagram(fd_, frame_bytes_)) {
    if (errno == ECONNREFUSED) return Error::link_down;
    // A full send buffer and the like: the transmit timer resends.
  }
  sent_at_ns_ = monotonic_ns();
  return Error::none;
}

void ChannelClient::send_ack(bool gap) {
  Frame f;
  f.type = FrameType::ack;
  f.channel = w_->channel;
  f.tkno = tkno_;
  f.session = w_->rx_session.load(std::memory_order_relaxed);
  f.ack = w_->rx_next.load(std::memory_order_relaxed) - 1;
  f.info[0] = gap ? 1 : 0;
  std::vector<uint8_t> bytes;
  link::encode(f, bytes, &up_key(f.session));
  w_->ack_sent.store(f.ack, std::memory_order_relaxed);
  link::send_datagram(fd_, bytes);
}

Error ChannelClient::send_only(std::span<const wire::Message> commands) {
  if (answers_missing_ > 0) {
    if (Error e = wait_for_outstanding(); e != Error::none) return e;
  }
  if (Error e = csr_error(); e != Error::none) return e;
  // The driver gone is the device gone, even though the socket still works:
  // before every frame when the task has its connection to copdrv (one poll()),
  // else by its pid every 20 ms at most.
  if (const uint64_t now = monotonic_ns(); driver_conn_ >= 0 || now - driver_checked_ns_ > 20000000ull) {
    driver_checked_ns_ = now;
    if (!driver_alive()) {
      csr_set_error(*w_, Error::link_down);
      return Error::link_down;
    }
  }
  if (commands.size() > size_t(link::kMaxElements)) return Error::word_count;
  if (++seq_ == 0) seq_ = 1;
  Frame& f = frame_;
  f.type = FrameType::command;
  f.channel = w_->channel;
  f.tkno = tkno_;
  f.seq = seq_;
  // When this node starts writing the frame, in modelled time: copd makes its
  // commands ready t_CN-COP later (cop/link.h).
  f.cycles = w_->result_cycles.load(std::memory_order_relaxed);
  f.entries.clear();
  f.ack = w_->rx_next.load(std::memory_order_acquire) - 1;
  f.session = w_->rx_session.load(std::memory_order_relaxed);
  // Encoded once, from the commands (link.h encode_commands); a resend only seals it again.
  link::encode_commands(f, commands, frame_bytes_, &up_key(f.session));
  sent_ops_.resize(commands.size());
  answers_missing_ = 0;
  // A burst's elements share their opcode: its answer count is looked up once per run of it.
  Opcode last = commands.empty() ? Opcode::ACK : commands[0].ins.opcode;
  size_t per = size_t(answers_per_command(last));
  for (size_t i = 0; i < commands.size(); ++i) {
    const Opcode op = commands[i].ins.opcode;
    if (op != last) last = op, per = size_t(answers_per_command(op));
    sent_ops_[i] = op;
    answers_missing_ += per;
  }
  // Sized, not cleared: each answer is written whole when its first part comes (take_answer),
  // and finish() defaults those that never came.
  pending_answers_.resize(commands.size());
  answers_ = &pending_answers_;
  answer_state_.assign(commands.size(), 0);
  resends_ = 0;
  backoff_ = 0;
  first_sent_ns_ = monotonic_ns();
  wait_session_ = w_->rx_session.load(std::memory_order_acquire);
  if (frame_bytes_.size() > link::kMaxFrameBytes) {
    // Never a datagram over the frame limit (commands that do not pack into compact
    // runs): refused before it is sent, nothing of it executed.
    answers_missing_ = 0;
    return Error::word_count;
  }
  return transmit();
}

Error ChannelClient::finish(std::vector<Answer>& answers) {
  const Error e = wait_for_outstanding();
  // An answer that never came (the wait failed) is the default one, never an earlier frame's.
  for (size_t i = 0; i < answer_state_.size() && i < pending_answers_.size(); ++i)
    if (answer_state_[i] == 0) pending_answers_[i] = Answer{};
  // Every answer in: nothing writes pending_answers_ again before the next frame assigns
  // it (take_answer takes nothing while none is missing), so it is handed over, not copied,
  // to a caller whose vector has the room (libcop's array calls keep theirs, lib/library.h):
  // the storage swapped in is then as large. A smaller one (a barrier's few answers) gets a
  // copy, and the large storage stays here: handed over, it was freed with the caller's
  // vector and the next 16 KB frame allocated and faulted in 134 KB anew (issue 36).
  if (answers_missing_ == 0 && answers.capacity() >= pending_answers_.size()) answers.swap(pending_answers_);
  else answers.assign(pending_answers_.begin(), pending_answers_.end());
  return e;
}

Error ChannelClient::exchange(std::span<const wire::Message> commands, std::vector<Answer>& answers) {
  if (Error e = send_only(commands); e != Error::none) return e;
  return finish(answers);
}

Error ChannelClient::await(const Wanted& w, std::span<wire::Message> out, uint64_t* at_cycle) {
  wanted_ = &w;
  results_ = out;
  have_result_.assign(w.count, 0);
  results_missing_ = w.count;
  result_error_ = Error::none;
  result_cycle_ = 0;
  mismatched_op_ = 0;
  wait_start_ns_ = monotonic_ns();
  if (answers_missing_ == 0) wait_session_ = w_->rx_session.load(std::memory_order_acquire);
  take_from_buffer();
  Error e = wait_for_outstanding();
  if (e == Error::none) e = result_error_;
  // Another call's operation met here is consumed whole: none of its words reaches the next receive.
  if (mismatched_op_ != 0) forget_operation(*w_, ppn_, mismatched_op_);
  wanted_ = nullptr;
  results_missing_ = 0;
  if (at_cycle) *at_cycle = result_cycle_;
  return e;
}

long ChannelClient::receive(int timeout_ms) {
  if (rx_.size() < link::kMaxFrameBytes + 64) rx_.resize(link::kMaxFrameBytes + 64);
  // Waiting: poll for opt_.poll_us (the Data Ready strobe), then one blocking recv: the
  // driver set the socket's receive timeout to the wait slice (kSliceMs).
  ssize_t n = link::recv_datagram(fd_, rx_, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && timeout_ms > 0) {
    if (opt_.poll_us > 0) n = link::poll_recv(fd_, rx_, opt_.poll_us);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) n = link::recv_datagram(fd_, rx_, 0);
  }
  if (n < 0) return errno == ECONNREFUSED ? -1 : 0;  // ECONNREFUSED: nothing listens where copd was
  handle_datagram(std::span<const uint8_t>(rx_.data(), size_t(n)));
  return n;
}

void ChannelClient::handle_datagram(std::span<const uint8_t> bytes) {
  // Decoded as runs (link.h decode_runs) into storage kept (as rx_, used under the
  // channel lock): a reply of a 16 KB burst is one run of 2048 elements, taken whole.
  if (link::decode_runs(bytes, rx_runs_)) return;  // damaged on the way: the timer resends
  const Frame& f = rx_runs_.frame;
  // Who sent it: copd, if the session's down key verifies it (cop/link.h
  // "Keys"). CHALLENGE cannot be MACed: a challenge is only filed for the driver
  // (which proves the key). REFUSED has its own key and freshness (take_refusal).
  if (f.type == FrameType::refused) {
    take_refusal(f, bytes);
    return;
  }
  if (f.type == FrameType::challenge) {
    if (f.nonce == w_->register_nc.load(std::memory_order_relaxed)) {
      for (size_t i = 0; i < 4; ++i) w_->challenge_ns[i].store(f.info[i], std::memory_order_relaxed);
      w_->challenge_seq.fetch_add(1, std::memory_order_release);
    }
    return;
  }
  if (f.type == FrameType::registered) {
    if (f.nonce != w_->register_nc.load(std::memory_order_relaxed) || !link::verify(bytes, down_key(f.session))) return;
  } else if (!link::verify(bytes, down_key(w_->rx_session.load(std::memory_order_relaxed)))) {
    return;  // not copd's, or of another session
  }
  w_->last_heard_ns.store(monotonic_ns(), std::memory_order_relaxed);
  switch (f.type) {
    case FrameType::reply:
      take_reply(rx_runs_);
      break;
    case FrameType::sup_ack:
      if (f.session == w_->rx_session.load() && link::seq_after(f.seq, w_->sup_acked.load())) {
        // A JOIN's answer (its job's partition and that partition's epoch) before the
        // seq that confirms it.
        if (f.info[0] || f.info[1]) {
          w_->sup_epoch.store(uint64_t{f.seq} << 32 | f.info[2]);
          w_->sup_answer.store(uint64_t{f.seq} << 32 | (f.info[0] & 0xFFFFu) << 16 | (f.info[1] & 0xFFFFu));
        }
        w_->sup_acked.store(f.seq);
      }
      break;
    case FrameType::frame_nack:
      if (f.seq == seq_ && answers_missing_ > 0 && ++resends_ <= opt_.retry_limit) {
        w_->resends.fetch_add(1, std::memory_order_relaxed);
        transmit();
      }
      break;
    case FrameType::registered:
      // copd's epoch: another one is another life of copd (its log line is copdrv's).
      w_->copd_epoch.store(f.ack, std::memory_order_relaxed);
      if (f.session != w_->rx_session.load()) {
        // A new registration (copd restarted): its stream starts at 1.
        w_->rx_next.store(1);
        w_->ack_sent.store(0);
        w_->sup_acked.store(0);
        w_->rx_session.store(f.session, std::memory_order_release);
      }
      csr_channel_up(*w_);
      break;
    default:
      break;
  }
}

void ChannelClient::take_refusal(const Frame& f, std::span<const uint8_t> bytes) {
  // copd refuses a frame of a session it does not know (it restarted, or the channel's
  // lease ran out): the refusal echoes that session. One under the channel's refusal
  // key for the session the channel is in is copd's word that it may have forgotten
  // the channel: copdrv proves its registration again (the holder keeps its session
  // when copd still knows it; a new session fails what waited on the old one). Any
  // other (no MAC, another key, an old session: forged or replayed) changes nothing.
  if (!have_refusal_key_) {
    refusal_key_ = link::refusal_key(down_base_);
    have_refusal_key_ = true;
  }
  const uint32_t session = w_->rx_session.load(std::memory_order_relaxed);
  if (session == 0 || f.session != session || !link::verify(bytes, refusal_key_)) {
    w_->refused_ignored.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  w_->reprove.store(1, std::memory_order_release);
}

void ChannelClient::take_reply(const link::FrameRuns& runs) {
  const Frame& f = runs.frame;
  if (f.session != w_->rx_session.load(std::memory_order_relaxed)) return;  // an earlier registration's
  to_file_.clear();
  if (f.seq == 0) {
    // Outside the stream: copd's NACK protection for a frame it did not accept,
    // and its word that a resent frame waits for service (filed for its task).
    for (const link::EntryRun& r : runs.runs)
      for (size_t k = 0; k < r.count; ++k) {
        const Entry e = r.element(k);
        auto decoded = link::decode_entry(e, Direction::to_node);
        const Received x{e.kind, wire::instruction_tkno(e.words[0]), e.index, e.seq, e.at_cycle,
                         std::get_if<wire::Message>(&decoded)};
        if (!take_answer(x) && e.index == link::kInProgressIndex) to_file_.push_back(e);
      }
    if (!to_file_.empty()) file_out_of_context(to_file_);
    return;
  }
  const uint32_t expected = w_->rx_next.load(std::memory_order_relaxed);
  if (f.seq != expected) {
    // go-back-N: a duplicate (copd missed our acknowledgment) or a frame after
    // a gap (one was lost or is late) is dropped; copd hears where we are.
    (link::seq_after(f.seq, expected) ? w_->rx_gaps : w_->rx_duplicates).fetch_add(1, std::memory_order_relaxed);
    const uint64_t now = monotonic_ns();
    if (now - w_->gap_reported_ns.load(std::memory_order_relaxed) > 2000000ull) {
      w_->gap_reported_ns.store(now, std::memory_order_relaxed);
      send_ack(link::seq_after(f.seq, expected));
    }
    return;
  }
  uint32_t next = expected + 1;
  if (next == 0) next = 1;
  w_->rx_next.store(next, std::memory_order_release);
  for (const link::EntryRun& r : runs.runs) take_run(r);
  // What is not this task's now, filed in arrival order under one lock (matching never
  // reads the buffer, so filing after the frame's elements are matched changes nothing).
  if (!to_file_.empty()) file_out_of_context(to_file_);
}

bool ChannelClient::drain(int timeout_ms) {
  if (!try_lock_robust(&w_->channel_lock)) return false;
  for (int t = timeout_ms; receive(t) > 0; t = 0) {
  }
  pthread_mutex_unlock(&w_->channel_lock);
  w_->event.fetch_add(1, std::memory_order_release);
  if (w_->waiters.load()) futex_wake_all(&w_->event);
  return true;
}

Error ChannelClient::wait_for_outstanding() {
  uint64_t last_alive_check = 0;
  while (!nothing_outstanding()) {
    if (Error e = csr_error(); e != Error::none) return e;
    // copd registered the channel anew (it restarted, or the lease ran out): what the
    // wait is for was of the old session and will not come. The frame is given up (a
    // later call starts clean; copd refuses the old session's frame anyway).
    if (w_->rx_session.load(std::memory_order_acquire) != wait_session_) {
      answers_missing_ = 0;
      return Error::link_down;
    }
    const uint32_t seen = w_->event.load(std::memory_order_acquire);
    take_from_buffer();
    if (nothing_outstanding()) break;
    const uint64_t now = monotonic_ns();
    const uint64_t ms = 1000000ull;
    const uint64_t timer_ms = uint64_t(opt_.ack_timeout_ms) << std::min(backoff_, 5);
    if (answers_missing_ > 0 && now - sent_at_ns_ > timer_ms * ms) {
      if (++resends_ > opt_.retry_limit) return Error::retry_limit;
      backoff_++;
      w_->resends.fetch_add(1, std::memory_order_relaxed);
      if (Error e = transmit(); e != Error::none) return e;
    }
    if (now - last_alive_check > 20 * ms) {
      last_alive_check = now;
      if (!driver_alive()) {
        csr_set_error(*w_, Error::link_down);
        return Error::link_down;
      }
      const uint64_t since = std::max(w_->last_heard_ns.load(), std::max(wait_start_ns_, sent_at_ns_));
      if (now > since && now - since > uint64_t(opt_.dead_ms) * ms) {
        csr_set_error(*w_, Error::link_down);
        return Error::link_down;
      }
      if (opt_.wait_timeout_ms > 0 && results_missing_ > 0 &&
          now - wait_start_ns_ > uint64_t(opt_.wait_timeout_ms) * ms)
        return Error::timeout;
      // Answers copd keeps saying are "in progress" (the commands wait for a LOCK
      // or an operation in progress elsewhere) restart the retry count, not this
      // bound: the frame is given up (its late answers are dropped as an older
      // frame's) and the next one starts clean.
      if (opt_.wait_timeout_ms > 0 && answers_missing_ > 0 &&
          now - first_sent_ns_ > uint64_t(opt_.wait_timeout_ms) * ms) {
        answers_missing_ = 0;
        return Error::timeout;
      }
    }
    if (!try_lock_robust(&w_->channel_lock)) {
      w_->waiters.fetch_add(1);
      futex_wait(&w_->event, seen, kSliceMs);
      w_->waiters.fetch_sub(1);
      continue;
    }
    w_->pid_register.store(tkno_, std::memory_order_relaxed);
    // Whoever held the channel before us may have filed results since our last look at
    // the buffer: they arrived before anything we read now, so they are taken first.
    // Else a later broadcast on the same tag read here would overtake an earlier one
    // waiting in the buffer (a broadcast loop's receiver got round r+1 for round r).
    take_from_buffer();
    Error failed = Error::none;
    for (int timeout = nothing_outstanding() ? -1 : kSliceMs; timeout >= 0; timeout = 0) {
      const long got = receive(timeout);
      if (got < 0) {
        failed = Error::link_down;
        break;
      }
      if (got == 0 || nothing_outstanding()) break;
    }
    w_->pid_register.store(0, std::memory_order_relaxed);
    pthread_mutex_unlock(&w_->channel_lock);
    w_->event.fetch_add(1, std::memory_order_release);
    if (w_->waiters.load()) futex_wake_all(&w_->event);
    if (failed != Error::none) {
      csr_set_error(*w_, failed);
      return failed;
    }
  }
  return Error::none;
}

}  // namespace cop::driver
