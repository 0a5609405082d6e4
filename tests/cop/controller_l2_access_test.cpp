// cop/controller as level 1 and level 2: shared variables across controllers
// (RSRAM/WSRAM/RMW with X and Z), protection and partitions through forwarding,
// X without a parent, and a level-1 controller failing (seed 000 ch. IV-V).
#include "two_level_fabric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace cop;
using namespace cop::wire;
using cop::controller::Sender;
using cop::test::Node;
using cop::test::Order;
using cop::test::TwoLevelFabric;
using cop::test::mask_cmd;

namespace {

// A TAS access with X and Z: task `task`'s word `offset` on channel `chno` of controller `cntno`.
Message remote(Opcode op, uint16_t tkno, int cntno, int chno, uint32_t task, uint32_t offset, uint64_t v = 0) {
  Message m = make(op, tkno, Space::TAS, Address::tas_tag(task, offset));
  m.ins.x = true;
  m.ins.z = true;
  m.addr.cntno = static_cast<uint8_t>(cntno);
  m.addr.chno = static_cast<uint8_t>(chno);
  set_payload(m, v);
  return m;
}

Error last_error(TwoLevelFabric& f, Node n) {
  const auto link = f.link(n);
  if (link.empty()) return Error::timeout;  // no answer at all
  const Message& m = link.back();
  return m.ins.opcode == Opcode::NACK ? nack_error(m.data1) : Error::none;
}

const Order kOrders[] = {Order::forward, Order::reversed, Order::random};

}  // namespace

TEST(Level2Access, RmwReadAndOwnerWriteAcrossControllers) {
  for (Order order : kOrders) {
    TwoLevelFabric f(3, 4, order, 7);
    const Node owner{1, 2};
    // The owner writes its own task address space through the level 2 (CNTNO 1 is its controller).
    f.send(owner, remote(Opcode::WSRAM64, 3, 1, 2, 3, 5, 1000));
    f.settle();
    ASSERT_EQ(last_error(f, owner), Error::none);
    EXPECT_EQ(f.l1(1).ram().tas(0, 2, 3, 5), 1000u);
    // Tasks on every controller add to it (cop_rmw's shared counter); each gets the value before its add.
    std::vector<Node> adders = {{0, 1}, {0, 4}, {2, 3}, {1, 1}, {2, 1}};
    for (size_t i = 0; i < adders.size(); ++i) f.send(adders[i], remote(Opcode::RMW64, 1, 1, 2, 3, 5, i + 1));
    f.settle();
    std::vector<uint64_t> olds;
    for (const Node& n : adders) {
      ASSERT_EQ(f.link(n).size(), 1u);
      EXPECT_EQ(last_error(f, n), Error::none);
      const auto d = f.data(n);
      ASSERT_EQ(d.size(), 1u);
      EXPECT_EQ(d[0].ins.opcode, Opcode::RMW64);
      olds.push_back(d[0].data64());
    }
    EXPECT_EQ(f.l1(1).ram().tas(0, 2, 3, 5), 1000u + 15);
    // The old values are 1000 plus the adds before each: all distinct, a permutation's prefix sums.
    std::sort(olds.begin(), olds.end());
    EXPECT_EQ(std::adjacent_find(olds.begin(), olds.end()), olds.end());
    EXPECT_EQ(olds.front(), 1000u);
    // Anyone reads it.
    f.send(Node{2, 4}, remote(Opcode::RSRAM32, 1, 1, 2, 3, 5));
    f.settle();
    const auto r = f.data(Node{2, 4});
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].data1, 1015u);
  }
}

TEST(Level2Access, GlobalWordsAreTheLevel2s) {
  TwoLevelFabric f(2, 4);
  Message w = make(Opcode::WSRAM64, 1, Space::GAS, 40);
  w.ins.x = true;
  w.set_data64(0x1234);
  f.send(Node{0, 3}, w);
  Message r = make(Opcode::RSRAM64, 2, Space::GAS, 40);
  r.ins.x = true;
  f.send(Node{1, 1}, r);
  f.settle();
  EXPECT_EQ(f.l2().ram().gas(0, 40), 0x1234u);
  EXPECT_EQ(f.l1(0).ram().gas(0, 40), 0u);
  const auto d = f.data(Node{1, 1});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].data64(), 0x1234u);
  EXPECT_EQ(d[0].ins.tkno, 2);
}

TEST(Level2Access, AForwardedWriteToAnotherTasksSpaceIsRefused) {
  TwoLevelFabric f(2, 4);
  f.send(Node{1, 2}, remote(Opcode::WSRAM64, 3, 1, 2, 3, 5, 99));
  f.settle();
  ASSERT_EQ(last_error(f, Node{1, 2}), Error::none);
  // Another controller's task, another task on the owner's channel, the owner's task number from elsewhere.
  f.send(Node{0, 2}, remote(Opcode::WSRAM64, 3, 1, 2, 3, 5, 1));
  f.send(Node{1, 2}, remote(Opcode::WSRAM64, 2, 1, 2, 3, 5, 2));
  f.send(Node{0, 1}, remote(Opcode::WSRAM32, 3, 1, 2, 3, 5, 3));
  f.settle();
  EXPECT_EQ(last_error(f, Node{0, 2}), Error::protection);
  EXPECT_EQ(last_error(f, Node{1, 2}), Error::protection);
  EXPECT_EQ(last_error(f, Node{0, 1}), Error::protection);
  EXPECT_EQ(f.l1(1).ram().tas(0, 2, 3, 5), 99u);
  EXPECT_EQ(f.link(Node{1, 2}).size(), 2u);  // one answer per command
}

TEST(Level2Access, ATaskCannotSetSupervisorThroughForwarding) {
  TwoLevelFabric f(2, 4);
  Message sas = make(Opcode::WSRAM64, 1, Space::SAS, 2);
  sas.ins.x = true;
  sas.ins.supervisor = true;
  sas.set_data64(1);
  Message tas = remote(Opcode::WSRAM64, 1, 1, 2, 3, 5, 42);
  tas.ins.supervisor = true;
  const uint64_t before = f.l2().stats().serviced;
  f.send(Node{0, 1}, sas, Sender{false, 1});
  f.send(Node{0, 2}, tas, Sender{false, 1});
  f.settle();
  EXPECT_EQ(last_error(f, Node{0, 1}), Error::protection);
  EXPECT_EQ(last_error(f, Node{0, 2}), Error::protection);
  EXPECT_EQ(f.l2().stats().serviced, before);  // refused at level 1: nothing went up
  EXPECT_EQ(f.l2().ram().sas(2), 0u);
  EXPECT_EQ(f.l1(1).ram().tas(0, 2, 3, 5), 0u);
  // Without U/S a task still may not write the level 2's system address space.
  sas.ins.supervisor = false;
  f.send(Node{0, 3}, sas);
  f.settle();
  EXPECT_EQ(last_error(f, Node{0, 3}), Error::privilege);
  // The driver (supervisor) may: the level 2 puts level-1 controller 1 (its channel 2) in partition 1.
  sas.ins.supervisor = true;
  f.send(Node{0, 4}, sas, Sender{true, 0});
  f.settle();
  EXPECT_EQ(last_error(f, Node{0, 4}), Error::none);
  EXPECT_EQ(f.l2().ram().sas(2), 1u);
}

TEST(Level2Access, PartitionsHoldAtTheLevel2) {
  TwoLevelFabric f(3, 4);
  // The operating system puts level-1 controller 2 (level-2 channel 3) in partition 1.
  Message sas = make(Opcode::WSRAM64, 0, Space::SAS, 3);
  sas.ins.supervisor = true;
  sas.set_data64(1);
  std::vector<controller::Delivery> out;
  f.l2().receive(3, sas, 0, Sender{true, 0}, out);
  f.l2().run(out);
  ASSERT_EQ(f.l2().ram().sas(3), 1u);
  // A forwarded command keeps its PPN (0, its level-1 channel's) and is checked at the level 2.
  f.send(Node{2, 1}, mask_cmd(Opcode::SETTC, 8, 0b011, true));
  // A mask naming a controller of another partition.
  f.send(Node{0, 1}, mask_cmd(Opcode::SETTC, 8, 0b101, true));
  // A routed access into a controller of another partition.
  f.send(Node{1, 1}, remote(Opcode::RSRAM64, 1, 2, 1, 0, 0));
  f.settle();
  EXPECT_EQ(last_error(f, Node{2, 1}), Error::partition);
  EXPECT_EQ(last_error(f, Node{0, 1}), Error::partition);
  EXPECT_EQ(last_error(f, Node{1, 1}), Error::partition);
  EXPECT_TRUE(f.data(Node{1, 1}).empty());
  EXPECT_FALSE(f.l2().ram().tc(0, 8).accessed);
}

TEST(Level2Access, XWithoutAParentIsRefusedAsBefore) {
  controller::Config c;
  controller::Controller alone(c);
  std::vector<controller::Delivery> out;
  Message b = make(Opcode::BENTRY, 1, Space::GAS, 1);
  b.ins.x = true;
  alone.receive(1, b, out);
  alone.run(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].msg.ins.opcode, Opcode::NACK);
  EXPECT_EQ(nack_error(out[0].msg.data1), Error::channel_range);
  EXPECT_FALSE(out[0].to_parent);
  EXPECT_THROW(alone.receive_from_parent(out[0], out), std::logic_error);
  c.level = 2;
  c.has_parent = true;
  EXPECT_THROW(controller::Controller{c}, std::invalid_argument);
}

TEST(Level2Access, LockAndProbeWithXAreRefused) {
  TwoLevelFabric f(2, 4);
  for (Opcode op : {Opcode::LOCK, Opcode::PROBE}) {
    Message m = make(op, 1);
    m.ins.x = true;
    f.send(Node{0, 1}, m);
    f.settle();
    EXPECT_EQ(last_error(f, Node{0, 1}), Error::channel_range);
  }
  EXPECT_EQ(f.l1(0).locked_channel(), 0);
}

TEST(Level2Access, ALevel1FailingFailsTheOthersWithLinkDown) {
  for (Order order : kOrders) {
    TwoLevelFabric f(3, 4, order, 11);
    const std::vector<Node> parts = {{0, 1}, {0, 2}, {1, 3}, {2, 1}};
    for (const Node& n : parts) {
      uint64_t local = 0;
      for (const Node& p : parts)
        if (p.cntno == n.cntno) local |= controller::channel_bit(p.chno);
      f.send(n, mask_cmd(Opcode::SETTC, 6, local, false));
      f.send(n, mask_cmd(Opcode::SETTC, 6, 0b111, true));
    }
    // Level-1 0 and 1 complete their parts; level-1 2's node never comes.
    for (const Node& n : {parts[0], parts[1], parts[2]}) {
      Message m = make(Opcode::BENTRY, 1, Space::GAS, 6);
      m.ins.x = true;
      f.send(n, m);
    }
    f.settle();
    for (const Node& n : parts) EXPECT_TRUE(f.data(n).empty());
    EXPECT_EQ(f.fail_level1(2), 1);
    f.settle();
    for (const Node& n : {parts[0], parts[1], parts[2]}) EXPECT_EQ(last_error(f, n), Error::link_down);
    EXPECT_FALSE(f.l1(0).ram().tc(0, 6).accessed);
    EXPECT_FALSE(f.l1(1).ram().tc(0, 6).accessed);
    EXPECT_FALSE(f.l2().ram().tc(0, 6).accessed);
  }
}

TEST(Level2Access, ANodeFailingOnOneLevel1VoidsTheOperationOnEveryLevel1) {
  for (Order order : kOrders) {
    TwoLevelFabric f(2, 4, order, 13);
    const std::vector<Node> parts = {{0, 1}, {0, 2}, {1, 1}, {1, 2}};
    for (const Node& n : parts) {
      f.send(n, mask_cmd(Opcode::SETTC, 7, 0b11, false));
      f.send(n, mask_cmd(Opcode::SETTC, 7, 0b11, true));
    }
    // Everyone but node 0/2 contributes; level-1 1's part goes up, level-1 0 waits for 0/2.
    for (const Node& n : {parts[0], parts[2], parts[3]}) {
      Message m = make(Opcode::SUMI64, 1, Space::GAS, 7);
      m.ins.x = true;
      m.set_data64(5);
      f.send(n, m);
    }
    f.settle();
    std::vector<controller::Delivery> out;
    EXPECT_EQ(f.l1(0).fail_channel(2, out), 1);
    // What the level-1 sent: NACKs to its nodes and one up; the fabric carries the rest.
    ASSERT_TRUE(std::any_of(out.begin(), out.end(), [](const auto& d) { return d.to_parent; }));
    std::vector<controller::Delivery> down;
    for (const auto& d : out)
      if (d.to_parent) f.l2().receive_from_child(1, d, down);
    ASSERT_EQ(down.size(), 1u);
    EXPECT_EQ(down[0].channels, 0b10u);
    std::vector<controller::Delivery> to_nodes;
    f.l1(1).receive_from_parent(down[0], to_nodes);
    ASSERT_EQ(to_nodes.size(), 1u);
    EXPECT_EQ(to_nodes[0].channels, 0b11u);
    EXPECT_EQ(nack_error(to_nodes[0].msg.data1), Error::link_down);
    EXPECT_FALSE(f.l2().ram().tc(0, 7).accessed);
    EXPECT_FALSE(f.l1(1).ram().tc(0, 7).accessed);
    EXPECT_FALSE(f.l1(0).ram().tc(0, 7).accessed);
  }
}
