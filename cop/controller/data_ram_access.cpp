// RSRAM, WSRAM and RMW (seed 000 ch. V, Table I): the commands that read and
// write one Data RAM word of a task, global or system address space, and the
// mask RAM read (RSRAM64 with M). Protection is the thesis's: only the owner
// task writes its task address space, anyone reads it, RMW updates any; only
// the operating system (U/S) writes the system address space.
#include "controller/controller.h"

#include <bit>

namespace cop::controller {

using wire::Error;
using wire::Message;
using wire::Opcode;

namespace {

bool is_write(Opcode op) { return op == Opcode::WSRAM32 || op == Opcode::WSRAM64; }
bool is_rmw(Opcode op) { return op == Opcode::RMW32 || op == Opcode::RMW64; }

// The value a read-modify-write leaves in the word: a 32-bit or 64-bit integer
// add, or with the M bit an add in the floating-point unit.
uint64_t rmw_result(const Message& msg, uint64_t old) {
  if (msg.ins.opcode == Opcode::RMW32) return uint32_t(uint32_t(old) + msg.data1);
  if (msg.ins.m) return std::bit_cast<uint64_t>(std::bit_cast<double>(old) + std::bit_cast<double>(msg.data64()));
  return old + msg.data64();
}

}  // namespace

Error Controller::data_ram_access(int channel, const Message& msg, Sender from, std::vector<Delivery>& out) {
  const Opcode op = msg.ins.opcode;
  if (op == Opcode::RSRAM64 && msg.ins.m) return read_mask_entry(channel, msg, out);
  // A write to a GAS word whose operation is in progress is its initial value.
  if (is_write(op) && msg.ins.space == wire::Space::GAS && ram_.tc(msg.ins.ppn, msg.addr.msgtag).accessed)
    return initialise_operation(channel, msg, out);
  uint64_t* word = nullptr;
  if (Error e = locate_word(channel, msg, from, word); e != Error::none) return e;
  if (is_write(op)) {
    *word = wire::payload(msg);
    return Error::none;
  }
  Message reply = msg;
  const uint64_t old = *word;
  if (is_rmw(op)) *word = rmw_result(msg, old);
  wire::set_payload(reply, wire::is_64bit(op) ? old : uint32_t(old));
  answer(channel, reply, out);
  return Error::none;
}

Error Controller::read_mask_entry(int channel, const Message& msg, std::vector<Delivery>& out) {
  // The entry's live mask (the TC entry's channels still pending), 0 when idle.
  Message reply = msg;
  if (msg.ins.msel_bcast) {
    const BmEntry& e = ram_.bm(msg.ins.ppn, msg.addr.msgtag);
    reply.set_data64(e.accessed ? e.mask : 0);
  } else {
    const TcEntry& e = ram_.tc(msg.ins.ppn, msg.addr.msgtag);
    reply.set_data64(e.accessed ? e.pending : 0);
  }
  answer(channel, reply, out);
  return Error::none;
}

Error Controller::initialise_operation(int channel, const Message& msg, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const TcEntry& tc = ram_.tc(ppn, tag);
  // The first channel of a reduction initialises the partial result with
  // its own contribution (ch. V); anything later would clobber others'.
  if (!(tc.pending & channel_bit(channel)) || tc.has_value) return Error::mask_in_use;
  ram_.gas(ppn, tag) = wire::payload(msg);
  ram_.update_tc(ppn, tag, [&](TcEntry& e) {
    e.has_value = true;
    e.pending &= ~channel_bit(channel);
  });
  if (tc.pending == 0) {
    Message as_bcast = msg;
    as_bcast.ins.opcode = wire::is_64bit(msg.ins.opcode) ? Opcode::BCAST64 : Opcode::BCAST32;
    complete_operation(ppn, tag, as_bcast, out);
  }
  return Error::none;
}

Error Controller::locate_word(int channel, const Message& msg, Sender from, uint64_t*& word) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  const bool write = is_write(msg.ins.opcode);
  const bool rmw = is_rmw(msg.ins.opcode);
  switch (msg.ins.space) {
    case wire::Space::TAS: {
      const int target = msg.ins.z ? msg.addr.chno : channel;
      if (!in_partition(target, ppn)) return Error::partition;
      const uint32_t task = msg.addr.ttkno();
      // ch. V: only the owner task writes its task address space (anyone reads;
      // RMW may update others'). The owner is this channel and the sender's own
      // task number; the operating system (U/S) may write any.
      const uint16_t actor = from.supervisor ? msg.ins.tkno : from.tkno;
      if (write && !msg.ins.supervisor && (target != channel || task != actor)) return Error::protection;
      word = &ram_.tas(ppn, target, task, msg.addr.tas_offset());
      return Error::none;
    }
    case wire::Space::GAS:
      word = &ram_.gas(ppn, tag);
      return Error::none;
    case wire::Space::SAS:
      if ((write || rmw) && !msg.ins.supervisor) return Error::privilege;
      if ((write || rmw) && tag >= 1 && tag <= uint32_t(config_.channels)) {
        // A channel's partition assignment: must name an existing partition.
        const uint64_t v = write ? (wire::is_64bit(msg.ins.opcode) ? msg.data64() : msg.data1) : rmw_result(msg, ram_.sas(tag));
        if (v >= uint64_t(config_.partitions)) return Error::address_range;
      }
      word = &ram_.sas(tag);
      return Error::none;
  }
  return Error::address_range;  // SPACE 3 is reserved: validate refused it already
}

}  // namespace cop::controller
