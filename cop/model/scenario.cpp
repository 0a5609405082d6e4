#include "model/scenario.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "controller/controller.h"
#include "lib/commands.h"

namespace cop::model {

using commands::Burst;
using controller::channel_bit;
using controller::Controller;
using controller::Delivery;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

constexpr uint32_t kBackgroundTag = 32768;  // GAS region the other channels' own work uses
constexpr uint32_t kCallTag = 100;         // GAS offset of the target's collective
constexpr commands::Sender kTask{1, 0};    // every channel's task: TKNO 1, partition 0

uint32_t background_tag(int channel) { return kBackgroundTag + uint32_t(channel - 1) * 128; }

Message cmd(Opcode op, Space space = Space::GAS, uint32_t tag = 0) { return commands::command(kTask, op, space, tag); }

Message mask_cmd(Opcode op, uint32_t tag, uint64_t mask) { return commands::mask_command(kTask, op, tag, mask, 1); }

// Element e of a task's data: its own task address space while it fits (1024
// words), the GAS for the long arrays of ch. VI's derived figures.
Message data_cmd(Opcode op, uint64_t e, uint64_t n) {
  if (n <= 1024) return cmd(op, Space::TAS, wire::Address::tas_tag(kTask.tkno, uint32_t(e)));
  return cmd(op, Space::GAS, kCallTag + uint32_t(e));
}

// The other channels' own work, as Table III's loads describe it.
Burst background_visit(int channel, DataType type, Column column, const Timing& t) {
  if (column == Column::best) {
    // One unlocked command of the row's type, with no answer.
    if (type == DataType::integer) return {cmd(Opcode::WSRAM64, Space::TAS, wire::Address::tas_tag(kTask.tkno, 0))};
    return {cmd(Opcode::SUMF, Space::GAS, background_tag(channel))};  // into a reduction still waiting
  }
  // Upper bound: a locked 128-element floating-point operation, every element broadcast.
  const std::vector<uint64_t> zeros(t.max_op_messages, 0);
  return commands::reduction(kTask, Opcode::SUMF, background_tag(channel), zeros, channel_bit(channel),
                             channel_bit(channel));
}

// One libcop call in a scenario: which, on what, against which load.
struct Call {
  Function f;
  DataType type;
  Column column;
  uint64_t n;       // elements
  int target;       // the target's channel, after the C̄ others
  uint64_t everyone;  // every channel of the scenario
};

// The target channel's burst: exactly the commands of the libcop call (ch. V).
Burst target_call(const Call& c) {
  const uint64_t n = c.n;
  const std::vector<uint64_t> zeros(n, 0);
  switch (c.f) {
    case Function::bcast:
      return commands::broadcast(kTask, Opcode::BCAST64, kCallTag, zeros, c.everyone & ~channel_bit(c.target));
    case Function::reduce:
      return commands::reduction(kTask, Opcode::WSRAM64, kCallTag, zeros, c.everyone, c.everyone);
    case Function::barrier_spmd:
    case Function::barrier_master_slave:
      return commands::barrier(kTask, kCallTag, c.everyone);
    default:
      break;
  }
  Burst call{cmd(Opcode::LOCK)};
  const Opcode op = c.f == Function::write ? Opcode::WSRAM64 : c.f == Function::read ? Opcode::RSRAM64 : Opcode::RMW64;
  for (uint64_t e = 0; e < n; ++e) {
    Message m = data_cmd(op, e, n);
    m.ins.m = c.f == Function::rmw && c.type == DataType::floating;  // the FP unit adds doubles
    call.push_back(m);
  }
  call.push_back(cmd(Opcode::UNLOCK));
  return call;
}

// The controller with the scenario's setup done, before the clock of interest.
class Scenario {
 public:
  Scenario(const Call& c, const Timing& t) : c_(c), t_(t), ctl_(config(), t) {}

  // The best-case floating-point load contributes to reductions that also wait
  // for the target, so it never completes. The target sends the setup, so the
  // poll counter has just passed it: in the round robin it comes after all C̄
  // others, as ch. VI assumes.
  void set_up() {
    if (c_.column == Column::best && c_.type == DataType::floating)
      for (int other = 1; other < c_.target; ++other)
        ctl_.receive(c_.target,
                     commands::mask_command(kTask, Opcode::SETTC, background_tag(other),
                                            channel_bit(other) | channel_bit(c_.target), 1),
                     out_);
    ctl_.receive(c_.target, cmd(Opcode::PROBE), out_);
    ctl_.run(out_);
    if (ctl_.stats().nacks != 0) throw std::logic_error("scenario setup refused");
    t0_ = ctl_.cycles();
    serviced0_ = ctl_.stats().serviced;
    nacks0_ = ctl_.stats().nacks;
  }

  // Every channel writes its first command at t0; it is ready t_CN-COP later.
  // Later commands of a channel are pipelined behind it (ch. VI: the ACK lets
  // the next command in while the current one is serviced).
  void queue(int channel, const Burst& b) {
    for (const Message& m : b) ctl_.receive(channel, m, t0_ + t_.t_cn_cop, out_);
  }

  // The others: their load first (the C̄ x t̄OP ahead of the target), then their part in the call.
  void queue_others() {
    for (int other = 1; other < c_.target; ++other) {
      queue(other, background_visit(other, c_.type, c_.column, t_));
      queue_part_in_call(other);
    }
  }

  void queue_target() { queue(c_.target, target_call(c_)); }

  // Runs to the end and finds the call's end: the target's UNLOCK for the
  // point-to-point calls and broadcasts, the last result broadcast for reduce
  // and barrier (when every root or participant has it).
  SimulationResult finish() {
    ctl_.run(out_);
    const bool collective =
        c_.f == Function::reduce || c_.f == Function::barrier_spmd || c_.f == Function::barrier_master_slave;
    uint64_t end = 0;
    uint64_t results = 0;
    for (const Delivery& d : out_) {
      if (d.at_cycle < t0_) continue;
      const bool counts = collective ? is_call_result(d) : is_ack_to_target(d);
      if (!counts) continue;
      end = std::max(end, d.at_cycle);
      ++results;
    }
    if (collective && results != (c_.f == Function::reduce ? c_.n : 1))
      throw std::logic_error("scenario did not complete its collective");
    SimulationResult r;
    r.cycles = end - t0_;
    r.serviced = ctl_.stats().serviced - serviced0_;
    r.nacks = ctl_.stats().nacks - nacks0_;
    return r;
  }

 private:
  static controller::Config config() {
    controller::Config cfg;
    cfg.gas_words = 65536;
    cfg.tas_words = 1024;
    return cfg;
  }

  void queue_part_in_call(int other) {
    switch (c_.f) {
      case Function::reduce: queue_contributions(other); break;
      case Function::barrier_spmd:
        queue(other, {cmd(Opcode::LOCK), mask_cmd(Opcode::SETTC, kCallTag, c_.everyone),
                      cmd(Opcode::BENTRY, Space::GAS, kCallTag), cmd(Opcode::UNLOCK)});
        break;
      case Function::barrier_master_slave: queue(other, {cmd(Opcode::BENTRY, Space::GAS, kCallTag)}); break;
      default: break;
    }
  }

  void queue_contributions(int other) {
    const Opcode element_op = c_.type == DataType::floating ? Opcode::SUMF : Opcode::SUMI64;
    const bool last_channel = other == c_.target - 1;
    for (uint64_t e = 0; e < c_.n; ++e) {
      const Message contribution = cmd(element_op, Space::GAS, kCallTag + uint32_t(e));
      if (c_.column == Column::max && !last_channel) {
        // A channel that keeps locking sends its contribution inside its locked visit.
        Burst v = background_visit(other, c_.type, c_.column, t_);
        v.insert(v.end() - 1, contribution);
        queue(other, v);
      } else {
        queue(other, {contribution});
      }
    }
  }

  // A result broadcast of the call's collective (from the controller: CHNO 0).
  bool is_call_result(const Delivery& d) const {
    const Message& m = d.msg;
    return !d.link_level && m.ins.space == Space::GAS && m.addr.msgtag >= kCallTag && m.addr.msgtag < kCallTag + c_.n &&
           m.addr.chno == 0;
  }
  // The last ACK to the target is its UNLOCK's.
  bool is_ack_to_target(const Delivery& d) const {
    return d.link_level && d.channels == channel_bit(c_.target) && d.msg.ins.opcode == Opcode::ACK;
  }

  Call c_;
  const Timing& t_;
  Controller ctl_;
  std::vector<Delivery> out_;
  uint64_t t0_ = 0, serviced0_ = 0, nacks0_ = 0;
};

}  // namespace

SimulationResult simulate(Function f, DataType type, Column column, const Timing& t, uint64_t c_bar,
                          uint64_t elements) {
  if (c_bar > 63) throw std::invalid_argument("C̄ is 0..63 on a single-level COP");
  if (elements < 1 || elements > 8192) throw std::invalid_argument("elements must be 1..8192");
  if (column == Column::max && t.max_op_messages > 128) throw std::invalid_argument("bursts are at most 128 messages");
  const int target = int(c_bar) + 1;
  uint64_t everyone = 0;
  for (int c = 1; c <= target; ++c) everyone |= channel_bit(c);
  Scenario s(Call{f, type, column, elements, target, everyone}, t);
  s.set_up();
  s.queue_others();
  s.queue_target();
  return s.finish();
}

}  // namespace cop::model
