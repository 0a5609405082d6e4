// Two COP levels (seed 000 ch. IV, Figure 5: "the local, Level 1 cop forwards
// the command on to the Level 2 cop. The level 2 cop uses a mask in its Mask
// RAM to broadcast the command to the appropriate level 1 cops and each of
// these then uses a mask from its Mask RAM to broadcast the data value to the
// desired nodes"; ch. V: the X bit, CNTNO). The rules are in controller.h.
#include "controller/controller.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cop::controller {

using wire::Error;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

bool is_result(Opcode op) {
  return op == Opcode::BENTRY || op == Opcode::BCAST32 || op == Opcode::BCAST64 || wire::is_reduction(op);
}

}  // namespace

void Controller::send_up(const Message& msg, Hop hop, std::vector<Delivery>& out) {
  // The level-1 writes into its parent as a node writes into its COP: t_CN-COP.
  cycles_ += timing_.t_cn_cop;
  Delivery d{0, msg, cycles_, false, true, hop};
  d.link_level = msg.ins.opcode == Opcode::ACK || msg.ins.opcode == Opcode::NACK;
  out.push_back(d);
}

Error Controller::forward(int channel, const Message& msg, Sender from, std::vector<Delivery>& out) {
  switch (msg.ins.opcode) {
    case Opcode::LOCK:
    case Opcode::UNLOCK:
    case Opcode::PROBE:
      return Error::channel_range;  // the level 2 is not locked or probed from a node
    default:
      break;
  }
  if (msg.ins.opcode == Opcode::BENTRY || wire::is_reduction(msg.ins.opcode)) return contribute(channel, msg, out);
  // A task address space is reached through the level 2 only with Z: CNTNO and CHNO name it.
  if (msg.ins.space == Space::TAS && !msg.ins.z) return Error::channel_range;
  Sender origin = from;
  origin.cntno = own_cntno();
  origin.chno = static_cast<uint8_t>(channel);
  send_up(msg, Hop{Hop::command, origin}, out);
  passed_on_ = true;
  return Error::none;
}

void Controller::contribute_up(uint8_t ppn, uint32_t tag, const Message& op, std::vector<Delivery>& out) {
  // It stays accessed: the next operation on the tag waits for the result.
  ram_.update_tc(ppn, tag, [](TcEntry& e) { e.forwarded = true; });
  Message up = wire::make(op.ins.opcode, 0, Space::GAS, tag);
  up.ins.ppn = ppn;
  up.ins.x = true;
  up.addr.cntno = own_cntno();
  up.op_id = op.op_id;  // the level 2 checks it against the other level-1s' (global_ops.cpp contribute)
  if (op.ins.opcode != Opcode::BENTRY) wire::set_payload(up, ram_.gas(ppn, tag));
  send_up(up, Hop{Hop::command, Sender{false, 0, own_cntno(), 0}}, out);
}

Error Controller::route_down(const Message& msg, Sender from, std::vector<Delivery>& out) {
  if (!msg.ins.z) return Error::channel_range;
  const int target = msg.addr.cntno + 1;
  if (target > config_.channels) return Error::channel_range;
  if (!msg.ins.supervisor && !acts_in(target, Sender{}, msg.ins.ppn)) return Error::partition;
  emit(channel_bit(target), msg, out);
  out.back().hop = Hop{Hop::command, from};
  passed_on_ = true;
  return Error::none;
}

void Controller::receive_from_child(int channel, const Delivery& up, std::vector<Delivery>& out) {
  if (config_.level != 2) throw std::logic_error("receive_from_child on a level-1 controller");
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  if (up.hop.kind == Hop::answer) {
    // An answer from the level-1 that executed a routed command: down to the asker's controller.
    const int target = up.hop.origin.cntno + 1;
    if (target > config_.channels) return;  // no such controller: nobody to give it to
    Delivery d{channel_bit(target), up.msg, std::max(up.at_cycle, cycles_) + timing_.t_op_int + timing_.t_cop_cn,
               up.link_level, false, up.hop};
    out.push_back(d);
    return;
  }
  Sender from = up.hop.origin;
  from.cntno = static_cast<uint8_t>(channel - 1);  // the link, not the message, names the controller
  if (up.link_level) {
    // A level-1's ACK of what we sent it is the interface's; its NACK voids an operation.
    if (up.msg.ins.opcode != Opcode::NACK) return;
    if (wire::nack_error(up.msg.data1) != Error::mismatch || up.msg.ins.ppn >= ram_.partitions()) {
      void_from_child(channel, up.msg, out);
      return;
    }
    // A NACK mismatch stands for the level-1's contribution (void_from_child): it takes its
    // place in the level-1's command order, behind the SETTC/SETBM X its nodes forwarded
    // before it (they come in one frame). Taken ahead of them it found no entry yet (the
    // mismatch was lost) or marked the level-1 as contributed, so that they were held
    // unanswered (repeats_in_progress) and its nodes waited for ever. Serviced: mismatch_from_child.
    queue(channel).push_back(Pending{up.msg, up.at_cycle, from, true});
    queued_ppn_[size_t(channel - 1)][up.msg.ins.ppn & wire::kMaxPpn]++;
    return;
  }
  receive(channel, up.msg, up.at_cycle, from, out);
}

void Controller::receive_from_parent(const Delivery& down, std::vector<Delivery>& out) {
  if (config_.level != 1 || !config_.has_parent) throw std::logic_error("receive_from_parent without a parent");
  switch (down.hop.kind) {
    case Hop::command:
      execute_from_parent(down, out);
      return;
    case Hop::answer:
      answer_from_parent(down, out);
      return;
    case Hop::release:
      if (down.msg.ins.ppn < ram_.partitions() && down.msg.addr.msgtag < config_.gas_words) {
        const TcEntry& tc = ram_.tc(down.msg.ins.ppn, down.msg.addr.msgtag);
        if (tc.accessed && tc.forwarded) fail_operation(down.msg.ins.ppn, down.msg.addr.msgtag, 0, Error::none, out);
      }
      return;
    case Hop::none:
      if (down.msg.ins.opcode == Opcode::NACK) {
        answer_from_parent(down, out);  // an operation the level 2 voided (fail_channel)
        return;
      }
      if (is_result(down.msg.ins.opcode) && down.msg.ins.ppn < ram_.partitions() &&
          down.msg.addr.msgtag < config_.gas_words)
        relay_down(down.msg, down.at_cycle, out);
      return;
  }
}

void Controller::execute_from_parent(const Delivery& down, std::vector<Delivery>& out) {
  // Serviced between channel polls: the parent's link is not a channel.
  const Message& msg = down.msg;
  cycles_ = std::max(cycles_, down.at_cycle) + cost(msg);
  stats_.serviced++;
  const Sender origin = down.hop.origin;
  // The owner rule: the asker's own channel only when it is on this controller.
  const int channel = origin.cntno == own_cntno() ? origin.chno : 0;
  Error e = Error::none;
  std::vector<Delivery> data;
  asker_ = origin;
  from_parent_ = true;
  if (auto bad = wire::validate(msg, wire::Direction::to_controller, config_.limits())) e = bad->code;
  else if (msg.ins.ppn >= ram_.partitions()) e = Error::partition;
  else if (msg.ins.supervisor && !origin.supervisor) e = Error::protection;
  else if (msg.ins.space != Space::TAS || !msg.ins.z) e = Error::channel_range;
  else e = data_ram_access(channel, msg, origin, data);
  send_up(acknowledgment(msg, origin, e), Hop{Hop::answer, origin}, out);
  from_parent_ = false;
  out.insert(out.end(), data.begin(), data.end());
}

void Controller::answer_from_parent(const Delivery& down, std::vector<Delivery>& out) {
  const Message& msg = down.msg;
  if (down.hop.kind == Hop::answer && down.hop.origin.chno != 0) {
    // For a task here: passed through the interface to its channel.
    const int channel = down.hop.origin.chno;
    if (channel > config_.channels) return;
    Delivery d{channel_bit(channel), msg, std::max(down.at_cycle, cycles_) + timing_.t_cop_cn, down.link_level};
    d.hop.origin = down.hop.origin;  // whose command (a daemon matches it to its queue)
    remember(d.channels, d.msg);
    out.push_back(d);
    return;
  }
  // For this controller: the ACK of its combined contribution, or the NACK
  // voiding the operation at the level 2: void it here too.
  if (msg.ins.opcode != Opcode::NACK || msg.ins.ppn >= ram_.partitions() || msg.addr.msgtag >= config_.gas_words)
    return;
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const TcEntry& tc = ram_.tc(ppn, tag);
  const BmEntry& bm = ram_.bm(ppn, tag);
  // It names the operation of a held mask, not the entry's: that one alone is voided.
  const auto named = [&](const BmEntry& e) { return wire::identity_same_round(msg.op_id, e.op_id); };
  if (!tc.accessed && msg.op_id != 0 && !(bm.accessed && named(bm)) &&
      void_held_masks(ppn, tag, 1, named, 0, wire::nack_error(msg.data1), out) > 0)
    return;
  if (!tc.accessed && !bm.accessed) return;
  cycles_ = std::max(cycles_, down.at_cycle);
  fail_operation(ppn, tag, (tc.accessed ? tc.mask : 0) | (bm.accessed ? bm.mask : 0), wire::nack_error(msg.data1),
                 out);
}

void Controller::relay_down(const Message& msg, uint64_t ready_at, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const TcEntry& tc = ram_.tc(ppn, tag);
  const bool barrier = msg.ins.opcode == Opcode::BENTRY;
  const bool forwarded = tc.accessed && tc.forwarded;
  // Its own operation's mask (operation identity): another operation's, set by a node for a
  // broadcast still to come down, is not this one's. An older round's words are dropped
  // (their receivers have moved on); the rest wait for their SETBM. (The same round with
  // another shape goes out: its receivers report the mismatch.)
  const BmEntry* own = forwarded ? nullptr : mask_of(ppn, tag, msg.op_id);
  if (!forwarded && !own) {
    parked_.push_back(msg);
    return;
  }
  // A pass through this level: serviced like a command, then onto the links.
  cycles_ = std::max(cycles_, ready_at) + cost(msg);
  if (!barrier) ram_.gas(ppn, tag) = wire::payload(msg);
  if (forwarded) {
    complete_operation(ppn, tag, msg, out);
    return;
  }
  const uint64_t mask = own->mask;
  free_mask(ppn, tag, own);
  cast_went_out(ppn, tag, msg.op_id);
  Message data = msg;
  data.ins.x = false;
  // A broadcast is not sent back to its sender: its channel may be in this
  // level-1's mask (set for every receiving node of the controller).
  const uint64_t source = msg.addr.cntno == own_cntno() ? channel_bit(msg.addr.chno) : 0;
  emit(mask & ~source, data, out);
}

void Controller::deliver_parked(uint8_t ppn, uint32_t first, uint32_t n, std::vector<Delivery>& out) {
  // One SETBM is for one operation on each of its tags: the oldest result parked for
  // the tag that has its mask now goes out with it; older rounds' are dropped.
  for (uint32_t tag = first; tag - first < n && !parked_.empty(); ++tag) {
    std::erase_if(parked_, [&](const Message& m) {
      return m.ins.ppn == ppn && m.addr.msgtag == tag && older_than_a_mask(ppn, tag, m.op_id);
    });
    for (;;) {
      auto it = std::find_if(parked_.begin(), parked_.end(), [&](const Message& m) {
        return m.ins.ppn == ppn && m.addr.msgtag == tag && mask_of(ppn, tag, m.op_id) != nullptr;
      });
      if (it == parked_.end()) break;
      const Message m = *it;
      parked_.erase(it);
      relay_down(m, cycles_, out);
    }
  }
}

const BmEntry* Controller::mask_of(uint8_t ppn, uint32_t tag, uint64_t op_id) const {
  const BmEntry& bm = ram_.bm(ppn, tag);
  if (bm.accessed && (!holds_masks() || wire::identity_same_round(op_id, bm.op_id))) return &bm;
  for (const HeldMask& h : held_masks_)
    if (h.ppn == ppn && h.tag == tag && wire::identity_same_round(op_id, h.entry.op_id)) return &h.entry;
  return nullptr;
}

void Controller::free_mask(uint8_t ppn, uint32_t tag, const BmEntry* m) {
  for (auto it = held_masks_.begin(); it != held_masks_.end(); ++it)
    if (&it->entry == m) {
      held_masks_.erase(it);
      return;
    }
  ram_.update_bm(ppn, tag, [](BmEntry& e) { e.accessed = false; });
}

void Controller::cast_went_out(uint8_t ppn, uint32_t tag, uint64_t op_id) {
  if (holds_masks() && op_id != 0) cast_done_[(uint64_t{ppn} << 32) | tag] = op_id;
}

bool Controller::cast_gone(uint8_t ppn, uint32_t tag, uint64_t op_id) const {
  if (op_id == 0) return false;
  const auto it = cast_done_.find((uint64_t{ppn} << 32) | tag);
  return it != cast_done_.end() && wire::identity_same_round(op_id, it->second);
}

bool Controller::older_than_a_mask(uint8_t ppn, uint32_t tag, uint64_t op_id) {
  const BmEntry& bm = ram_.bm(ppn, tag);
  if (bm.accessed && wire::identity_older(op_id, bm.op_id)) return true;
  return std::any_of(held_masks_.begin(), held_masks_.end(), [&](const HeldMask& h) {
    return h.ppn == ppn && h.tag == tag && wire::identity_older(op_id, h.entry.op_id);
  });
}

int Controller::void_held_masks(uint8_t ppn, uint32_t first, uint32_t n,
                                const std::function<bool(const BmEntry&)>& doomed, uint64_t except, Error why,
                                std::vector<Delivery>& out) {
  int voided = 0;
  for (auto it = held_masks_.begin(); it != held_masks_.end();) {
    if (it->ppn != ppn || it->tag < first || it->tag - first >= n || !doomed(it->entry)) {
      ++it;
      continue;
    }
    const uint64_t dest = it->entry.mask & ~except;
    Message nack = wire::make(Opcode::NACK, 0, Space::GAS, it->tag);
    nack.ins.ppn = ppn;
    nack.op_id = it->entry.op_id;
    nack.data1 = wire::nack_data(why, Opcode::BENTRY);
    it = held_masks_.erase(it);
    voided++;
    if (dest == 0) continue;
    stats_.nacks++;
    out.push_back(Delivery{dest, nack, cycles_, true});
    out.back().ends_operation = true;
  }
  return voided;
}

void Controller::void_upward(uint8_t ppn, uint32_t tag, Error why, std::vector<Delivery>& out) {
  if (config_.level != 1 || !config_.has_parent || !ram_.tc(ppn, tag).up) return;
  Message nack = wire::make(Opcode::NACK, 0, Space::GAS, tag);
  nack.ins.ppn = ppn;
  nack.addr.cntno = own_cntno();
  nack.data1 = wire::nack_data(why, Opcode::BENTRY);
  nack.op_id = ram_.tc(ppn, tag).op_id;
  send_up(nack, Hop{}, out);
}

Error Controller::mismatch_from_child(int channel, const Message& nack, std::vector<Delivery>& out) {
  void_from_child(channel, nack, out);
  passed_on_ = true;  // not a command: the level-1 waits for no ACK of it
  return Error::none;
}

void Controller::void_from_child(int channel, const Message& nack, std::vector<Delivery>& out) {
  const uint8_t ppn = nack.ins.ppn;
  const uint32_t tag = nack.addr.msgtag;
  if (ppn >= ram_.partitions() || tag >= config_.gas_words) return;
  const TcEntry& tc = ram_.tc(ppn, tag);
  if (!tc.accessed || !(tc.mask & channel_bit(channel))) return;
  const BmEntry& bm = ram_.bm(ppn, tag);
  if (wire::nack_error(nack.data1) == Error::mismatch && (tc.pending & channel_bit(channel))) {
    // Its nodes disagreed (global_ops.cpp, contribute): counted as its contribution, and the
    // operation ends with the mismatch once every level-1 has come, so none starts it anew.
    // That level-1 has told its nodes and freed its entries (its nodes may be in the next
    // operation on the tag already): the end is not sent to it (tc.ended).
    ram_.update_tc(ppn, tag, [&](TcEntry& e) {
      e.pending &= ~channel_bit(channel);
      e.mismatch = true;
      e.ended |= channel_bit(channel);
    });
    if (tc.pending == 0)
      fail_operation(ppn, tag, (tc.mask | (bm.accessed ? bm.mask : 0)) & ~tc.ended, Error::mismatch, out);
    return;
  }
  fail_operation(ppn, tag, (tc.mask | (bm.accessed ? bm.mask : 0)) & ~channel_bit(channel) & ~tc.ended,
                 wire::nack_error(nack.data1), out);
}

}  // namespace cop::controller
