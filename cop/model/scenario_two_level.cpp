#include "model/scenario_two_level.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "controller/controller.h"
#include "lib/commands.h"

namespace cop::model {

using controller::Controller;
using controller::Delivery;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

constexpr uint32_t kTag = 100;
constexpr commands::Sender kTask{1, 0};  // every node's task: TKNO 1, partition 0
constexpr int kPerLevel1 = wire::kChannels;

uint64_t low_bits(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

class TwoLevel {
 public:
  TwoLevel(int nodes, const Timing& t) : nodes_(nodes), level1s_((nodes + kPerLevel1 - 1) / kPerLevel1) {
    if (level1s_ > 1) l2_.emplace(config(2, level1s_, 0, false), t);
    for (int k = 0; k < level1s_; ++k) l1_.emplace_back(config(1, channels_of(k), k, level1s_ > 1), t);
  }

  int level1s() const { return level1s_; }
  bool two_levels() const { return l2_.has_value(); }
  int channels_of(int k) const { return std::min(kPerLevel1, nodes_ - k * kPerLevel1); }
  uint64_t local_all(int k) const { return low_bits(channels_of(k)); }
  uint64_t level2_all() const { return low_bits(level1s_); }

  // Node i's command, ready at `ready_at` (its X bit set when there are two levels).
  void send(int i, Message m, uint64_t ready_at) {
    m.ins.x = two_levels() && m.ins.opcode != Opcode::SETTC && m.ins.opcode != Opcode::SETBM ? true : m.ins.x;
    const int k = i / kPerLevel1;
    std::vector<Delivery> out;
    l1_[size_t(k)].receive(i % kPerLevel1 + 1, m, ready_at, out);
    route_from_l1(k, out);
  }

  // Runs the cores and moves what goes between them until nothing moves.
  void settle() {
    for (bool moved = true; moved;) {
      moved = false;
      for (int k = 0; k < level1s_; ++k) {
        std::vector<Delivery> out;
        moved |= l1_[size_t(k)].run(out) > 0;
        route_from_l1(k, out);
      }
      if (!l2_) break;
      for (auto& [k, d] : std::exchange(up_, {})) {
        std::vector<Delivery> out;
        l2_->receive_from_child(k + 1, d, out);
        route_from_l2(out);
        moved = true;
      }
      std::vector<Delivery> out;
      moved |= l2_->run(out) > 0;
      route_from_l2(out);
      for (auto& [k, d] : std::exchange(down_, {})) {
        std::vector<Delivery> back;
        l1_[size_t(k)].receive_from_parent(d, back);
        route_from_l1(k, back);
        moved = true;
      }
    }
  }

  // From here on, results to nodes are the call's.
  uint64_t start_clock() {
    uint64_t t0 = l2_ ? l2_->cycles() : 0;
    for (const auto& c : l1_) t0 = std::max(t0, c.cycles());
    timing_ = true;
    results_.clear();
    nacks_ = 0;
    serviced0_ = serviced();
    return t0;
  }
  uint64_t serviced() const {
    uint64_t n = l2_ ? l2_->stats().serviced : 0;
    for (const auto& c : l1_) n += c.stats().serviced;
    return n;
  }
  uint64_t serviced_since_start() const { return serviced() - serviced0_; }
  const std::vector<Delivery>& results() const { return results_; }
  uint64_t nacks() const { return nacks_; }

 private:
  static controller::Config config(int level, int channels, int cntno, bool parent) {
    controller::Config c;
    c.level = level;
    c.has_parent = parent;
    c.channels = channels;
    c.cntno = static_cast<uint8_t>(cntno);
    c.gas_words = 1024;
    c.sas_words = wire::kChannels + 1;
    c.partitions = 1;
    c.tas_words = 16;
    return c;
  }

  void route_from_l1(int k, const std::vector<Delivery>& out) {
    for (const Delivery& d : out) {
      if (d.to_parent) {
        up_.emplace_back(k, d);
      } else if (timing_ && d.msg.ins.opcode == Opcode::NACK) {
        ++nacks_;
      } else if (timing_ && !d.link_level && d.msg.addr.msgtag == kTag) {
        results_.push_back(d);
      }
    }
  }
  void route_from_l2(const std::vector<Delivery>& out) {
    for (const Delivery& d : out)
      for (int k = 0; k < level1s_; ++k)
        if (d.to(k + 1)) down_.emplace_back(k, d);
  }

  int nodes_;
  int level1s_;
  std::optional<Controller> l2_;
  std::vector<Controller> l1_;
  std::vector<std::pair<int, Delivery>> up_, down_;
  bool timing_ = false;
  std::vector<Delivery> results_;
  uint64_t nacks_ = 0;
  uint64_t serviced0_ = 0;
};

Message mask_cmd(Opcode op, uint64_t mask, bool x) {
  Message m = commands::mask_command(kTask, op, kTag, mask, 1);
  m.ins.x = x;
  return m;
}

// The masks of the call, set by the first node of each level-1 (and node 0 for the level 2).
void set_masks(TwoLevel& s, Function f) {
  for (int k = 0; k < s.level1s(); ++k) {
    const int first = k * kPerLevel1;
    if (f == Function::bcast) {
      const uint64_t receivers = k == 0 ? s.local_all(0) & ~uint64_t{1} : s.local_all(k);
      if (receivers) s.send(first, mask_cmd(Opcode::SETBM, receivers, false), 0);
      continue;
    }
    s.send(first, mask_cmd(Opcode::SETTC, s.local_all(k), false), 0);
    if (f == Function::reduce) s.send(first, mask_cmd(Opcode::SETBM, s.local_all(k), false), 0);
  }
  if (s.two_levels()) {
    if (f != Function::bcast) s.send(0, mask_cmd(Opcode::SETTC, s.level2_all(), true), 0);
    if (f != Function::barrier_spmd) s.send(0, mask_cmd(Opcode::SETBM, s.level2_all(), true), 0);
  }
  s.settle();
}

}  // namespace

TwoLevelResult simulate_two_level(Function f, DataType type, int nodes, const Timing& timing) {
  if (nodes < 2 || nodes > kPerLevel1 * wire::kChannels) throw std::invalid_argument("nodes must be 2..4096");
  if (f == Function::barrier_master_slave) f = Function::barrier_spmd;
  if (f != Function::barrier_spmd && f != Function::reduce && f != Function::bcast)
    throw std::invalid_argument("a two-level scenario is a barrier, a reduce or a bcast");
  TwoLevel s(nodes, timing);
  set_masks(s, f);
  const uint64_t t0 = s.start_clock();
  const uint64_t ready = t0 + timing.t_cn_cop;  // every node writes at t0
  const Opcode op = type == DataType::floating ? Opcode::SUMF : Opcode::SUMI64;
  if (f == Function::bcast) {
    Message b = commands::command(kTask, Opcode::BCAST64, Space::GAS, kTag);
    b.set_data64(0x5EED);
    s.send(0, b, ready);
  } else {
    for (int i = 0; i < nodes; ++i) {
      Message m = commands::command(kTask, f == Function::reduce ? op : Opcode::BENTRY, Space::GAS, kTag);
      if (f == Function::reduce)
        wire::set_payload(m, type == DataType::floating ? std::bit_cast<uint64_t>(double(i)) : uint64_t(i));
      s.send(i, m, ready);
    }
  }
  s.settle();
  // Every node (but a broadcast's root) holds exactly one result, and the right one.
  const uint64_t sum = uint64_t(nodes) * uint64_t(nodes - 1) / 2;
  const uint64_t want = type == DataType::floating ? std::bit_cast<uint64_t>(double(sum)) : sum;
  uint64_t delivered = 0, end = t0;
  for (const Delivery& d : s.results()) {
    delivered += uint64_t(std::popcount(d.channels));
    end = std::max(end, d.at_cycle);
    if (f == Function::reduce && wire::payload(d.msg) != want) throw std::logic_error("wrong reduction result");
    if (f == Function::bcast && d.msg.data64() != 0x5EED) throw std::logic_error("wrong broadcast data");
  }
  if (s.nacks() != 0 || delivered != uint64_t(f == Function::bcast ? nodes - 1 : nodes))
    throw std::logic_error("the two-level collective did not reach every node");
  TwoLevelResult r;
  r.cycles = end - t0;
  r.us = timing.us(r.cycles);
  r.level1s = s.level1s();
  r.passes = s.two_levels() ? 3 : 1;
  r.serviced = s.serviced_since_start();
  return r;
}

}  // namespace cop::model
