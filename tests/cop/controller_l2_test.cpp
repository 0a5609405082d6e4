// cop/controller as level 1 and level 2 (seed 000 ch. IV, Figure 5; ch. V, the
// X bit and CNTNO): 2 and 3 level-1 cores under one level-2 core, wired by the
// in-process fabric (two_level_fabric.h) in several arrival orders. Results are
// checked against a local computation, errors by their NACK codes.
#include "two_level_fabric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace cop;
using namespace cop::wire;
using cop::controller::Sender;
using cop::test::Node;
using cop::test::Order;
using cop::test::TwoLevelFabric;
using cop::test::mask_cmd;

namespace {

constexpr uint16_t kTask = 1;

Message contribution(Opcode op, uint32_t tag, uint64_t v) {
  Message m = make(op, kTask, Space::GAS, tag);
  m.ins.x = true;
  if (op != Opcode::BENTRY) set_payload(m, v);
  return m;
}

// The nodes' channels on level-1 controller k.
uint64_t local_mask(const std::vector<Node>& nodes, int k) {
  uint64_t m = 0;
  for (const Node& n : nodes)
    if (n.cntno == k) m |= controller::channel_bit(n.chno);
  return m;
}
// The level-1 controllers (bit CNTNO) the nodes are on.
uint64_t level2_mask(const std::vector<Node>& nodes) {
  uint64_t m = 0;
  for (const Node& n : nodes) m |= uint64_t{1} << n.cntno;
  return m;
}

using Scripts = std::map<Node, std::vector<Message>>;

// Sends every node's commands (each node's in its order) interleaved by `order`,
// letting the fabric run between some of them, then settles.
void inject(TwoLevelFabric& f, const Scripts& scripts, Order order, unsigned seed) {
  std::vector<std::pair<Node, std::vector<Message>>> s(scripts.begin(), scripts.end());
  if (order == Order::reversed) std::reverse(s.begin(), s.end());
  std::mt19937 rng(seed);
  std::vector<size_t> next(s.size(), 0);
  for (;;) {
    std::vector<size_t> ready;
    for (size_t i = 0; i < s.size(); ++i)
      if (next[i] < s[i].second.size()) ready.push_back(i);
    if (ready.empty()) break;
    const size_t i = order == Order::random ? ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng)]
                                            : ready.front();
    f.send(s[i].first, s[i].second[next[i]++]);
    if (order == Order::forward && next[i] == s[i].second.size()) f.settle();
    if (order == Order::random && rng() % 3 == 0) f.settle();
  }
  f.settle();
}

// Every command got exactly one ACK or NACK, each NACK one of `allowed`.
void expect_answered(TwoLevelFabric& f, const Scripts& scripts, std::set<Error> allowed = {Error::mask_in_use}) {
  for (const auto& [n, cmds] : scripts) {
    const auto link = f.link(n);
    EXPECT_EQ(link.size(), cmds.size()) << "node " << n.cntno << "/" << n.chno;
    for (const Message& m : link) {
      if (m.ins.opcode != Opcode::NACK) continue;
      EXPECT_TRUE(allowed.count(nack_error(m.data1))) << "node " << n.cntno << "/" << n.chno << " "
                                                     << error_name(nack_error(m.data1));
    }
  }
}

void expect_entries_free(TwoLevelFabric& f, uint32_t tag) {
  for (int k = 0; k < f.level1s(); ++k) {
    EXPECT_FALSE(f.l1(k).ram().tc(0, tag).accessed) << "level-1 " << k;
    EXPECT_FALSE(f.l1(k).ram().bm(0, tag).accessed) << "level-1 " << k;
  }
  EXPECT_FALSE(f.l2().ram().tc(0, tag).accessed);
  EXPECT_FALSE(f.l2().ram().bm(0, tag).accessed);
}

// The SPMD script of a reduction (or barrier: op BENTRY, no broadcast masks).
Scripts reduce_scripts(const std::vector<Node>& parts, const std::vector<Node>& receivers, Opcode op, uint32_t tag,
                       const std::function<uint64_t(Node)>& value) {
  Scripts s;
  const bool barrier = op == Opcode::BENTRY;
  for (const Node& n : parts) {
    auto& c = s[n];
    c.push_back(mask_cmd(Opcode::SETTC, tag, local_mask(parts, n.cntno), false));
    c.push_back(mask_cmd(Opcode::SETTC, tag, level2_mask(parts), true));
    if (!barrier && local_mask(receivers, n.cntno)) c.push_back(mask_cmd(Opcode::SETBM, tag, local_mask(receivers, n.cntno), false));
    if (!barrier) c.push_back(mask_cmd(Opcode::SETBM, tag, level2_mask(receivers), true));
    c.push_back(contribution(op, tag, value(n)));
  }
  // On a level-1 with no participant, one receiver sets the local broadcast mask:
  // a second one's SETBM could come after the result and stay behind.
  std::set<int> masked;
  for (const Node& n : parts) masked.insert(n.cntno);
  for (const Node& n : receivers)
    if (masked.insert(n.cntno).second) s[n].push_back(mask_cmd(Opcode::SETBM, tag, local_mask(receivers, n.cntno), false));
  return s;
}

std::vector<Node> nodes(int level1s, int per) {
  std::vector<Node> r;
  for (int k = 0; k < level1s; ++k)
    for (int c = 1; c <= per; ++c) r.push_back(Node{k, c});
  return r;
}

// What the ALU/FP unit's function gives, computed here without cop/wire.
uint64_t expected(Opcode op, const std::vector<Node>& parts, const std::function<uint64_t(Node)>& value) {
  std::vector<uint64_t> v;
  for (const Node& n : parts) v.push_back(value(n));
  switch (op) {
    case Opcode::SUMI32: { uint32_t s = 0; for (auto x : v) s += uint32_t(x); return s; }
    case Opcode::MAXI32: { int32_t m = INT32_MIN; for (auto x : v) m = std::max(m, int32_t(uint32_t(x))); return uint32_t(m); }
    case Opcode::MINI32: { int32_t m = INT32_MAX; for (auto x : v) m = std::min(m, int32_t(uint32_t(x))); return uint32_t(m); }
    case Opcode::SUMI64: { uint64_t s = 0; for (auto x : v) s += x; return s; }
    case Opcode::MAXI64: { int64_t m = INT64_MIN; for (auto x : v) m = std::max(m, int64_t(x)); return uint64_t(m); }
    case Opcode::MINI64: { int64_t m = INT64_MAX; for (auto x : v) m = std::min(m, int64_t(x)); return uint64_t(m); }
    case Opcode::OR64: { uint64_t s = 0; for (auto x : v) s |= x; return s; }
    case Opcode::AND64: { uint64_t s = ~uint64_t{0}; for (auto x : v) s &= x; return s; }
    case Opcode::EXOR32: { uint32_t s = 0; for (auto x : v) s ^= uint32_t(x); return s; }
    case Opcode::SUMF: { double s = 0; for (auto x : v) s += std::bit_cast<double>(x); return std::bit_cast<uint64_t>(s); }
    case Opcode::MAXF: { double m = -1e300; for (auto x : v) m = std::max(m, std::bit_cast<double>(x)); return std::bit_cast<uint64_t>(m); }
    case Opcode::MINF: { double m = 1e300; for (auto x : v) m = std::min(m, std::bit_cast<double>(x)); return std::bit_cast<uint64_t>(m); }
    default: ADD_FAILURE() << "no local computation for " << opcode_name(op); return 0;
  }
}

uint64_t node_value(Opcode op, Node n) {
  const int i = n.cntno * 8 + n.chno;
  // Exactly representable halves: the sum is the same in any combining order.
  if (is_floating(op)) return std::bit_cast<uint64_t>((i % 5 - 2) * 0.5 + i * 1.25);
  if (is_64bit(op)) return uint64_t(int64_t(i * 1000003) * ((i % 3) ? 1 : -1)) ^ (uint64_t(i) << 40);
  return uint32_t(int32_t(i * 7919) * ((i % 2) ? 1 : -1));
}

struct Case {
  int level1s;
  Order order;
  unsigned seed;
};

const Case kCases[] = {{2, Order::forward, 1}, {2, Order::reversed, 2}, {3, Order::random, 3},
                       {3, Order::random, 17}, {3, Order::reversed, 5}};

}  // namespace

TEST(Level2, EveryReductionOverTwoAndThreeLevel1sInSeveralOrders) {
  const Opcode ops[] = {Opcode::SUMI32, Opcode::MAXI32, Opcode::MINI32, Opcode::EXOR32, Opcode::SUMI64, Opcode::MAXI64,
                        Opcode::MINI64, Opcode::OR64,   Opcode::AND64,  Opcode::SUMF,   Opcode::MAXF,   Opcode::MINF};
  for (const Case& c : kCases)
    for (Opcode op : ops) {
      SCOPED_TRACE(std::string(opcode_name(op)) + " level1s=" + std::to_string(c.level1s) + " seed=" + std::to_string(c.seed));
      TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
      const auto parts = nodes(c.level1s, 3);
      auto value = [op](Node n) { return node_value(op, n); };
      const Scripts s = reduce_scripts(parts, parts, op, 9, value);
      inject(f, s, c.order, c.seed);
      expect_answered(f, s);
      const uint64_t want = expected(op, parts, value);
      for (const Node& n : parts) {
        const auto d = f.data(n);
        ASSERT_EQ(d.size(), 1u) << "node " << n.cntno << "/" << n.chno;
        EXPECT_EQ(d[0].ins.opcode, op);
        EXPECT_EQ(payload(d[0]), want);
      }
      EXPECT_TRUE(f.data(Node{0, 4}).empty());  // on a level-1, not taking part
      expect_entries_free(f, 9);
    }
}

TEST(Level2, SeveralElementsOnConsecutiveTagsAndRepeatedOperations) {
  for (const Case& c : kCases) {
    TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
    const auto parts = nodes(c.level1s, 2);
    for (int round = 0; round < 3; ++round)
      for (uint32_t tag = 20; tag < 24; ++tag) {
        auto value = [&](Node n) { return std::bit_cast<uint64_t>(double(n.cntno * 10 + n.chno + tag + round) * 0.25); };
        const Scripts s = reduce_scripts(parts, parts, Opcode::SUMF, tag, value);
        f.clear_inboxes();
        inject(f, s, c.order, c.seed + tag);
        expect_answered(f, s);
        for (const Node& n : parts) {
          const auto d = f.data(n);
          ASSERT_EQ(d.size(), 1u);
          EXPECT_EQ(d[0].addr.msgtag, tag);
          EXPECT_EQ(payload(d[0]), expected(Opcode::SUMF, parts, value));
        }
        expect_entries_free(f, tag);
      }
  }
}

// Nodes that disagree on a reduction's function or datatype: SUMI64 against SUMF,
// between two level-1 controllers (the level 2 sees it) or inside one (that level-1
// sees it and voids the operation upward). Nobody gets a sum of mixed bit patterns: the
// receivers get a NACK mismatch, and every entry is free again.
TEST(Level2, ContributionsWithDifferentOpcodesGiveEveryReceiverAMismatch) {
  for (const bool inside : {false, true})
    for (const Case& c : kCases) {
      SCOPED_TRACE(std::string(inside ? "inside a level-1" : "between level-1s") + " seed=" + std::to_string(c.seed));
      TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
      const auto parts = nodes(c.level1s, 2);
      auto floating = [&](Node n) { return inside ? n == parts.front() : n.cntno == 0; };
      Scripts s = reduce_scripts(parts, parts, Opcode::SUMI64, 13, [](Node n) { return uint64_t(n.chno); });
      for (const Node& n : parts)
        if (floating(n)) s[n].back() = contribution(Opcode::SUMF, 13, std::bit_cast<uint64_t>(1.5));
      inject(f, s, c.order, c.seed);
      for (const Node& n : parts) {
        EXPECT_TRUE(f.data(n).empty()) << "node " << n.cntno << "/" << n.chno << " got a result";
        bool told = false;
        for (const Message& m : f.link(n)) told |= m.ins.opcode == Opcode::NACK && nack_error(m.data1) == Error::mismatch;
        EXPECT_TRUE(told) << "node " << n.cntno << "/" << n.chno;
      }
      expect_entries_free(f, 13);
    }
}

// The same to one root (a reduce to a root, as cop_reduce sends it): the root hears of a
// mismatch inside its own level-1 or another, whichever node disagrees.
TEST(Level2, ContributionsWithDifferentOpcodesGiveTheRootAMismatch) {
  for (const int floating : {1, 2, 3})  // on level-1 0, on level-1 1, on both (bits)
    for (const Node root : {Node{0, 1}, Node{0, 2}})
    for (const Case& c : kCases) {
      SCOPED_TRACE("disagreeing nodes " + std::to_string(floating) + " root " + std::to_string(root.chno) + " seed=" + std::to_string(c.seed));
      TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
      const auto parts = nodes(c.level1s, 2);
      Scripts s = reduce_scripts(parts, {root}, Opcode::SUMI64, 13, [](Node n) { return uint64_t(n.chno); });
      for (int k = 0; k < 2; ++k)
        if (floating & (1 << k)) s[Node{k, 1}].back() = contribution(Opcode::SUMF, 13, std::bit_cast<uint64_t>(1.5));
      inject(f, s, c.order, c.seed);
      for (const Node& n : parts) EXPECT_TRUE(f.data(n).empty()) << "node " << n.cntno << "/" << n.chno << " got a result";
      bool told = false;
      for (const Message& m : f.link(root)) told |= m.ins.opcode == Opcode::NACK && nack_error(m.data1) == Error::mismatch;
      EXPECT_TRUE(told) << "the root was not told of the mismatch";
      expect_entries_free(f, 13);
    }
}

// cop_reduce over two level-1s whose channel-1 nodes sum doubles and channel-2 nodes
// longs (libcop_groups.cpp, run_reduce_mismatch), each level-1's entries reaching the
// level 2 as one frame (carry_frames): a level-1's NACK mismatch comes with the
// forwarded SETTC/SETBM X of its last node's burst. The level 2 takes it after them:
// ahead, it voided nothing (no entry yet) or held those commands unanswered, so the
// root's node waited for their answers until its CopTimeout.
TEST(Level2, MismatchInsideEachLevel1WithFramesAnswersEveryCommandAndTellsTheRoot) {
  for (const Node root : {Node{0, 1}, Node{0, 2}})
    for (const Case& c : kCases) {
      SCOPED_TRACE("root " + std::to_string(root.chno) + " seed=" + std::to_string(c.seed));
      TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
      f.carry_frames();
      const auto parts = nodes(2, 2);
      Scripts s = reduce_scripts(parts, {root}, Opcode::SUMI64, 13, [](Node n) { return uint64_t(n.chno); });
      for (const Node& n : parts)
        if (n.chno == 1) s[n].back() = contribution(Opcode::SUMF, 13, std::bit_cast<uint64_t>(1.5));
      inject(f, s, c.order, c.seed);
      bool told = false;
      for (const Node& n : parts) {
        EXPECT_TRUE(f.data(n).empty()) << "node " << n.cntno << "/" << n.chno << " got a result";
        size_t answers = 0;  // each command's ACK or NACK (mask_in_use, mismatch), besides the operation's NACK
        for (const auto& d : f.inbox(n)) {
          const bool mismatch = d.msg.ins.opcode == Opcode::NACK && nack_error(d.msg.data1) == Error::mismatch;
          if (d.ends_operation) told |= n == root && mismatch;
          else if (d.link_level) answers += d.msg.ins.opcode == Opcode::ACK || mismatch ||
                                            nack_error(d.msg.data1) == Error::mask_in_use;
        }
        EXPECT_EQ(answers, s[n].size()) << "node " << n.cntno << "/" << n.chno << ": a command never answered";
      }
      EXPECT_TRUE(told) << "the root was not told of the mismatch";
      expect_entries_free(f, 13);
    }
}

// A level-1 whose nodes disagreed has ended the operation for them (NACK mismatch to
// its root) and freed its entries: its nodes go on to the next operation on the tag
// before the other level-1 comes. The level 2's mismatch is not for that level-1: sent
// there it voided the next operation (a spurious mismatch at its root) and left the
// next result parked, for an operation after it to take as its own.
TEST(Level2, MismatchInsideALevel1DoesNotVoidItsNextOperationOnTheTag) {
  TwoLevelFabric f(2, 4);
  const auto parts = nodes(2, 2);
  const Node root{1, 1};
  auto only = [](const Scripts& s, int k) {
    Scripts r;
    for (const auto& [n, c] : s)
      if (n.cntno == k) r[n] = c;
    return r;
  };
  auto round = [&](uint64_t base) {
    return reduce_scripts(parts, {root}, Opcode::SUMI64, 13, [base](Node n) { return base + uint64_t(n.chno); });
  };
  Scripts first = round(0), second = round(10), third = round(100);
  first[root].back() = contribution(Opcode::SUMF, 13, std::bit_cast<uint64_t>(1.5));
  inject(f, only(first, 1), Order::forward, 1);
  inject(f, only(second, 1), Order::forward, 1);
  inject(f, only(first, 0), Order::forward, 1);
  inject(f, only(second, 0), Order::forward, 1);
  inject(f, third, Order::forward, 1);
  std::vector<std::string> got;  // what the root heard, in order
  for (const auto& d : f.inbox(root)) {
    if (d.ends_operation) got.push_back("NACK " + std::string(error_name(nack_error(d.msg.data1))));
    else if (!d.link_level) got.push_back(std::to_string(payload(d.msg)));
  }
  const std::vector<std::string> want = {"NACK " + std::string(error_name(Error::mismatch)), std::to_string(4 * 10 + 6),
                                         std::to_string(4 * 100 + 6)};
  EXPECT_EQ(got, want);
  expect_entries_free(f, 13);
}

TEST(Level2, BarrierExitReachesEveryParticipantOnlyAfterTheLast) {
  for (const Case& c : kCases) {
    TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
    const std::vector<Node> parts = {{0, 1}, {0, 3}, {1, 2}, {c.level1s - 1, 4}};
    Scripts s = reduce_scripts(parts, parts, Opcode::BENTRY, 5, [](Node) { return 0; });
    // Everyone but the last participant enters: nobody may leave yet.
    Scripts first = s, last;
    last[parts.back()] = first[parts.back()];
    first.erase(parts.back());
    inject(f, first, c.order, c.seed);
    for (const Node& n : parts) EXPECT_TRUE(f.data(n).empty());
    inject(f, last, c.order, c.seed);
    expect_answered(f, s);
    for (const Node& n : parts) {
      const auto d = f.data(n);
      ASSERT_EQ(d.size(), 1u);
      EXPECT_EQ(d[0].ins.opcode, Opcode::BENTRY);
    }
    EXPECT_TRUE(f.data(Node{0, 2}).empty());
    expect_entries_free(f, 5);
  }
}

TEST(Level2, ReductionToReceiversOnlyAndALevel1OutsideTheMaskGetsNothing) {
  for (const Case& c : kCases) {
    if (c.level1s < 3) continue;
    TwoLevelFabric f(3, 4, c.order, c.seed);
    // Level-1 0 and 1 contribute; the receivers are on 1 and 2 (2 only receives). Level-1 0 is
    // not in the level 2's broadcast mask: its nodes, which set a local mask, get nothing.
    const std::vector<Node> parts = {{0, 1}, {0, 2}, {1, 1}, {1, 3}};
    const std::vector<Node> receivers = {{1, 3}, {2, 2}, {2, 4}};
    auto value = [](Node n) { return uint64_t(n.cntno * 100 + n.chno); };
    Scripts s = reduce_scripts(parts, receivers, Opcode::SUMI64, 11, value);
    s[Node{0, 1}].insert(s[Node{0, 1}].begin() + 2, mask_cmd(Opcode::SETBM, 11, local_mask(parts, 0), false));
    inject(f, s, c.order, c.seed);
    expect_answered(f, s);
    for (const Node& n : receivers) {
      const auto d = f.data(n);
      ASSERT_EQ(d.size(), 1u);
      EXPECT_EQ(payload(d[0]), 1u + 2 + 101 + 103);
    }
    for (const Node& n : {Node{0, 1}, Node{0, 2}, Node{1, 1}}) EXPECT_TRUE(f.data(n).empty());
    expect_entries_free(f, 11);
  }
}

TEST(Level2, BroadcastAndMulticastThroughBothMaskRams) {
  for (const Case& c : kCases) {
    TwoLevelFabric f(c.level1s, 4, c.order, c.seed);
    const Node root{0, 2};
    const auto all = nodes(c.level1s, 4);
    const std::vector<Node> subset = {{0, 1}, {c.level1s - 1, 3}};
    for (const auto& [tag, receivers] : {std::pair<uint32_t, std::vector<Node>>{30, all}, {31, subset}}) {
      f.clear_inboxes();
      Scripts s;
      // One receiver per level-1 sets its broadcast mask (the data may come before it: it waits).
      std::set<int> masked;
      for (const Node& n : receivers)
        if (masked.insert(n.cntno).second)
          s[n].push_back(mask_cmd(Opcode::SETBM, tag, local_mask(receivers, n.cntno), false));
      s[root].push_back(mask_cmd(Opcode::SETBM, tag, level2_mask(receivers), true));
      Message b = make(Opcode::BCAST64, kTask, Space::GAS, tag);
      b.ins.x = true;
      b.set_data64(0xC0FFEE00ull + tag);
      s[root].push_back(b);
      inject(f, s, c.order, c.seed);
      expect_answered(f, s);
      for (const Node& n : all) {
        // A level-1 relaying a broadcast from above leaves out its source's channel (levels.cpp).
        const bool receives = std::find(receivers.begin(), receivers.end(), n) != receivers.end() && !(n == root);
        const auto d = f.data(n);
        ASSERT_EQ(d.size(), receives ? 1u : 0u) << "node " << n.cntno << "/" << n.chno;
        if (!receives) continue;
        EXPECT_EQ(d[0].ins.opcode, Opcode::BCAST64);
        EXPECT_EQ(d[0].data64(), 0xC0FFEE00ull + tag);
        EXPECT_EQ(d[0].addr.cntno, root.cntno);  // the source, for the receivers' filter
        EXPECT_EQ(d[0].addr.chno, root.chno);
      }
      expect_entries_free(f, tag);
    }
  }
}

TEST(Level2, ABroadcastOverTwoLevelsIsThreePassesThroughALevel) {
  TwoLevelFabric f(2, 4);
  const hardware::Timing t;
  f.send(Node{1, 1}, mask_cmd(Opcode::SETBM, 3, 0x1, false));
  f.settle();
  const uint64_t start = std::max(f.l1(0).cycles(), f.l2().cycles());
  ASSERT_EQ(start, 0u);
  f.send(Node{0, 1}, mask_cmd(Opcode::SETBM, 3, 0x2, true));
  f.settle();
  const uint64_t from = f.l1(0).cycles();
  Message b = make(Opcode::BCAST32, kTask, Space::GAS, 3);
  b.ins.x = true;
  b.data1 = 77;
  std::vector<controller::Delivery> out;
  f.l1(0).receive(1, b, from, Sender{false, kTask}, out);
  ASSERT_TRUE(out.empty());
  // Level 1 (t_OP, then t_CN-COP up), level 2 (t_OP, t_COP-CN down), level 1 (t_OP, t_COP-CN to the node).
  std::vector<controller::Delivery> up;
  f.l1(0).run(up);
  ASSERT_EQ(up.size(), 1u);  // no ACK here: the level 2 answers a forwarded command
  ASSERT_TRUE(up[0].to_parent);
  EXPECT_EQ(up[0].at_cycle, from + t.t_op_int + t.t_cn_cop);
  std::vector<controller::Delivery> down;
  f.l2().receive_from_child(1, up[0], down);
  f.l2().run(down);
  const auto bc = std::find_if(down.begin(), down.end(), [](const auto& d) { return d.msg.ins.opcode == Opcode::BCAST32; });
  ASSERT_NE(bc, down.end());
  std::vector<controller::Delivery> to_nodes;
  f.l1(1).receive_from_parent(*bc, to_nodes);
  ASSERT_EQ(to_nodes.size(), 1u);
  EXPECT_EQ(to_nodes[0].channels, 0x1u);
  EXPECT_EQ(to_nodes[0].msg.data1, 77u);
  EXPECT_EQ(to_nodes[0].at_cycle, from + 3 * t.t_op_int + t.t_cn_cop + 2 * t.t_cop_cn);
}

TEST(Level2, AResultComingDownBeforeTheLocalMaskWaitsForIt) {
  TwoLevelFabric f(2, 4);
  f.send(Node{0, 1}, mask_cmd(Opcode::SETBM, 12, 0b10, true));
  Message b = make(Opcode::BCAST32, kTask, Space::GAS, 12);
  b.ins.x = true;
  b.data1 = 4242;
  f.send(Node{0, 1}, b);
  f.settle();
  EXPECT_EQ(f.link(Node{0, 1}).size(), 2u);
  for (int c = 1; c <= 4; ++c) EXPECT_TRUE(f.data(Node{1, c}).empty());
  // Level-1 1's broadcast mask comes after the data: the data goes out with it.
  f.send(Node{1, 3}, mask_cmd(Opcode::SETBM, 12, controller::channel_bit(2) | controller::channel_bit(3), false));
  f.settle();
  for (int c = 1; c <= 4; ++c) {
    const auto d = f.data(Node{1, c});
    ASSERT_EQ(d.size(), (c == 2 || c == 3) ? 1u : 0u);
    if (!d.empty()) {
      EXPECT_EQ(d[0].data1, 4242u);
    }
  }
  expect_entries_free(f, 12);
}

namespace {

// A message carrying operation identity `id`, and a level-2 broadcast (X) of `v` on `tag` under it.
Message with_identity(Message m, uint64_t id) {
  m.op_id = id;
  return m;
}

Message x_bcast(uint32_t tag, uint64_t id, uint64_t v) {
  Message m = make(Opcode::BCAST64, kTask, Space::GAS, tag);
  m.ins.x = true;
  m.set_data64(v);
  return with_identity(m, id);
}

}  // namespace

// Held masks (controller.h): two operations on one word of a level-1 (multicasts to other
// recipients, back to back; difftest seed 2 steps 1-2 on a two-level stack). The data of
// B comes down before any mask; A's receiver sets A's mask; B's receivers set B's; then
// A's data comes. Each operation's data goes to its own operation's mask only (before,
// B's data went out with A's mask, and B's receiver on channel 2 waited for ever).
TEST(Level2, TwoBroadcastsOnOneWordEachGoToTheirOwnMask) {
  TwoLevelFabric f(2, 4);
  constexpr uint32_t tag = 20;
  const uint64_t a = make_identity(3, 0xA1A10001), b = make_identity(5, 0xB2B20002);
  auto with_id = with_identity;
  auto bcast = [&](uint64_t id, uint64_t v) { return x_bcast(tag, id, v); };
  // B: sender on level-1 0 channel 1, receivers on level-1 1 channels 1 and 2.
  f.send(Node{0, 1}, with_id(mask_cmd(Opcode::SETBM, tag, 0b10, true), b));
  f.send(Node{0, 1}, bcast(b, 0xB));
  f.settle();
  // A: sender on level-1 1 channel 2, its receiver on channel 1 sets A's mask first.
  f.send(Node{1, 1}, with_id(mask_cmd(Opcode::SETBM, tag, controller::channel_bit(1), false), a));
  f.settle();
  f.send(Node{1, 1}, with_id(mask_cmd(Opcode::SETBM, tag, controller::channel_bit(1) | controller::channel_bit(2), false), b));
  f.send(Node{1, 2}, with_id(mask_cmd(Opcode::SETBM, tag, 0b10, true), a));
  f.send(Node{1, 2}, bcast(a, 0xA));
  f.settle();
  for (const Node& n : {Node{1, 1}, Node{1, 2}})
    for (const Message& m : f.link(n)) EXPECT_EQ(m.ins.opcode, Opcode::ACK) << "node 1/" << n.chno;
  auto got = [&](Node n) {
    std::map<uint64_t, uint64_t> r;  // identity -> data
    for (const Message& m : f.data(n)) EXPECT_TRUE(r.emplace(m.op_id, m.data64()).second) << "twice";
    return r;
  };
  EXPECT_EQ(got(Node{1, 1}), (std::map<uint64_t, uint64_t>{{a, 0xA}, {b, 0xB}}));
  EXPECT_EQ(got(Node{1, 2}), (std::map<uint64_t, uint64_t>{{b, 0xB}}));  // not A's: its sender
  expect_entries_free(f, tag);
}

// Two senders on two level-1s broadcast on one word at once: their SETBM X and BCAST X meet
// at the level 2 interleaved (no LOCK reaches it). Each is delivered with its own mask
// (before, the second SETBM X was refused mask_in_use and its BCAST X no_mask).
TEST(Level2, TwoSendersOnTwoLevel1sBroadcastOnOneWordAtOnce) {
  TwoLevelFabric f(2, 4);
  constexpr uint32_t tag = 21;
  const uint64_t a = make_identity(1, 0xA1A10001), b = make_identity(1, 0xB2B20002);
  auto cmd = with_identity;
  auto bcast = [&](uint64_t id, uint64_t v) { return x_bcast(tag, id, v); };
  // A from 0/1 to 1/3; B from 1/1 to 0/2. Each receiver's level-1 mask first.
  f.send(Node{1, 3}, cmd(mask_cmd(Opcode::SETBM, tag, controller::channel_bit(3), false), a));
  f.send(Node{0, 2}, cmd(mask_cmd(Opcode::SETBM, tag, controller::channel_bit(2), false), b));
  f.settle();
  f.send(Node{0, 1}, cmd(mask_cmd(Opcode::SETBM, tag, 0b10, true), a));
  f.send(Node{1, 1}, cmd(mask_cmd(Opcode::SETBM, tag, 0b01, true), b));
  f.settle();
  f.send(Node{0, 1}, bcast(a, 0xA));
  f.send(Node{1, 1}, bcast(b, 0xB));
  f.settle();
  for (const Node& n : {Node{0, 1}, Node{1, 1}}) {
    ASSERT_EQ(f.link(n).size(), 2u);
    for (const Message& m : f.link(n)) EXPECT_EQ(m.ins.opcode, Opcode::ACK) << "sender " << n.cntno;
  }
  ASSERT_EQ(f.data(Node{1, 3}).size(), 1u);
  EXPECT_EQ(f.data(Node{1, 3})[0].data64(), 0xAu);
  ASSERT_EQ(f.data(Node{0, 2}).size(), 1u);
  EXPECT_EQ(f.data(Node{0, 2})[0].data64(), 0xBu);
  expect_entries_free(f, tag);
}
