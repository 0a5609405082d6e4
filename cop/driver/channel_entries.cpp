// What arrives on a channel (channel.h): answers and results matched to the task that
// waits for them, the rest filed in the window's out-of-context buffer for the task
// they are for (seed 000 ch. V), and results a voided operation left there dropped.
#include "driver/channel.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace cop::driver {

using link::Entry;
using link::EntryKind;
using wire::Direction;
using wire::Error;
using wire::Opcode;

namespace {

bool result_matches(const Wanted& w, const wire::Message& m) {
  switch (w.kind) {
    case ResultKind::barrier:
      return m.ins.opcode == Opcode::BENTRY;
    case ResultKind::reduction:
      return wire::is_reduction(m.ins.opcode);
    case ResultKind::bcast:
      return (m.ins.opcode == Opcode::BCAST32 || m.ins.opcode == Opcode::BCAST64) &&
             (w.src_chno == 0 || m.addr.chno == w.src_chno);
  }
  return false;
}

bool forgotten(const Window& w, uint8_t ppn, uint64_t op_id) {
  if (op_id == 0) return false;
  for (int i = 0; i < kForgottenOperations; ++i)
    if (w.forgotten_ops[i] == op_id && w.forgotten_ppn[i] == ppn) return true;
  return false;
}

}  // namespace

IdentityFate identity_fate(uint64_t mine, uint64_t theirs, bool nack) {
  if (mine == 0 || theirs == mine) return IdentityFate::take;
  // A NACK that names no operation (a mask voided before any contribution came) ends
  // the wait with its error, as before identities: an error, never a value.
  if (theirs == 0) return nack ? IdentityFate::take : IdentityFate::later;
  // Another sequence of calls on the word (another group's members, job, kind): not ours.
  if (wire::identity_site(theirs) != wire::identity_site(mine)) return IdentityFate::later;
  const uint32_t g = wire::identity_generation(mine), t = wire::identity_generation(theirs);
  if (t == g) return IdentityFate::mismatch;  // this round of this call, another count, datatype or function
  return link::seq_after(g, t) ? IdentityFate::drop : IdentityFate::later;
}

void forget_operation(Window& w, uint8_t ppn, uint64_t op_id) {
  if (op_id == 0) return;
  lock_robust(&w.buffer_lock);
  for (uint32_t i = 0; i < w.ooc_high; ++i) {
    OutOfContext& o = w.ooc[i];
    if (!o.used || o.op_id != op_id) continue;
    // Another job's result of the same identity (identities are per job, but hashed) is not this one.
    if (static_cast<EntryKind>(o.kind) == EntryKind::broadcast && wire::instruction_ppn(o.words[0]) != ppn) continue;
    o.used = 0;
    w.ooc_count--;
  }
  if (!forgotten(w, ppn, op_id)) {
    w.forgotten_ops[w.forgotten_next % kForgottenOperations] = op_id;
    w.forgotten_ppn[w.forgotten_next % kForgottenOperations] = ppn;
    w.forgotten_next++;
  }
  pthread_mutex_unlock(&w.buffer_lock);
}

void forget_results(Window& w, uint8_t ppn, uint32_t first, uint32_t count, bool broadcast_data, uint64_t keep) {
  if (__atomic_load_n(&w.ooc_count, __ATOMIC_ACQUIRE) == 0) return;
  lock_robust(&w.buffer_lock);
  for (uint32_t i = 0; i < w.ooc_high; ++i) {
    OutOfContext& o = w.ooc[i];
    if (!o.used || static_cast<EntryKind>(o.kind) != EntryKind::broadcast || o.nwords < 2) continue;
    // Another job's result on the same GAS words (its own partition, seed 000 ch. V): its
    // task still waits for it, whatever this partition's words need.
    if (wire::instruction_ppn(o.words[0]) != ppn) continue;
    const uint32_t tag = wire::address_msgtag(o.words[1]);
    if (tag < first || tag - first >= count) continue;
    const auto op = static_cast<Opcode>(wire::instruction_opcode(o.words[0]));
    if (!broadcast_data && (op == Opcode::BCAST32 || op == Opcode::BCAST64)) continue;
    if (keep != 0 && wire::identity_site(o.op_id) == wire::identity_site(keep) && o.op_id != 0) {
      const IdentityFate f = identity_fate(keep, o.op_id, op == Opcode::NACK);
      if (f == IdentityFate::take || f == IdentityFate::later) continue;
    }
    o.used = 0;
    w.ooc_count--;
  }
  pthread_mutex_unlock(&w.buffer_lock);
}

bool ChannelClient::take_answer(const Received& e) {
  if (e.kind != EntryKind::answer || e.tkno != tkno_) return false;
  // Ours by the Pid register. copd saying our resent frame waits for service:
  // not lost, so the retry count starts again (the timer keeps its backoff).
  if (e.index == link::kInProgressIndex) {
    if (e.seq == seq_ && answers_missing_ > 0) resends_ = 0;
    return true;
  }
  // An answer to an older frame (a resend's duplicate) is consumed and dropped.
  if (e.seq != seq_ || e.index >= sent_ops_.size() || answers_missing_ == 0) return true;
  if (!e.msg) return true;
  const wire::Message& m = *e.msg;
  Answer& a = (*answers_)[e.index];
  uint8_t& state = answer_state_[e.index];
  const bool ack = m.ins.opcode == Opcode::ACK || m.ins.opcode == Opcode::NACK;
  if (state & (ack ? kAckIn : kDataIn)) return true;
  if (state == 0) a = Answer{};  // its first part: the answer written whole (not cleared per frame)
  state |= ack ? kAckIn : kDataIn;
  answers_missing_--;
  if (ack) {
    a.at_cycle = e.at_cycle;
    if (m.ins.opcode == Opcode::NACK) {
      a.error = wire::nack_error(m.data1);
      // A refused contribution means the awaited result will not come. (A mask
      // in use only says a peer channel initialised it first.)
      if (wanted_ && a.error != Error::mask_in_use) result_error_ = a.error;
      // No data follows a refused command.
      if (wire::has_answer_data(sent_ops_[e.index]) && !(state & kDataIn)) {
        state |= kDataIn;
        answers_missing_--;
      }
    }
  } else {
    a.has_data = true;
    a.data = m;
    a.at_cycle = std::max(a.at_cycle, e.at_cycle);
  }
  note_answer_cycle(e.at_cycle);
  return true;
}

void ChannelClient::note_answer_cycle(uint64_t at_cycle) {
  w_->modelled_cycles.store(std::max(w_->modelled_cycles.load(std::memory_order_relaxed), at_cycle),
                            std::memory_order_relaxed);
}

void ChannelClient::note_result_cycle(uint64_t at_cycle) {
  result_cycle_ = std::max(result_cycle_, at_cycle);
  note_answer_cycle(at_cycle);
  w_->result_cycles.store(std::max(w_->result_cycles.load(std::memory_order_relaxed), at_cycle),
                          std::memory_order_relaxed);
}

bool ChannelClient::take_result(const Received& e) {
  if (e.kind != EntryKind::broadcast || !wanted_ || results_missing_ == 0 || !e.msg) return false;
  const wire::Message& m = *e.msg;
  const uint32_t tag = m.addr.msgtag;
  if (tag < wanted_->tag || tag >= wanted_->tag + wanted_->count) return false;
  if (m.ins.ppn != ppn_) return false;  // another job's operation on the same tag
  const bool nack = m.ins.opcode == Opcode::NACK;
  if (!nack && !result_matches(*wanted_, m)) return false;
  // Only the call's own operation (its identity): another round's is dropped or left for
  // its call, the same round of another call ends the wait (channel.h, Wanted::op_id).
  switch (identity_fate(wanted_->op_id, m.op_id, nack)) {
    case IdentityFate::take:
      break;
    case IdentityFate::later:
      return false;
    case IdentityFate::drop:
      return true;
    case IdentityFate::mismatch:
      result_error_ = Error::mismatch;
      mismatched_op_ = m.op_id;
      return true;
  }
  if (nack) {
    result_error_ = wire::nack_error(m.data1);
    return true;
  }
  const size_t i = tag - wanted_->tag;
  if (have_result_[i]) return false;  // a later operation's: leave it for then
  have_result_[i] = 1;
  results_[i] = m;
  results_missing_--;
  note_result_cycle(e.at_cycle);
  return true;
}

namespace {
const Answer kNoAnswer{};
static_assert(std::is_trivially_copyable_v<Answer> && std::is_trivially_copyable_v<wire::Message>);
}  // namespace

bool ChannelClient::take_answer_run(const link::EntryRun& r, const wire::Message& first) {
  // copd's ACKs to a burst of the frame in flight, one per command, index one more each
  // (anything else, an older frame's included, goes element by element).
  if (r.first.kind != EntryKind::answer || wire::instruction_tkno(r.first.words[0]) != tkno_ ||
      first.ins.opcode != Opcode::ACK || !(r.flags & link::kRunIndexStep) || r.first.seq != seq_ ||
      answers_missing_ == 0 || size_t(r.first.index) + r.count > sent_ops_.size())
    return false;
  // Through locals: a store through answer_state_'s bytes may alias any member, which
  // the loop would otherwise load again for every element (issue 36).
  Answer* const answers = answers_->data() + r.first.index;
  uint8_t* const state = answer_state_.data() + r.first.index;
  size_t missing = answers_missing_;
  uint64_t last = 0;
  bool took = false;
  // Until none is missing: what follows could only be duplicates.
  for (size_t k = 0; k < r.count && missing > 0; ++k) {
    if (state[k] & kAckIn) continue;  // a duplicate (a resend's answers)
    const uint64_t at = r.first.at_cycle + uint64_t(k) * r.step;
    if (state[k] == 0) std::memcpy(&answers[k], &kNoAnswer, sizeof(Answer));  // whole, as take_answer's Answer{}
    answers[k].at_cycle = at;
    state[k] |= kAckIn;
    --missing;
    last = at, took = true;  // the cycles rise along the run: the last taken is their maximum
  }
  answers_missing_ = missing;
  if (took) note_answer_cycle(last);
  return true;
}

bool ChannelClient::take_result_run(const link::EntryRun& r, const wire::Message& first) {
  // Results of the awaited kind, of this partition, MSGTAG one more each (a NACK run or
  // one of a single tag goes element by element).
  if (r.first.kind != EntryKind::broadcast || !wanted_ || results_missing_ == 0 || first.ins.opcode == Opcode::NACK ||
      !(r.flags & link::kRunAddressStep) || first.ins.ppn != ppn_ || !result_matches(*wanted_, first))
    return false;
  // The run's elements in the awaited tags: [from, to); those before and after are filed.
  const uint64_t tag0 = first.addr.msgtag, lo = wanted_->tag, hi = uint64_t(wanted_->tag) + wanted_->count;
  const size_t from = size_t(std::min<uint64_t>(lo > tag0 ? lo - tag0 : 0, r.count));
  const size_t to = size_t(std::clamp<uint64_t>(hi > tag0 ? hi - tag0 : 0, from, r.count));
  for (size_t k = 0; k < from; ++k) to_file_.push_back(r.element(k));
  // The identity is the run's: decided once (take_result's cases).
  const IdentityFate fate = from < to ? identity_fate(wanted_->op_id, first.op_id, false) : IdentityFate::take;
  if (fate == IdentityFate::mismatch) result_error_ = Error::mismatch, mismatched_op_ = first.op_id;
  // A run dropped (an older round's) or of a mismatched call: [from, to) consumed, none written.
  if (fate != IdentityFate::drop && fate != IdentityFate::mismatch) take_result_range(r, first, from, to, fate);
  for (size_t k = to; k < r.count; ++k) to_file_.push_back(r.element(k));
  return true;
}

void ChannelClient::take_result_range(const link::EntryRun& r, const wire::Message& first, size_t from, size_t to,
                                      IdentityFate fate) {
  // Through locals: a store through have_result_'s bytes may alias any member, and one
  // through results_ the run's first message, which the loop would otherwise load again
  // for every element (issue 36).
  const wire::Message proto = first;
  uint8_t* const have = have_result_.data();
  wire::Message* const out = results_.data();
  const uint64_t tag0 = proto.addr.msgtag, lo = wanted_->tag;
  const size_t each = r.data_words();
  size_t missing = results_missing_;
  uint64_t last = 0;
  bool took = false;
  for (size_t k = from; k < to; ++k) {
    const size_t i = size_t(tag0 + k - lo);
    if (fate == IdentityFate::later || missing == 0 || have[i]) {
      to_file_.push_back(r.element(k));  // another call's, or a later operation's
      continue;
    }
    have[i] = 1;
    // link::element_message(r, first, k), written in place: its copy through the stack
    // stalled on store forwarding, most of the run's time (issue 36).
    wire::Message& m = out[i];
    std::memcpy(&m, &proto, sizeof m);  // whole (a member-wise copy was a load and store per field)
    m.addr.msgtag = proto.addr.msgtag + uint32_t(k);  // a run of MSGTAG + 1 each
    if (each >= 1) std::memcpy(&m.data1, r.data + 4 * k * each, 4);
    if (each >= 2) std::memcpy(&m.data2, r.data + 4 * k * each + 4, 4);
    --missing;
    last = r.first.at_cycle + uint64_t(k) * r.step, took = true;
  }
  results_missing_ = missing;
  if (took) note_result_cycle(last);
}

const wire::Message* ToNodeMessages::of(const Entry& e) {
  const uint32_t fixed = e.nwords >= 2 ? e.words[1] & ~wire::field::kMsgtag.put(~0u) : 0;
  Shape* s = nullptr;
  for (Shape& c : shapes_)
    if (c.used && c.word0 == e.words[0] && c.nwords == e.nwords && c.fixed == fixed) s = &c;
  if (!s) {
    s = &shapes_[next_++ % shapes_.size()];
    auto d = link::decode_entry(e, Direction::to_node);
    *s = Shape{true, std::holds_alternative<wire::Message>(d), e.words[0], fixed, e.nwords, {}};
    if (s->ok) s->m = std::get<wire::Message>(d);
  }
  if (!s->ok) return nullptr;
  if (e.nwords >= 2) s->m.addr.msgtag = wire::address_msgtag(e.words[1]);
  if (e.nwords >= 3) s->m.data1 = e.words[2];
  if (e.nwords >= 4) s->m.data2 = e.words[3];
  s->m.op_id = e.op_id;
  return &s->m;
}

void ChannelClient::take_run(const link::EntryRun& r) {
  if (r.count == 1) {
    // A single entry (an answer, a result; copd's element path, --runs 0, interleaves a
    // root's ACKs and words, each its own entry): its message from the shapes decoded before.
    const Received x{r.first.kind, wire::instruction_tkno(r.first.words[0]), r.first.index, r.first.seq,
                     r.first.at_cycle, rx_messages_.of(r.first)};
    if (!take_answer(x) && !take_result(x)) to_file_.push_back(r.first);
    return;
  }
  // The run decoded once: its elements' messages differ only in MSGTAG and data words,
  // and decode alike (link.h element_message).
  auto decoded = link::decode_entry(r.first, Direction::to_node);
  const wire::Message* first = std::get_if<wire::Message>(&decoded);
  if (first && (take_answer_run(r, *first) || take_result_run(r, *first))) return;
  wire::Message m;
  Received x{r.first.kind, wire::instruction_tkno(r.first.words[0]), r.first.index, r.first.seq, r.first.at_cycle,
             first ? &m : nullptr};
  for (size_t k = 0; k < r.count; ++k) {
    if (first) m = link::element_message(r, *first, k);
    x.index = (r.flags & link::kRunIndexStep) ? uint16_t(r.first.index + k) : r.first.index;
    x.at_cycle = r.first.at_cycle + uint64_t(k) * r.step;
    if (!take_answer(x) && !take_result(x)) to_file_.push_back(r.element(k));
  }
}

void ChannelClient::file_out_of_context(std::span<const Entry> es) {
  lock_robust(&w_->buffer_lock);
  for (const Entry& e : es) {
    if (e.kind == EntryKind::broadcast && forgotten(*w_, wire::instruction_ppn(e.words[0]), e.op_id))
      continue;  // consumed by its receiver already
    // Appended after the highest used slot while there is room (arrival order, no scan),
    // else the first free one.
    int slot = w_->ooc_high < uint32_t(kOutOfContextSlots) ? int(w_->ooc_high) : -1;
    for (int i = 0; slot < 0 && i < kOutOfContextSlots; ++i)
      if (!w_->ooc[i].used) slot = i;
    if (slot < 0) {
      // Nowhere to keep it: the message is lost, and the channel says so (CSR ERR) rather
      // than letting its receiver wait for it until a timeout.
      w_->overflows.fetch_add(1);
      csr_set_error(*w_, Error::overflow);
      continue;
    }
    OutOfContext& o = w_->ooc[slot];
    o.kind = static_cast<uint8_t>(e.kind);
    o.nwords = e.nwords;
    o.tkno = wire::instruction_tkno(e.words[0]);
    o.index = e.index;
    o.seq = e.seq;
    std::copy(e.words.begin(), e.words.end(), o.words);
    o.at_cycle = e.at_cycle;
    o.op_id = e.op_id;
    o.used = 1;
    w_->ooc_count++;
    w_->ooc_high = std::max<uint32_t>(w_->ooc_high, uint32_t(slot) + 1);
    w_->filed.fetch_add(1, std::memory_order_relaxed);
  }
  pthread_mutex_unlock(&w_->buffer_lock);
  w_->event.fetch_add(1, std::memory_order_release);
  if (w_->waiters.load()) futex_wake_all(&w_->event);
}

void ChannelClient::take_from_buffer() {
  if (__atomic_load_n(&w_->ooc_count, __ATOMIC_ACQUIRE) == 0) return;
  lock_robust(&w_->buffer_lock);
  uint32_t high = 0;
  for (uint32_t i = 0; i < w_->ooc_high; ++i) {
    OutOfContext& o = w_->ooc[i];
    if (!o.used) continue;
    Entry e;
    e.kind = static_cast<EntryKind>(o.kind);
    e.nwords = o.nwords;
    e.index = o.index;
    e.seq = o.seq;
    e.at_cycle = o.at_cycle;
    e.op_id = o.op_id;
    std::copy(o.words, o.words + 4, e.words.begin());
    const Received x{e.kind, wire::instruction_tkno(e.words[0]), e.index, e.seq, e.at_cycle, rx_messages_.of(e)};
    if (take_answer(x) || take_result(x)) {
      o.used = 0;
      w_->ooc_count--;
    } else {
      high = i + 1;
    }
  }
  w_->ooc_high = high;
  pthread_mutex_unlock(&w_->buffer_lock);
}

}  // namespace cop::driver
