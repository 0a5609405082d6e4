// The controller's global operations (seed 000 ch. V): the terminal-count and
// broadcast mask RAMs (SETTC, SETBM), contributions to reductions and barriers,
// broadcasts, the result going out when the last contribution is in, and the
// operations voided because a channel or a task taking part is gone.
#include "controller/controller.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cop::controller {

using wire::Error;
using wire::Message;
using wire::Opcode;
using wire::Space;
using wire::combine;
using wire::payload;
using wire::set_payload;

Error Controller::check_mask(uint64_t mask, uint8_t ppn) const {
  if (mask == 0) return Error::bad_mask;
  if (config_.channels < 64 && (mask >> config_.channels) != 0) return Error::bad_mask;
  for (int c = 1; c <= config_.channels; ++c)
    if ((mask & channel_bit(c)) && !in_partition(c, ppn)) return Error::partition;
  return Error::none;
}

Error Controller::set_mask(int channel, const Message& msg, Sender from, bool broadcast_ram,
                           std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint64_t mask = msg.data64();
  if (Error e = check_mask(mask, ppn); e != Error::none) return e;
  const uint32_t first = msg.addr.msgtag;
  const uint32_t n = uint32_t(msg.count());
  // All or nothing: an entry in use means a peer (or a stale operation) owns the range;
  // at two levels, only when it is this operation's: another operation's is held beside
  // it (controller.h, "Held masks").
  const SetBy by{static_cast<uint8_t>(channel), from.tkno, from.supervisor};
  if (!broadcast_ram) {
    TcEntry e;
    e.mask = e.pending = mask;
    e.accessed = true;
    e.set_by = by;
    return ram_.set_tc_range(ppn, first, n, e) ? Error::none : Error::mask_in_use;
  }
  const BmEntry e{mask, true, by, msg.op_id};
  // One level: the range set in one fill when none of its entries is accessed (their bits).
  if (!holds_masks()) {
    if (!ram_.set_bm_range(ppn, first, n, e)) return Error::mask_in_use;
    if (!parked_.empty()) deliver_parked(ppn, first, n, out);
    return Error::none;
  }
  for (uint32_t i = first; i < first + n; ++i)
    if (mask_of(ppn, i, msg.op_id) || cast_gone(ppn, i, msg.op_id)) return Error::mask_in_use;
  if (!ram_.set_bm_range(ppn, first, n, e)) {
    for (uint32_t i = first; i < first + n; ++i) {
      if (ram_.bm(ppn, i).accessed) {
        held_masks_.push_back(HeldMask{ppn, i, e});
      } else {
        ram_.update_bm(ppn, i, [&](BmEntry& b) { b = e; });
      }
    }
  }
  if (!parked_.empty()) deliver_parked(ppn, first, n, out);
  return Error::none;
}

Error Controller::broadcast(int channel, const Message& msg, std::vector<Delivery>& out) {
  // Its own operation's mask (at two levels the word's entry may be another's: held masks).
  const BmEntry* bm = mask_of(msg.ins.ppn, msg.addr.msgtag, msg.op_id);
  if (!bm) return Error::no_mask;
  // The GAS word keeps the value too: a later RSRAM of the tag reads it.
  ram_.gas(msg.ins.ppn, msg.addr.msgtag) = payload(msg);
  const uint64_t mask = bm->mask;
  free_mask(msg.ins.ppn, msg.addr.msgtag, bm);
  cast_went_out(msg.ins.ppn, msg.addr.msgtag, msg.op_id);
  Message data = msg;
  // Receivers filter on the source (srctid): the node that sent it, at a level 2 the one the level-1 forwarded.
  data.addr.chno = static_cast<uint8_t>(config_.level == 2 ? asker_.chno : channel);
  data.addr.cntno = config_.level == 2 ? asker_.cntno : own_cntno();
  // A level-1 with a parent: a receiver may have set the mask with the sender's own channel
  // in it (a receiver naming no sender, controller.h "Held masks"); not sent back there.
  const uint64_t dest = config_.level == 1 && config_.has_parent ? mask & ~channel_bit(channel) : mask;
  if (dest != 0) emit(dest, data, out);
  return Error::none;
}

Error Controller::contribute(int channel, const Message& msg, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const TcEntry& tc = ram_.tc(ppn, tag);
  if (!tc.accessed) return Error::no_mask;
  if (!(tc.pending & channel_bit(channel))) return Error::not_participant;
  // All contributions to one operation carry X or none: the first decides where it completes.
  if (config_.level == 1) {
    if (!tc.has_value && tc.pending == tc.mask) ram_.update_tc(ppn, tag, [&](TcEntry& e) { e.up = msg.ins.x; });
    if (tc.up != msg.ins.x) return Error::not_participant;
  }
  // Every contribution to one operation has the first one's opcode (a barrier, or one
  // reduction function on one datatype) and operation identity (the same call of the
  // same round: generation, job, window, tag, datatype, count). One that differs (tasks
  // disagreeing on the call, or out of step) is counted and refused, and the operation
  // ends with a NACK mismatch to those awaiting its result instead of a mix of SUMF and
  // SUMI64 bit patterns or of two rounds' values. A contribution that comes after the
  // operation is known void is refused too: its task learns it from its own answer.
  const auto opcode = static_cast<uint8_t>(msg.ins.opcode);
  Error mine = Error::none;
  ram_.update_tc(ppn, tag, [&](TcEntry& e) {
    if (!e.has_op) {
      e.op = opcode;
      e.op_id = msg.op_id;
      e.has_op = true;
    }
    if (!(e.op == opcode && e.op_id == msg.op_id && !e.mismatch)) mine = Error::mismatch;
    if (mine != Error::none) e.mismatch = true;
    if (msg.ins.opcode != Opcode::BENTRY) {
      uint64_t& v = ram_.gas(ppn, tag);
      v = e.has_value ? combine(msg.ins.opcode, v, payload(msg)) : payload(msg);
      e.has_value = true;
    }
    e.pending &= ~channel_bit(channel);
  });
  if (tc.pending != 0) return mine;
  if (tc.mismatch) {
    const BmEntry& bm = ram_.bm(ppn, tag);
    const bool barrier = static_cast<Opcode>(tc.op) == Opcode::BENTRY;
    // A level 2 tells every level-1 controller of the operation (they free its entries and
    // tell their nodes, as for a voided one); a level-1 tells the level 2 (void_upward)
    // and those of its nodes that await the result.
    const uint64_t awaiting = bm.accessed ? bm.mask : (barrier ? tc.mask : 0);
    void_upward(ppn, tag, Error::mismatch, out);
    fail_operation(ppn, tag, config_.level == 2 ? (tc.mask | awaiting) & ~tc.ended : awaiting, Error::mismatch, out);
  } else if (tc.up) {
    contribute_up(ppn, tag, msg, out);
  } else {
    complete_operation(ppn, tag, msg, out);
  }
  return mine;
}

void Controller::complete_operation(uint8_t ppn, uint32_t tag, const Message& op, std::vector<Delivery>& out) {
  const TcEntry& tc = ram_.tc(ppn, tag);
  // Results go to the operation's broadcast mask; a barrier with none releases its participants.
  const BmEntry* bm = mask_of(ppn, tag, op.op_id);
  const bool barrier = op.ins.opcode == Opcode::BENTRY;
  const uint64_t dest = bm ? bm->mask : (barrier ? tc.mask : 0);
  const uint64_t release = config_.level == 2 ? tc.mask & ~dest : 0;
  ram_.update_tc(ppn, tag, [](TcEntry& e) {
    e.accessed = false;
    e.pending = 0;
  });
  if (bm) free_mask(ppn, tag, bm);
  Message result = wire::make(op.ins.opcode, 0, Space::GAS, tag);
  result.ins.ppn = ppn;
  result.op_id = op.op_id;  // the operation's identity: its waiters take only their own call's result
  // Level-1 controllers that took part but receive nothing: their entries wait for this.
  if (release != 0) out.push_back(Delivery{release, result, cycles_, false, false, Hop{Hop::release, {}}});
  if (dest == 0) return;
  result.addr.cntno = static_cast<uint8_t>(ram_.sas(0));
  if (!barrier) set_payload(result, ram_.gas(ppn, tag));
  emit(dest, result, out);
}

void Controller::fail_operation(uint8_t ppn, uint32_t tag, uint64_t dest, Error why, std::vector<Delivery>& out) {
  const TcEntry& tc = ram_.tc(ppn, tag);
  const uint64_t op_id = tc.has_op ? tc.op_id : ram_.bm(ppn, tag).op_id;  // whose call it voids
  ram_.update_tc(ppn, tag, [](TcEntry& e) { e = TcEntry{}; });
  ram_.update_bm(ppn, tag, [](BmEntry& e) { e = BmEntry{}; });
  if (dest == 0) return;
  Message nack = wire::make(Opcode::NACK, 0, Space::GAS, tag);
  nack.ins.ppn = ppn;
  nack.op_id = op_id;
  nack.data1 = wire::nack_data(why, Opcode::BENTRY);
  stats_.nacks++;
  out.push_back(Delivery{dest, nack, cycles_, true});
  out.back().ends_operation = true;
}

Error Controller::void_operations(int channel, const Message& msg, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  if (ppn >= ram_.partitions()) return Error::partition;
  const uint64_t bit = channel_bit(channel);
  const uint32_t first = msg.addr.msgtag;
  const uint32_t n = uint32_t(msg.count());
  // A VOID with an operation identity (the call settling its channel's failed words)
  // spares an operation of that call's own round or a later one of its site: another
  // channel of the call may have set it up already (operation identity, wire.h).
  auto spared = [&](uint64_t id) {
    return msg.op_id != 0 && id != 0 && wire::identity_site(id) == wire::identity_site(msg.op_id) &&
           !wire::identity_older(id, msg.op_id);
  };
  for (uint32_t tag = first; tag < first + n && tag < config_.gas_words; ++tag) {
    const TcEntry& tc = ram_.tc(ppn, tag);
    const BmEntry& bm = ram_.bm(ppn, tag);
    if (spared(tc.has_op ? tc.op_id : bm.op_id)) continue;
    // Only an operation this channel takes part in: a task voids nothing of others'.
    if (tc.accessed && (tc.mask & bit)) {
      void_upward(ppn, tag, Error::voided, out);  // an X operation's level 2 voids it too
      fail_operation(ppn, tag, (tc.mask | (bm.accessed ? bm.mask : 0)) & ~bit, Error::voided, out);
    } else if (!tc.accessed && bm.accessed && ((bm.mask & bit) || bm.set_by.channel == channel)) {
      fail_operation(ppn, tag, bm.mask & ~bit, Error::voided, out);  // a broadcast whose data never came
    }
  }
  void_held_masks(ppn, first, n, [&](const BmEntry& e) {
    return !spared(e.op_id) && ((e.mask & bit) || e.set_by.channel == channel);
  }, bit, Error::voided, out);
  return Error::none;
}

int Controller::fail_channel(int channel, std::vector<Delivery>& out) {
  reset_channel(channel);
  const uint64_t bit = channel_bit(channel);
  int failed = 0;
  for (int p = 0; p < ram_.partitions(); ++p) {
    const auto ppn = static_cast<uint8_t>(p);
    for (uint32_t tag = 0; tag < config_.gas_words; ++tag) {
      const TcEntry& tc = ram_.tc(ppn, tag);
      if (!tc.accessed || !(tc.pending & bit)) continue;
      const BmEntry& bm = ram_.bm(ppn, tag);
      void_upward(ppn, tag, Error::link_down, out);
      fail_operation(ppn, tag, (tc.mask | (bm.accessed ? bm.mask : 0)) & ~bit, Error::link_down, out);
      failed++;
    }
  }
  return failed;
}

int Controller::end_task(int channel, uint16_t tkno, std::vector<Delivery>& out) {
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  const uint64_t bit = channel_bit(channel);
  auto is_task = [&](const Sender& s) { return !s.supervisor && s.tkno == tkno; };
  auto set_by_task = [&](const SetBy& s) { return s.channel == channel && !s.supervisor && s.tkno == tkno; };

  // Its queued commands go; contributions among them are lost to their operations.
  struct Lost {
    uint8_t ppn;
    uint32_t tag;
  };
  std::vector<Lost> lost;
  auto& q = queue(channel);
  for (auto it = q.begin(); it != q.end();) {
    if (!is_task(it->from)) {
      ++it;
      continue;
    }
    const Message& m = it->msg;
    const bool contribution = m.ins.opcode == Opcode::BENTRY || wire::is_reduction(m.ins.opcode) ||
                              ((m.ins.opcode == Opcode::WSRAM32 || m.ins.opcode == Opcode::WSRAM64) &&
                               m.ins.space == Space::GAS);
    // A run's elements are contributions on the tags after its first too.
    for (uint32_t k = 0; contribution && k < it->elements(); ++k)
      if (m.ins.ppn < ram_.partitions() && m.addr.msgtag + k < config_.gas_words)
        lost.push_back(Lost{m.ins.ppn, m.addr.msgtag + k});
    queued_ppn_[size_t(channel - 1)][m.ins.ppn & wire::kMaxPpn]--;
    it = q.erase(it);
  }
  if (locked_ == channel && is_task(lock_owner_)) locked_ = 0;
  if (revoked_[size_t(channel - 1)].set && is_task(revoked_[size_t(channel - 1)].owner))
    revoked_[size_t(channel - 1)] = Revoked{};
  TaskSet& live = live_[size_t(channel - 1)];
  if (tkno <= wire::kMaxTkno) live.reset(tkno);
  const bool channel_left = live.none();
  if (tkno < config_.tasks_per_channel)
    for (int p = 0; p < ram_.partitions(); ++p) ram_.clear_task(static_cast<uint8_t>(p), channel, tkno);
  if (tkno < config_.tasks_per_channel) set_task_partition(channel, tkno, kChannelPartition);

  int failed = 0;
  for (int p = 0; p < ram_.partitions(); ++p) {
    const auto ppn = static_cast<uint8_t>(p);
    for (uint32_t tag = 0; tag < config_.gas_words; ++tag) {
      const TcEntry& tc = ram_.tc(ppn, tag);
      const BmEntry& bm = ram_.bm(ppn, tag);
      if (tc.accessed) {
        if (!(tc.pending & bit)) continue;  // its channel has contributed: it can still complete
        const bool lost_here = std::any_of(lost.begin(), lost.end(), [&](const Lost& l) { return l.ppn == ppn && l.tag == tag; });
        if (!(set_by_task(tc.set_by) || lost_here || channel_left)) continue;
        void_upward(ppn, tag, Error::task_ended, out);
        fail_operation(ppn, tag, tc.mask | (bm.accessed ? bm.mask : 0), Error::task_ended, out);
        failed++;
      } else if (bm.accessed && set_by_task(bm.set_by)) {
        // A broadcast mask its BCAST never came for: the receivers would wait for ever.
        fail_operation(ppn, tag, bm.mask, Error::task_ended, out);
        failed++;
      }
    }
    failed += void_held_masks(ppn, 0, config_.gas_words, [&](const BmEntry& e) { return set_by_task(e.set_by); }, 0,
                              Error::task_ended, out);
  }
  return failed;
}

}  // namespace cop::controller
