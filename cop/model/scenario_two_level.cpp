#include "model/scenario_two_level.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "controller/controller.h"
#include "lib/commands.h"

namespace cop::model {

using commands::Burst;
using controller::channel_bit;
using controller::Controller;
using controller::Delivery;
using controller::Hop;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

constexpr uint32_t kTag = 100;             // the call's first GAS word
constexpr uint32_t kBackgroundTag = 4096;  // the fellow nodes' own work (one word per channel)
constexpr uint32_t kGasWords = 8192;
constexpr uint64_t kMaxElements = 2048;
constexpr commands::Sender kTask{1, 0};  // every node's task: TKNO 1, partition 0
constexpr int kPerLevel1 = wire::kChannels;

uint64_t low_bits(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// The level-1 cores and the level-2 core, advanced in time order. The links
// between levels take at least min(t_CN-COP, t_COP-CN) cycles, so in a window
// that long nothing one core sends can reach another: each core services what
// it has up to the window's end, then the messages move (conservative
// discrete-event simulation with the links' latency as lookahead). Within its
// window a level-1 services what comes down at the cycle it arrives, between
// two of its channel commands.
class Cores {
 public:
  Cores(int nodes, const Timing& t)
      : t_(t), nodes_(nodes), level1s_((nodes + kPerLevel1 - 1) / kPerLevel1), down_(size_t(level1s_)) {
    if (level1s_ > 1) l2_.emplace(config(2, level1s_, 0, false), t);
    for (int k = 0; k < level1s_; ++k) {
      l1_.emplace_back(config(1, channels_of(k), k, level1s_ > 1), t);
      queued_.emplace_back(size_t(channels_of(k)), 0);
    }
  }

  int level1s() const { return level1s_; }
  bool two_levels() const { return l2_.has_value(); }
  int channels_of(int k) const { return std::min(kPerLevel1, nodes_ - k * kPerLevel1); }

  // A command written on channel `channel` of level-1 `k`, ready at `ready_at`.
  void send(int k, int channel, const Message& m, uint64_t ready_at) {
    std::vector<Delivery> out;
    l1_[size_t(k)].receive(channel, m, ready_at, out);
    ++queued_[size_t(k)][size_t(channel - 1)];
    out_.swap(out);
    route_from_l1(k);
    out_.swap(out);
  }
  void send(int k, int channel, const Burst& b, uint64_t ready_at) {
    for (const Message& m : b) send(k, channel, m, ready_at);
  }

  // Long calls: a node's further commands (all ready at `ready_at`) are
  // written as its earlier ones are serviced, a few ahead (kAhead), so the
  // channel never runs dry and millions of commands are not held at once.
  using Feed = std::function<bool(int k, int channel, Message& next)>;
  void feed(Feed f, uint64_t ready_at) {
    feed_ = std::move(f);
    feed_ready_ = ready_at;
    for (int k = 0; k < level1s_; ++k)
      for (int c = 1; c <= channels_of(k); ++c) top_up(k, c);
  }

  // Requests the other level-1 controllers have waiting at the level 2 when
  // the first command of the timed part arrives there (channel, command).
  void load_level2(std::vector<std::pair<int, Message>> load) { level2_load_ = std::move(load); }

  // From here on, what reaches the nodes is the call's.
  uint64_t start_clock() {
    uint64_t t0 = l2_ ? l2_->cycles() : 0;
    for (const auto& c : l1_) t0 = std::max(t0, c.cycles());
    timing_ = true;
    serviced0_ = serviced();
    return t0;
  }

  void run() {
    const uint64_t window = std::max<uint64_t>(1, std::min(t_.t_cn_cop, t_.t_cop_cn));
    uint64_t end = 0;
    for (;;) {
      end += window;
      bool busy = false;
      for (int k = 0; k < level1s_; ++k) busy |= advance_level1(k, end);
      if (l2_) busy |= advance_level2(end);
      if (busy) continue;
      const uint64_t next = next_message();
      if (next == UINT64_MAX) return;
      end = std::max(end, next - next % window);
    }
  }

  uint64_t serviced_since_start() const { return serviced() - serviced0_; }
  uint64_t nacks() const { return nacks_; }
  // Results and data that reached nodes in the timed part: (level-1, delivery).
  const std::vector<std::pair<int, Delivery>>& to_nodes() const { return to_nodes_; }

 private:
  static controller::Config config(int level, int channels, int cntno, bool parent) {
    controller::Config c;
    c.level = level;
    c.has_parent = parent;
    c.channels = channels;
    c.cntno = static_cast<uint8_t>(cntno);
    c.gas_words = kGasWords;
    c.sas_words = wire::kChannels + 1;
    c.partitions = 1;
    c.tas_words = 16;
    return c;
  }

  uint64_t serviced() const {
    uint64_t n = l2_ ? l2_->stats().serviced : 0;
    for (const auto& c : l1_) n += c.stats().serviced;
    return n;
  }

  uint64_t next_message() const {
    uint64_t next = up_.empty() ? UINT64_MAX : up_.begin()->first;
    for (const auto& d : down_)
      if (!d.empty()) next = std::min(next, d.begin()->first);
    return next;
  }

  // Level-1 k up to `end`: its commands, and what comes down at its cycle.
  // Returns whether it may have more to do.
  bool advance_level1(int k, uint64_t end) {
    Controller& c = l1_[size_t(k)];
    auto& downs = down_[size_t(k)];
    bool stepped = false;
    for (;;) {
      const uint64_t next_down = downs.empty() ? UINT64_MAX : downs.begin()->first;
      if (c.cycles() >= end && next_down >= end) return true;
      out_.clear();
      if (next_down < end && c.cycles() >= next_down) {
        c.receive_from_parent(downs.begin()->second, out_);
        downs.erase(downs.begin());
      } else if (c.cycles() < std::min(next_down, end) && c.step(out_)) {
        stepped = true;
      } else if (next_down < end) {
        c.receive_from_parent(downs.begin()->second, out_);
        downs.erase(downs.begin());
      } else {
        return stepped;
      }
      route_from_l1(k);
    }
  }

  bool advance_level2(uint64_t end) {
    while (!up_.empty() && up_.begin()->first < end) {
      auto [k, d] = up_.begin()->second;
      up_.erase(up_.begin());
      if (timing_ && !d.link_level) queue_level2_load(d.at_cycle);
      out_.clear();
      l2_->receive_from_child(k + 1, d, out_);
      route_from_l2();
    }
    bool stepped = false;
    for (;;) {
      if (l2_->cycles() >= end) return true;
      out_.clear();
      if (!l2_->step(out_)) return stepped;
      stepped = true;
      route_from_l2();
    }
  }

  void queue_level2_load(uint64_t at) {
    for (const auto& [channel, m] : level2_load_) {
      Delivery d{0, m, at, false, true, Hop{Hop::command, controller::Sender{false, kTask.tkno}}};
      std::vector<Delivery> acks;
      l2_->receive_from_child(channel, d, acks);
    }
    level2_load_.clear();
  }

  static constexpr uint32_t kAhead = 4;
  void top_up(int k, int channel) {
    uint32_t& queued = queued_[size_t(k)][size_t(channel - 1)];
    Message m;
    while (feed_ && queued < kAhead && feed_(k, channel, m)) send(k, channel, m, feed_ready_);
  }

  void route_from_l1(int k) {
    refill_.clear();
    for (const Delivery& d : out_) {
      // Each command a node writes is answered once, with an ACK or a NACK.
      const bool answer = d.link_level && !d.to_parent && std::popcount(d.channels) == 1 &&
                          (d.msg.ins.opcode == Opcode::ACK || d.msg.ins.opcode == Opcode::NACK);
      if (answer) {
        const int c = std::countr_zero(d.channels) + 1;
        --queued_[size_t(k)][size_t(c - 1)];
        refill_.push_back(c);
      }
      if (d.to_parent) {
        up_.emplace(d.at_cycle, std::make_pair(k, d));
      } else if (timing_ && d.msg.ins.opcode == Opcode::NACK) {
        nacks_ += uint64_t(std::popcount(d.channels));
      } else if (timing_ && !d.link_level) {
        to_nodes_.emplace_back(k, d);
      }
    }
    if (!feed_) return;
    const std::vector<int> refill = std::move(refill_);
    for (int c : refill) top_up(k, c);
  }
  void route_from_l2() {
    for (const Delivery& d : out_)
      for (int k = 0; k < level1s_; ++k)
        if (d.to(k + 1)) down_[size_t(k)].emplace(d.at_cycle, d);
  }

  const Timing& t_;
  int nodes_;
  int level1s_;
  std::optional<Controller> l2_;
  std::vector<Controller> l1_;
  std::multimap<uint64_t, std::pair<int, Delivery>> up_;   // by arrival at the level 2
  std::vector<std::multimap<uint64_t, Delivery>> down_;    // per level-1, by arrival
  std::vector<std::pair<int, Message>> level2_load_;
  std::vector<Delivery> out_;
  std::vector<std::pair<int, Delivery>> to_nodes_;
  std::vector<std::vector<uint32_t>> queued_;  // per level-1 and channel: commands written, not yet answered
  std::vector<int> refill_;
  Feed feed_;
  uint64_t feed_ready_ = 0;
  bool timing_ = false;
  uint64_t nacks_ = 0;
  uint64_t serviced0_ = 0;
};

// The call of analytic.h's two_level_cycles on the cores (see the header).
class TwoLevelCall {
 public:
  TwoLevelCall(Function f, DataType type, uint64_t n, Cores& s) : f_(f), type_(type), n_(n), s_(s) {}

  // Before the clock: the level-2 entries of the X-bit partition, the
  // reductions the floating-point load contributes to (they wait for the
  // initialising channel, so they never complete), and each level-1's poll
  // counter just past its initialising channel (its fellow nodes come first).
  void set_up() {
    for (int k = 0; k < s_.level1s(); ++k) {
      const int last = s_.channels_of(k);
      if (floating() && (f_ != Function::bcast || k == 0))
        for (int other = 1; other < last; ++other)
          s_.send(k, last, mask(Opcode::SETTC, background_tag(other), channel_bit(other) | channel_bit(last), 1), 0);
    }
    if (s_.two_levels()) set_up_level2();
    for (int k = 0; k < s_.level1s(); ++k) s_.send(k, s_.channels_of(k), commands::command(kTask, Opcode::PROBE), 0);
    s_.run();
  }

  // Every node writes its first command at t0; it is ready t_CN-COP later.
  void queue(uint64_t ready) {
    for (int k = 0; k < s_.level1s(); ++k) {
      const int last = s_.channels_of(k);
      if (f_ == Function::bcast) {
        if (k == 0)
          for (int other = 1; other < last; ++other) s_.send(0, other, background(other), ready);
        else
          s_.send(k, 1, mask(Opcode::SETBM, kTag, low_bits(last), n_, false), ready);  // the receivers' mask
      } else {
        for (int other = 1; other < last; ++other) {
          s_.send(k, other, background(other), ready);
          s_.send(k, other, part_in_call(k), ready);
        }
      }
      if (f_ != Function::bcast || k == 0) s_.send(k, last, initialising_burst(k), ready);
    }
    if (f_ == Function::bcast && s_.two_levels()) s_.load_level2(level2_load());
    if (f_ == Function::reduce) feed_contributions(ready);
  }

  // What every node got: each element exactly once (a broadcast's source
  // none), the same value at every node, and the right one.
  struct Outcome {
    uint64_t end = 0;  // when the last node had its last result
    uint64_t results = 0;
    std::vector<uint64_t> values;  // element e's value, as every node got it (none for a barrier)
  };
  Outcome check(int nodes) const {
    std::vector<uint8_t> got(size_t(nodes) * n_, 0);
    Outcome o;
    const bool barrier = f_ == Function::barrier_spmd || f_ == Function::barrier_master_slave;
    std::vector<std::optional<uint64_t>> value(barrier ? 0 : n_);
    for (const auto& [k, d] : s_.to_nodes()) {
      const uint32_t tag = d.msg.addr.msgtag;
      if (tag < kTag || tag >= kTag + n_ || d.msg.ins.opcode != result_opcode()) continue;
      const uint64_t e = tag - kTag;
      if (!barrier) {
        if (value[e] && *value[e] != wire::payload(d.msg))
          throw std::logic_error("nodes got different values of element " + std::to_string(e));
        value[e] = wire::payload(d.msg);
      }
      for (int c = 1; c <= s_.channels_of(k); ++c)
        if (d.to(c)) ++got[size_t(k * kPerLevel1 + c - 1) * n_ + e];
      o.end = std::max(o.end, d.at_cycle);
    }
    const int source = s_.channels_of(0) - 1;  // node of controller 0's last channel
    for (int i = 0; i < nodes; ++i)
      for (uint64_t e = 0; e < n_; ++e)
        if (got[size_t(i) * n_ + e] != (f_ == Function::bcast && i == source ? 0 : 1))
          throw std::logic_error("node " + std::to_string(i) + " got element " + std::to_string(e) + " " +
                                 std::to_string(got[size_t(i) * n_ + e]) + " times");
    for (uint64_t e = 0; e < value.size(); ++e) {
      if (*value[e] != expected(e, nodes)) throw std::logic_error("wrong value of element " + std::to_string(e));
      o.values.push_back(*value[e]);
    }
    o.results = uint64_t(f_ == Function::bcast ? nodes - 1 : nodes) * n_;
    return o;
  }

  // SPMD: each fellow node's SETTC finds its level-1 entry set.
  uint64_t expected_nacks() const {
    if (f_ != Function::barrier_spmd) return 0;
    uint64_t n = 0;
    for (int k = 0; k < s_.level1s(); ++k) n += uint64_t(s_.channels_of(k) - 1);
    return n;
  }

 private:
  bool x() const { return s_.two_levels(); }
  bool floating() const { return type_ == DataType::floating; }
  static uint32_t background_tag(int channel) { return kBackgroundTag + uint32_t(channel - 1); }
  Opcode element_op() const { return floating() ? Opcode::SUMF : Opcode::SUMI64; }
  Opcode result_opcode() const {
    if (f_ == Function::bcast) return Opcode::BCAST64;
    return f_ == Function::reduce ? element_op() : Opcode::BENTRY;
  }

  // SETTC or SETBM over `count` words (as many commands as the count field needs).
  static Burst mask(Opcode op, uint32_t tag, uint64_t m, uint64_t count, bool with_x = false) {
    Burst b;
    commands::append_masks(b, kTask, op, tag, m, count);
    for (Message& c : b) c.ins.x = with_x;
    return b;
  }
  Message with_x(Message m) const {
    m.ins.x = x();
    return m;
  }

  // Node i's element e: i + e (a reduction), the source's value (a broadcast).
  uint64_t value(int node, uint64_t e) const {
    const uint64_t v = f_ == Function::bcast ? 0x5EED + e : uint64_t(node) + e;
    return floating() ? std::bit_cast<uint64_t>(double(v)) : v;
  }
  uint64_t expected(uint64_t e, int nodes) const {
    if (f_ == Function::bcast) return value(0, e);
    const uint64_t sum = uint64_t(nodes) * uint64_t(nodes - 1) / 2 + uint64_t(nodes) * e;
    return floating() ? std::bit_cast<uint64_t>(double(sum)) : sum;
  }
  std::vector<uint64_t> values(int k, int channel) const {
    std::vector<uint64_t> v(n_);
    for (uint64_t e = 0; e < n_; ++e) v[e] = value(k * kPerLevel1 + channel - 1, e);
    return v;
  }

  // Table III's best case: one unlocked command of the row's type, no answer.
  Burst background(int channel) const {
    if (!floating()) return {commands::command(kTask, Opcode::WSRAM64, Space::TAS, wire::Address::tas_tag(kTask.tkno, 0))};
    return {commands::command(kTask, Opcode::SUMF, Space::GAS, background_tag(channel))};
  }

  Burst part_in_call(int k) const {
    const Message bentry = with_x(commands::command(kTask, Opcode::BENTRY, Space::GAS, kTag));
    switch (f_) {
      case Function::barrier_spmd:
        return {commands::command(kTask, Opcode::LOCK), mask(Opcode::SETTC, kTag, low_bits(s_.channels_of(k)), 1)[0],
                bentry, commands::command(kTask, Opcode::UNLOCK)};
      case Function::barrier_master_slave: return {bentry};
      default: return {};
    }
  }

  // A reduction's fellow nodes: every element, in order, after their visit.
  void feed_contributions(uint64_t ready) {
    std::vector<uint64_t> next(size_t(s_.level1s()) * kPerLevel1, 0);
    s_.feed(
        [this, next](int k, int channel, Message& m) mutable {
          uint64_t& e = next[size_t(k * kPerLevel1 + channel - 1)];
          if (channel == s_.channels_of(k) || e == n_) return false;
          const uint64_t v = value(k * kPerLevel1 + channel - 1, e);
          Burst b;
          commands::append_elements(b, kTask, element_op(), kTag + uint32_t(e++), std::span<const uint64_t>(&v, 1));
          m = with_x(b.front());
          return true;
        },
        ready);
  }

  // The call's burst at level-1 k's last channel (on controller 0: the source).
  Burst initialising_burst(int k) const {
    const int last = s_.channels_of(k);
    const uint64_t all = low_bits(last);
    Burst b;
    if (f_ == Function::bcast)
      b = commands::broadcast(kTask, Opcode::BCAST64, kTag, values(k, last), all & ~channel_bit(last));
    else if (f_ == Function::reduce)  // one level: WSRAM starts the operation (ch. VI's t_init)
      b = commands::reduction(kTask, x() ? element_op() : Opcode::WSRAM64, kTag, values(k, last), all, all);
    else
      b = commands::barrier(kTask, kTag, all);
    for (Message& m : b)
      if (m.ins.opcode == result_opcode()) m.ins.x = x();
    return b;
  }

  // The level-2 entries, from controller 0's last channel with X (ch. V).
  void set_up_level2() {
    const uint64_t all = low_bits(s_.level1s());
    const int from = s_.channels_of(0);
    const uint64_t count = f_ == Function::reduce || f_ == Function::bcast ? n_ : 1;
    if (f_ != Function::bcast) s_.send(0, from, mask(Opcode::SETTC, kTag, all, count, true), 0);
    s_.send(0, from, mask(Opcode::SETBM, kTag, all, count, true), 0);
    if (f_ == Function::bcast && floating())
      for (int c = 2; c <= s_.level1s(); ++c)
        s_.send(0, from, mask(Opcode::SETTC, background_tag(c), channel_bit(c) | channel_bit(1), 1, true), 0);
  }

  // The level 2's best-case load: one request of the row's type from each
  // other level-1 controller (a floating-point one into a reduction waiting
  // for controller 0, so it never completes).
  std::vector<std::pair<int, Message>> level2_load() const {
    std::vector<std::pair<int, Message>> load;
    for (int c = 2; c <= s_.level1s(); ++c) {
      Message m = commands::command(kTask, floating() ? Opcode::SUMF : Opcode::WSRAM64, Space::GAS, background_tag(c));
      m.ins.x = true;
      load.emplace_back(c, m);
    }
    return load;
  }

  Function f_;
  DataType type_;
  uint64_t n_;
  Cores& s_;
};

}  // namespace

TwoLevelResult simulate_two_level(Function f, DataType type, int nodes, const Timing& timing, uint64_t elements) {
  if (nodes < 2 || nodes > kPerLevel1 * wire::kChannels) throw std::invalid_argument("nodes must be 2..4096");
  if (f != Function::barrier_spmd && f != Function::barrier_master_slave && f != Function::reduce &&
      f != Function::bcast)
    throw std::invalid_argument("a two-level scenario is a barrier, a reduce or a bcast");
  const bool barrier = f == Function::barrier_spmd || f == Function::barrier_master_slave;
  if (elements < 1 || elements > kMaxElements || (barrier && elements != 1))
    throw std::invalid_argument("elements must be 1..2048 (1 for a barrier)");
  Cores s(nodes, timing);
  TwoLevelCall call(f, type, elements, s);
  call.set_up();
  const uint64_t t0 = s.start_clock();
  call.queue(t0 + timing.t_cn_cop);
  s.run();
  TwoLevelCall::Outcome got = call.check(nodes);
  if (s.nacks() != call.expected_nacks())
    throw std::logic_error("the two-level call was refused " + std::to_string(s.nacks()) + " times");
  TwoLevelResult r;
  r.cycles = got.end - t0;
  r.us = timing.us(r.cycles);
  r.level1s = s.level1s();
  r.passes = s.two_levels() ? 3 : 1;
  r.serviced = s.serviced_since_start();
  r.nacks = s.nacks();
  r.results = got.results;
  r.values = std::move(got.values);
  return r;
}

}  // namespace cop::model
