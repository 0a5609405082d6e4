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
  // and charged once; each element its own RAM checks and state and cycles (plain_element).
  if (!plain_checks(c, r)) return 0;
  // An open run of at least two (its steps known) that the elements continue.
  if (ack_at == SIZE_MAX || out[ack_at].run < 2) return 0;
  Delivery* d = data_at != SIZE_MAX ? &out[data_at] : nullptr;
  if (out.size() - 1 != (d ? data_at : ack_at)) return 0;
  Delivery& acks = out[ack_at];
  const uint64_t op_cost = cost(r.msg);
  const uint32_t total = r.elements();
  Message m = r.msg;  // element next + n
  Message sent;       // the last data word sent
  uint32_t n = 0;
  for (; n < total; ++n) {
    if (n > 0) {
      m.addr.msgtag++;
      m.set_data64(r.run[r.next + n]);
      if (!r.checked && wire::validate(m, wire::Direction::to_controller, config_.limits())) break;
    }
    if (!plain_element(c, m, op_cost, acks, d, sent)) break;
  }
  if (n == 0) return 0;
  // Serviced: as service() and execute() would leave the state after the last.
  stats_.serviced += n;
  asker_ = r.from;
  passed_on_ = false;
  last_sent_[size_t(c - 1)] = acks.msg;
  has_last_sent_[size_t(c - 1)] = true;
  if (d) {
    if (std::popcount(d->channels) > 1) stats_.broadcasts += n;
    remember(d->channels, sent);
  }
  return n;
}

bool Controller::plain_element(int c, const Message& msg, uint64_t op_cost, Delivery& acks, Delivery* d,
                               Message& sent) {
  const uint32_t k = acks.run;
  const uint64_t read_at = cycles_ + op_cost;
  if (read_at != acks.at_cycle + uint64_t(k) * acks.run_step) return false;
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const uint64_t bit = channel_bit(c);
  // Where its data goes (0: none), as broadcast() or contribute()/complete_operation() would send it.
  uint64_t dest = 0;
  const bool cast = msg.ins.opcode == Opcode::BCAST32 || msg.ins.opcode == Opcode::BCAST64;
  TcEntry& tc = ram_.tc(ppn, tag);
  BmEntry& bm = ram_.bm(ppn, tag);
  if (cast) {
    if (!bm.accessed) return false;  // no mask: NACK no_mask
    dest = bm.mask;
  } else {
    if (!tc.accessed || !(tc.pending & bit)) return false;
    if (tc.up && !(!tc.has_value && tc.pending == tc.mask)) return false;  // X contributions: not_participant
    const auto op = static_cast<uint8_t>(msg.ins.opcode);
    if (tc.mismatch || (tc.has_op && (tc.op != op || tc.op_id != msg.op_id))) return false;  // mismatch
    if ((tc.pending & ~bit) == 0 && bm.accessed) dest = bm.mask;  // the last: its result to the mask
  }
  if ((dest != 0) != (d != nullptr)) return false;
  if (d && (d->channels != dest || d->msg.addr.msgtag + k != tag ||
            read_at + timing_.t_cop_cn != d->at_cycle + uint64_t(k) * d->run_step))
    return false;
  // Serviced: as service() and execute() would change the state.
  cycles_ = read_at;
  uint64_t value = payload(msg);
  if (cast) {
    ram_.gas(ppn, tag) = value;
    bm.accessed = false;  // free_mask (one level holds no masks beside the entries)
  } else {
    value = plain_contribution(msg, bit, tc, bm);
  }
  acks.run++;
  if (!d) return true;
  cycles_ += timing_.t_cop_cn;
  // The data word as broadcast() (the command's words) or complete_operation() (the
  // result's, from the GAS word) makes it.
  sent = d->msg;
  sent.addr.msgtag = tag;
  if (cast) {
    sent.set_data64(msg.data64());
  } else {
    sent.data1 = sent.data2 = 0;
    wire::set_payload(sent, value);
  }
  d->run_data.push_back(sent.data64());
  d->run++;
  return true;
}

uint64_t Controller::plain_contribution(const Message& msg, uint64_t bit, TcEntry& tc, BmEntry& bm) {
  // contribute() and complete_operation() for a contribution plain_element took: the
  // partial result (or the result) in the GAS word, returned.
  if (!tc.has_value && tc.pending == tc.mask) tc.up = false;
  if (!tc.has_op) {
    tc.op = static_cast<uint8_t>(msg.ins.opcode);
    tc.op_id = msg.op_id;
    tc.has_op = true;
  }
  uint64_t& v = ram_.gas(msg.ins.ppn, msg.addr.msgtag);
  v = tc.has_value ? wire::combine(msg.ins.opcode, v, payload(msg)) : payload(msg);
  tc.has_value = true;
  tc.pending &= ~bit;
  if (tc.pending == 0) {
    tc.accessed = false;
    bm.accessed = false;  // its mask's result goes out (free_mask), or it had none
  }
  return v;
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
