// Runs (issue 36): a burst's element commands (the same instruction word on
// consecutive GAS words, seed 000 ch. VI: an array broadcast or reduction streams
// through the controller element by element) queued as one record, and serviced in one
// loop while the holder of the lock sends them, as the poll counter would service them
// (locked_channel_next takes the locked channel's head again and again). Every element
// is still serviced on its own (its checks, its cycles, the RAM): the common one (a
// broadcast whose mask is set, a contribution that leaves its operation pending or
// completes it, ch. V) by plain_elements (in one loop while they continue the open run), any other by
// service(); the bookkeeping around it (queue, poll counter, deliveries) is per run: its
// ACKs and the data words they send leave as two run deliveries (controller.h,
// Delivery::run). tests/cop/controller_runs_test.cpp holds it to the element path.
#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "controller/controller.h"

namespace cop::controller {

using wire::Message;
using wire::Opcode;

namespace {

bool runs_as_run(Opcode op) { return op == Opcode::BCAST32 || op == Opcode::BCAST64 || wire::is_reduction(op); }

// Element k of run delivery `d` (as the element path gives it).
Delivery element_of(const Delivery& d, uint32_t k) {
  Delivery e(d.channels, d.msg, d.at_cycle + uint64_t(k) * d.run_step, d.link_level, d.to_parent, d.hop);
  e.ends_operation = d.ends_operation;
  if (!d.run_data.empty()) {
    e.msg.addr.msgtag += k;
    e.msg.set_data64(d.run_data[k]);
  }
  return e;
}

// Whether `e` is the next element (k = run.run) of run delivery `run`, and the run's
// step then (the first time, k = 1, its distance in cycles from the first).
bool continues(const Delivery& run, const Delivery& e, bool data, uint64_t& step) {
  const uint32_t k = run.run;
  if (e.channels != run.channels || e.link_level != run.link_level || e.to_parent != run.to_parent ||
      e.ends_operation != run.ends_operation || e.hop.kind != run.hop.kind)
    return false;
  const Sender& a = e.hop.origin;
  const Sender& b = run.hop.origin;
  if (a.supervisor != b.supervisor || a.tkno != b.tkno || a.cntno != b.cntno || a.chno != b.chno) return false;
  if (e.at_cycle < run.at_cycle) return false;
  step = k == 1 ? e.at_cycle - run.at_cycle : run.run_step;
  if (e.at_cycle != run.at_cycle + uint64_t(k) * step) return false;
  if (!data) {
    if (!(e.msg == run.msg)) return false;
  } else {
    if (e.msg.addr.msgtag != run.msg.addr.msgtag + k) return false;
    Message m = e.msg;
    m.addr.msgtag = run.msg.addr.msgtag;
    m.data1 = run.msg.data1;
    m.data2 = run.msg.data2;
    if (!(m == run.msg)) return false;
  }
  return true;
}

}  // namespace

bool Controller::continues_run(const Message& prev, const Message& next) {
  return runs_as_run(next.ins.opcode) && !next.ins.x && next.ins == prev.ins && next.op_id == prev.op_id &&
         next.addr.cntno == prev.addr.cntno && next.addr.chno == prev.addr.chno &&
         next.addr.msgtag == prev.addr.msgtag + 1;
}

void Controller::receive_run(int channel, const Message& first, std::span<const uint64_t> data, uint64_t ready_at,
                             Sender from, bool checked) {
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  if (!runs_as_run(first.ins.opcode) || data.empty())
    throw std::invalid_argument("a run is of BCAST32/64 or reduction elements, one at least");
  Pending p{first, ready_at, from, checked};
  p.msg.set_data64(data[0]);
  if (data.size() > 1) p.run.assign(data.begin(), data.end());
  queue(channel).push_back(std::move(p));
  queued_ppn_[size_t(channel - 1)][first.ins.ppn & wire::kMaxPpn]++;
  if (!from.supervisor && from.tkno <= wire::kMaxTkno) live_[size_t(channel - 1)].set(from.tkno);
}

bool Controller::advance_run(int channel, uint32_t n) {
  auto& q = queue(channel);
  Pending& r = q[chosen_];
  if ((r.next += n) < r.run.size()) {
    r.msg.addr.msgtag += n;
    r.msg.set_data64(r.run[r.next]);
    return true;
  }
  queued_ppn_[size_t(channel - 1)][r.msg.ins.ppn & wire::kMaxPpn]--;
  if (chosen_ == 0) q.pop_front();
  else q.erase(q.begin() + std::ptrdiff_t(chosen_));
  return false;
}

void Controller::step_run(int c, std::vector<Delivery>& out) {
  auto& q = queue(c);
  poll_ = c;
  // The element path services the locked channel's head, the holder's in the locked
  // partition, again and again (locked_channel_next): so long, the run's elements go
  // back to back. Otherwise (no lock, another's, not the head) one element, as the
  // poll counter chose it.
  auto back_to_back = [&] {
    const Pending& h = q.front();
    return config_.runs && chosen_ == 0 && locked_ == c && h.msg.ins.ppn == lock_ppn_ &&
           same_sender(h.from, lock_owner_);
  };
  if (!back_to_back()) {
    const Pending& r = q[chosen_];
    const Pending p{r.msg, r.ready_at, r.from, r.checked};
    advance_run(c);
    service(c, p, out);
    ++steps_;
    return;
  }
  size_t ack_at = SIZE_MAX, data_at = SIZE_MAX;  // the run deliveries being built in `out`
  for (bool more = true; more && back_to_back();) {
    const Pending& r = q.front();
    cycles_ = std::max(cycles_, r.ready_at);  // locked_channel_next's, for each element
    if (const uint32_t n = config_.runs ? plain_elements(c, r, out, ack_at, data_at) : 0; n > 0) {
      steps_ += int(n);
      more = advance_run(c, n);
      continue;
    }
    const Pending p{r.msg, r.ready_at, r.from, r.checked};
    more = advance_run(c);
    scratch_.clear();
    service(c, p, scratch_);
    ++steps_;
    if (!extend_run(scratch_, out, ack_at, data_at)) {
      // Not of a run's shape (a NACK, an operation voided, ...): as the element path gives them.
      for (Delivery& d : scratch_) out.push_back(std::move(d));
      ack_at = data_at = SIZE_MAX;
    }
  }
}

bool Controller::extend_run(std::vector<Delivery>& element, std::vector<Delivery>& out, size_t& ack_at,
                            size_t& data_at) const {
  // A run's shape: the ACK to the sender's channel, and at most one delivery of data
  // (the broadcast word, the reduction's result) to a mask.
  if (element.empty() || element.size() > 2) return false;
  const Delivery& a = element[0];
  if (!a.link_level || a.msg.ins.opcode != Opcode::ACK || a.ends_operation || a.to_parent ||
      a.hop.kind != Hop::none || !std::has_single_bit(a.channels))
    return false;
  Delivery* d = element.size() == 2 ? &element[1] : nullptr;
  if (d && (d->link_level || d->to_parent || d->ends_operation || d->hop.kind != Hop::none || d->channels == 0))
    return false;
  // The same run: out ends with it (nothing came between), and the element continues both.
  const bool open = ack_at != SIZE_MAX && (d ? data_at == out.size() - 1 : ack_at == out.size() - 1);
  if (open && (d != nullptr) == (data_at != SIZE_MAX)) {
    uint64_t ack_step = 0, data_step = 0;
    if (continues(out[ack_at], a, false, ack_step) && (!d || continues(out[data_at], *d, true, data_step))) {
      out[ack_at].run_step = ack_step;
      out[ack_at].run++;
      if (d) {
        out[data_at].run_step = data_step;
        out[data_at].run_data.push_back(d->msg.data64());
        out[data_at].run++;
      }
      return true;
    }
  }
  out.push_back(std::move(element[0]));
  out.back().run = 1;
  ack_at = out.size() - 1;
  data_at = SIZE_MAX;
  if (d) {
    out[ack_at].run_interleaved = true;
    const uint64_t v = d->msg.data64();
    out.push_back(std::move(*d));
    out.back().run = 1;
    out.back().run_data.assign(1, v);
    data_at = out.size() - 1;
  }
  return true;
}

bool Controller::plain_checks(int c, const Pending& r) const {
  // What service() and execute() check first, all passed (else service() refuses it).
  const Message& msg = r.msg;
  const Sender& from = r.from;
  return config_.level == 1 && !config_.has_parent && !msg.ins.x && !revoked_[size_t(c - 1)].set &&
         (r.checked || !wire::validate(msg, wire::Direction::to_controller, config_.limits())) &&
         msg.ins.ppn < ram_.partitions() && !(msg.ins.supervisor && !from.supervisor) &&
         (from.supervisor || msg.ins.tkno == from.tkno) && (msg.ins.supervisor || acts_in(c, from, msg.ins.ppn));
}

uint32_t Controller::plain_elements(int c, const Pending& r, std::vector<Delivery>& out, size_t ack_at,
                                    size_t data_at) {
  // What every element of the record shares (its instruction, sender and cost), checked
  // and charged once; each element its own RAM checks and state and cycles (plain_casts,
  // plain_contributions).
  if (!plain_checks(c, r)) return 0;
  // An open run of at least two (its steps known) that the elements continue.
  if (ack_at == SIZE_MAX || out[ack_at].run < 2) return 0;
  Delivery* d = data_at != SIZE_MAX ? &out[data_at] : nullptr;
  if (out.size() - 1 != (d ? data_at : ack_at)) return 0;
  Delivery& acks = out[ack_at];
  const uint32_t n = plain_loop(c, r, acks, d);
  if (n == 0) return 0;
  // Serviced: as service() and execute() would leave the state after the last.
  stats_.serviced += n;
  asker_ = r.from;
  passed_on_ = false;
  last_sent_[size_t(c - 1)] = acks.msg;
  has_last_sent_[size_t(c - 1)] = true;
  if (d) {
    if (std::popcount(d->channels) > 1) stats_.broadcasts += n;
    // The last data word sent, as broadcast() (the command's words) or complete_operation()
    // (the result's payload from the GAS word) made it.
    Message sent = d->msg;
    sent.addr.msgtag = r.msg.addr.msgtag + n - 1;
    sent.set_data64(d->run_data.back());
    remember(d->channels, sent);
  }
  return n;
}

uint32_t Controller::plain_loop(int c, const Pending& r, Delivery& acks, Delivery* d) {
  // The opcode's loop: its function and payload width decided here, once per record.
  const bool wide = wire::is_64bit(r.msg.ins.opcode);
  switch (r.msg.ins.opcode) {
    case Opcode::BCAST32:
    case Opcode::BCAST64: return plain_casts(r, acks, d, wide);
    case Opcode::SUMI32: return plain_contributions<Opcode::SUMI32>(c, r, acks, d, wide);
    case Opcode::MAXI32: return plain_contributions<Opcode::MAXI32>(c, r, acks, d, wide);
    case Opcode::MINI32: return plain_contributions<Opcode::MINI32>(c, r, acks, d, wide);
    case Opcode::OR32: return plain_contributions<Opcode::OR32>(c, r, acks, d, wide);
    case Opcode::AND32: return plain_contributions<Opcode::AND32>(c, r, acks, d, wide);
    case Opcode::EXOR32: return plain_contributions<Opcode::EXOR32>(c, r, acks, d, wide);
    case Opcode::SUMI64: return plain_contributions<Opcode::SUMI64>(c, r, acks, d, wide);
    case Opcode::MAXI64: return plain_contributions<Opcode::MAXI64>(c, r, acks, d, wide);
    case Opcode::MINI64: return plain_contributions<Opcode::MINI64>(c, r, acks, d, wide);
    case Opcode::OR64: return plain_contributions<Opcode::OR64>(c, r, acks, d, wide);
    case Opcode::AND64: return plain_contributions<Opcode::AND64>(c, r, acks, d, wide);
    case Opcode::EXOR64: return plain_contributions<Opcode::EXOR64>(c, r, acks, d, wide);
    case Opcode::SUMF: return plain_contributions<Opcode::SUMF>(c, r, acks, d, wide);
    case Opcode::MAXF: return plain_contributions<Opcode::MAXF>(c, r, acks, d, wide);
    case Opcode::MINF: return plain_contributions<Opcode::MINF>(c, r, acks, d, wide);
    default: return 0;
  }
}

bool Controller::plain_element_valid(const Pending& r, uint32_t n) const {
  // Element n (after the first, which plain_checks validated) against the decoder's rules,
  // for a record not made by wire::decode (receive_run's `checked`).
  if (r.checked || n == 0) return true;
  Message m = r.msg;
  m.addr.msgtag += n;
  m.set_data64(r.run[r.next + n]);
  return !wire::validate(m, wire::Direction::to_controller, config_.limits());
}

namespace {

// The open run deliveries a plain loop extends, read into locals once (each element's
// stores into the RAM's entries would make the compiler read them again every time), and
// written back after: the controller's clock, the ACK run (element k next) and the data run.
struct OpenRuns {
  uint64_t cycles, ack_at, ack_step;
  uint32_t k;
  Delivery* d;
  uint64_t data_channels = 0, data_at = 0, data_step = 0, t_cop_cn;
  uint32_t data_tag = 0;
  uint64_t* words = nullptr;  // the data run's words, element k's at words[k - first k]

  OpenRuns(uint64_t clock, const Delivery& acks, Delivery* data, uint64_t cop_cn, uint32_t most)
      : cycles(clock), ack_at(acks.at_cycle), ack_step(acks.run_step), k(acks.run), d(data), t_cop_cn(cop_cn) {
    if (!d) return;
    data_channels = d->channels;
    data_at = d->at_cycle;
    data_step = d->run_step;
    data_tag = d->msg.addr.msgtag;
    const size_t had = d->run_data.size();
    d->run_data.resize(had + most);
    words = d->run_data.data() + had;
  }
  // Whether element k, read at read_at, continues the runs: its ACK, and its data word (to
  // `dest`, 0: none) on word `tag`, where the runs' steps put element k's.
  bool continues(uint64_t read_at, uint64_t dest, uint32_t tag) const {
    if (read_at != ack_at + uint64_t(k) * ack_step || (dest != 0) != (d != nullptr)) return false;
    return !d || (data_channels == dest && data_tag + k == tag && read_at + t_cop_cn == data_at + uint64_t(k) * data_step);
  }
  // Element k serviced, its data word `word` (with a data run).
  void take(uint64_t read_at, uint32_t n, uint64_t word) {
    cycles = read_at;
    ++k;
    if (!d) return;
    cycles += t_cop_cn;
    words[n] = word;
  }
  // `n` elements taken: written back.
  void close(uint64_t& clock, Delivery& acks, uint32_t n) const {
    clock = cycles;
    acks.run = k;
    if (!d) return;
    d->run += n;
    d->run_data.resize(size_t(words - d->run_data.data()) + n);
  }
};

}  // namespace

uint32_t Controller::plain_casts(const Pending& r, Delivery& acks, Delivery* d, bool wide) {
  // broadcast() for each element whose mask is set (else NACK no_mask: left to service()):
  // the word kept in the GAS, the mask freed (one level holds no masks beside the entries),
  // the command's data word to the mask.
  if (!d) return 0;  // a mask is never empty (check_mask): a broadcast's run has its data run
  const uint8_t ppn = r.msg.ins.ppn;
  const uint32_t first = r.msg.addr.msgtag, total = r.elements();
  const uint64_t op_cost = cost(r.msg);
  const uint64_t* in = r.run.data() + r.next;
  OpenRuns open(cycles_, acks, d, timing_.t_cop_cn, total);
  uint32_t n = 0;
  for (; n < total && plain_element_valid(r, n); ++n) {
    const uint32_t tag = first + n;
    const BmEntry& bm = ram_.bm(ppn, tag);
    const uint64_t read_at = open.cycles + op_cost;
    if (!bm.accessed || !open.continues(read_at, bm.mask, tag)) break;
    const uint64_t w = in[n];
    ram_.gas(ppn, tag) = wide ? w : uint32_t(w);  // wire::payload
    ram_.update_bm(ppn, tag, [](BmEntry& e) { e.accessed = false; });
    open.take(read_at, n, w);
  }
  open.close(cycles_, acks, n);
  return n;
}

template <Opcode OP>
uint32_t Controller::plain_contributions(int c, const Pending& r, Delivery& acks, Delivery* d, bool wide) {
  // contribute() and complete_operation() for each element that leaves its operation
  // pending or completes it (anything else, a mismatch, X, no mask, is left to service()):
  // the partial result (or the result) in the GAS word, the result's payload to the mask.
  const uint8_t ppn = r.msg.ins.ppn;
  const uint32_t first = r.msg.addr.msgtag, total = r.elements();
  const uint64_t op_cost = cost(r.msg), bit = channel_bit(c), op_id = r.msg.op_id;
  constexpr auto op = static_cast<uint8_t>(OP);
  const uint64_t* in = r.run.data() + r.next;
  OpenRuns open(cycles_, acks, d, timing_.t_cop_cn, total);
  DataRam::Gathered joined(ppn);
  uint32_t n = 0;
  for (; n < total && plain_element_valid(r, n); ++n) {
    const uint32_t tag = first + n;
    const TcEntry& tc = ram_.tc(ppn, tag);
    const BmEntry& bm = ram_.bm(ppn, tag);
    if (!tc.accessed || !(tc.pending & bit)) break;                               // no_mask, not_participant
    if (tc.up && !(!tc.has_value && tc.pending == tc.mask)) break;                 // X contributions
    if (tc.mismatch || (tc.has_op && (tc.op != op || tc.op_id != op_id))) break;  // mismatch
    const bool last = (tc.pending & ~bit) == 0;
    const uint64_t read_at = open.cycles + op_cost;
    if (!open.continues(read_at, last && bm.accessed ? bm.mask : 0, tag)) break;
    const uint64_t value = wide ? in[n] : uint32_t(in[n]);  // wire::payload
    uint64_t& v = ram_.gas(ppn, tag);
    ram_.update_tc(tag, [&](TcEntry& e) {
      if (!e.has_value && e.pending == e.mask) e.up = false;
      if (!e.has_op) {
        e.op = op;
        e.op_id = op_id;
        e.has_op = true;
      }
      v = e.has_value ? wire::combine_as<OP>(v, value) : value;
      e.has_value = true;
      e.pending &= ~bit;
      if (e.pending == 0) e.accessed = false;
    }, joined);
    if (last) ram_.update_bm(ppn, tag, [](BmEntry& e) { e.accessed = false; });  // free_mask, or it had none
    open.take(read_at, n, wide ? v : uint32_t(v));  // wire::set_payload into a cleared word
  }
  ram_.apply(joined);
  open.close(cycles_, acks, n);
  return n;
}

std::vector<Delivery> Controller::expand_runs(std::span<const Delivery> in) {
  std::vector<Delivery> out;
  for (size_t i = 0; i < in.size(); ++i) {
    const Delivery& d = in[i];
    if (d.run == 0) {
      out.push_back(d);
      continue;
    }
    const Delivery* data = d.run_interleaved && i + 1 < in.size() ? &in[i + 1] : nullptr;
    for (uint32_t k = 0; k < d.run; ++k) {
      out.push_back(element_of(d, k));
      if (data && k < data->run) out.push_back(element_of(*data, k));
    }
    if (data) ++i;
  }
  return out;
}

}  // namespace cop::controller
