#include "model/scenario.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "controller/controller.h"

namespace cop::model {

using controller::channel_bit;
using controller::Controller;
using controller::Delivery;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

constexpr uint32_t kBackgroundTag = 32768;  // GAS region the other channels' own work uses
constexpr uint32_t kCallTag = 100;         // GAS offset of the target's collective
constexpr uint16_t kTask = 1;

uint32_t background_tag(int channel) { return kBackgroundTag + uint32_t(channel - 1) * 128; }

Message cmd(Opcode op, Space space = Space::GAS, uint32_t tag = 0) { return wire::make(op, kTask, space, tag); }

Message mask_cmd(Opcode op, uint32_t tag, uint64_t mask, uint64_t count) {
  Message m = cmd(op, Space::GAS, tag);
  m.set_count(int(count));
  m.set_data64(mask);
  return m;
}

using Visit = std::vector<Message>;

// SETTC/SETBM for `n` entries, in as many commands as the 10-bit count needs.
void push_masks(Visit& v, Opcode op, uint32_t tag, uint64_t mask, uint64_t n) {
  for (uint64_t done = 0; done < n; done += 1024)
    v.push_back(mask_cmd(op, tag + uint32_t(done), mask, std::min<uint64_t>(1024, n - done)));
}

// Element e of a task's data: its own task address space while it fits (1024
// words), the GAS for the long arrays of ch. VI's derived figures.
Message data_cmd(Opcode op, uint64_t e, uint64_t n) {
  if (n <= 1024) return cmd(op, Space::TAS, wire::Address::tas_tag(kTask, uint32_t(e)));
  return cmd(op, Space::GAS, kCallTag + uint32_t(e));
}

// The other channels' own work, as Table III's loads describe it.
Visit background_visit(int channel, DataType type, Column column, const Timing& t) {
  if (column == Column::best) {
    // One unlocked command of the row's type, with no answer.
    if (type == DataType::integer)
      return {cmd(Opcode::WSRAM64, Space::TAS, wire::Address::tas_tag(kTask, 0))};
    return {cmd(Opcode::SUMF, Space::GAS, background_tag(channel))};  // into a reduction still waiting
  }
  // Upper bound: a locked 128-element floating-point operation, every element broadcast.
  const uint64_t n = t.max_op_messages;
  Visit v{cmd(Opcode::LOCK), mask_cmd(Opcode::SETTC, background_tag(channel), channel_bit(channel), n),
          mask_cmd(Opcode::SETBM, background_tag(channel), channel_bit(channel), n)};
  for (uint64_t i = 0; i < n; ++i) v.push_back(cmd(Opcode::SUMF, Space::GAS, background_tag(channel) + uint32_t(i)));
  v.push_back(cmd(Opcode::UNLOCK));
  return v;
}

}  // namespace

SimulationResult simulate(Function f, DataType type, Column column, const Timing& t, uint64_t c_bar,
                          uint64_t elements) {
  if (c_bar > 63) throw std::invalid_argument("C̄ is 0..63 on a single-level COP");
  if (elements < 1 || elements > 8192) throw std::invalid_argument("elements must be 1..8192");
  if (column == Column::max && t.max_op_messages > 128) throw std::invalid_argument("bursts are at most 128 messages");
  controller::Config cfg;
  cfg.gas_words = 65536;
  cfg.tas_words = 1024;
  Controller ctl(cfg, t);
  std::vector<Delivery> out;
  const int target = int(c_bar) + 1;
  const uint64_t n = elements;
  const Opcode element_op = type == DataType::floating ? Opcode::SUMF : Opcode::SUMI64;
  uint64_t everyone = 0;
  for (int c = 1; c <= target; ++c) everyone |= channel_bit(c);

  // Setup, before the clock of interest: the best-case floating-point load
  // contributes to reductions that also wait for the target, so it never completes.
  // The target sends the setup, so the poll counter has just passed it: in
  // the round robin it comes after all C̄ others, as ch. VI assumes.
  if (column == Column::best && type == DataType::floating)
    for (int c = 1; c < target; ++c)
      ctl.receive(target, mask_cmd(Opcode::SETTC, background_tag(c), channel_bit(c) | channel_bit(target), 1), out);
  ctl.receive(target, cmd(Opcode::PROBE), out);
  ctl.run(out);
  if (ctl.stats().nacks != 0) throw std::logic_error("scenario setup refused");
  const uint64_t t0 = ctl.cycles();
  const uint64_t serviced0 = ctl.stats().serviced, nacks0 = ctl.stats().nacks;

  // Every channel writes its first command at t0; it is ready t_CN-COP later.
  // Later commands of a channel are pipelined behind it (ch. VI: the ACK lets
  // the next command in while the current one is serviced).
  const uint64_t ready = t0 + t.t_cn_cop;
  auto queue = [&](int channel, const Visit& v) {
    for (const Message& m : v) ctl.receive(channel, m, ready, out);
  };

  // The others: their load first (the C̄ x t̄OP ahead of the target), then their part in the call.
  for (int c = 1; c < target; ++c) {
    queue(c, background_visit(c, type, column, t));
    switch (f) {
      case Function::reduce:
        for (uint64_t e = 0; e < n; ++e) {
          Visit contribution{cmd(element_op, Space::GAS, kCallTag + uint32_t(e))};
          const bool last_channel = c == target - 1;
          if (column == Column::max && !last_channel) {
            // A channel that keeps locking sends its contribution inside its locked visit.
            Visit v = background_visit(c, type, column, t);
            v.insert(v.end() - 1, contribution.front());
            queue(c, v);
          } else {
            queue(c, contribution);
          }
        }
        break;
      case Function::barrier_spmd:
        queue(c, {cmd(Opcode::LOCK), mask_cmd(Opcode::SETTC, kCallTag, everyone, 1), cmd(Opcode::BENTRY, Space::GAS, kCallTag),
                  cmd(Opcode::UNLOCK)});
        break;
      case Function::barrier_master_slave:
        queue(c, {cmd(Opcode::BENTRY, Space::GAS, kCallTag)});
        break;
      default:
        break;
    }
  }

  // The target channel: exactly the commands of the libcop call (ch. V).
  Visit call{cmd(Opcode::LOCK)};
  const Opcode move64 = Opcode::WSRAM64;
  switch (f) {
    case Function::write:
      for (uint64_t e = 0; e < n; ++e) call.push_back(data_cmd(move64, e, n));
      break;
    case Function::read:
      for (uint64_t e = 0; e < n; ++e) call.push_back(data_cmd(Opcode::RSRAM64, e, n));
      break;
    case Function::rmw:
      for (uint64_t e = 0; e < n; ++e) {
        Message r = data_cmd(Opcode::RMW64, e, n);
        r.ins.m = type == DataType::floating;  // the FP unit adds doubles
        call.push_back(r);
      }
      break;
    case Function::bcast:
      push_masks(call, Opcode::SETBM, kCallTag, everyone & ~channel_bit(target), n);
      for (uint64_t e = 0; e < n; ++e) call.push_back(cmd(Opcode::BCAST64, Space::GAS, kCallTag + uint32_t(e)));
      break;
    case Function::reduce:
      push_masks(call, Opcode::SETTC, kCallTag, everyone, n);
      push_masks(call, Opcode::SETBM, kCallTag, everyone, n);
      for (uint64_t e = 0; e < n; ++e) call.push_back(cmd(move64, Space::GAS, kCallTag + uint32_t(e)));
      break;
    case Function::barrier_spmd:
    case Function::barrier_master_slave:
      call.push_back(mask_cmd(Opcode::SETTC, kCallTag, everyone, 1));
      call.push_back(mask_cmd(Opcode::SETBM, kCallTag, everyone, 1));
      call.push_back(cmd(Opcode::BENTRY, Space::GAS, kCallTag));
      break;
  }
  call.push_back(cmd(Opcode::UNLOCK));
  queue(target, call);

  // Run to the end and find the call's end: the target's UNLOCK for the
  // point-to-point calls and broadcasts, the last result broadcast for reduce
  // and barrier (when every root or participant has it).
  ctl.run(out);
  const bool collective = f == Function::reduce || f == Function::barrier_spmd || f == Function::barrier_master_slave;
  uint64_t end = 0;
  int results = 0;
  for (const Delivery& d : out) {
    if (d.at_cycle < t0) continue;
    const Message& m = d.msg;
    if (collective) {
      if (!d.link_level && m.ins.space == Space::GAS && m.addr.msgtag >= kCallTag && m.addr.msgtag < kCallTag + n &&
          m.addr.chno == 0) {
        end = std::max(end, d.at_cycle);
        ++results;
      }
    } else if (d.link_level && d.channels == channel_bit(target) && m.ins.opcode == Opcode::ACK) {
      end = std::max(end, d.at_cycle);  // the last ACK to the target is its UNLOCK's
    }
  }
  if (collective && uint64_t(results) != (f == Function::reduce ? n : 1))
    throw std::logic_error("scenario did not complete its collective");
  SimulationResult r;
  r.cycles = end - t0;
  r.serviced = ctl.stats().serviced - serviced0;
  r.nacks = ctl.stats().nacks - nacks0;
  return r;
}

}  // namespace cop::model
