// cop/controller: each opcode's effect on controller state, collectives over
// masks in several arrival orders, accessed bits, protection, partitions,
// locking and limit checks.
#include "controller/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <string>
#include <vector>

using namespace cop;
using namespace cop::wire;
using cop::controller::Controller;
using cop::controller::Delivery;
using cop::controller::channel_bit;

namespace {

struct Harness {
  Controller ctl;
  std::vector<Delivery> out;

  explicit Harness(controller::Config c = {}) : ctl(c) {}

  void send(int ch, Message m) { ctl.receive(ch, m, out); }
  void run() { ctl.run(out); }
  // Sends one command and services everything; returns what came out.
  std::vector<Delivery> call(int ch, Message m) {
    out.clear();
    send(ch, m);
    run();
    return out;
  }
  static Error error_of(const std::vector<Delivery>& d) {
    for (const auto& x : d)
      if (x.msg.ins.opcode == Opcode::NACK) return static_cast<Error>(x.msg.data1 & 0xFF);
    return Error::none;
  }
  // Data (non-link) deliveries.
  static std::vector<Delivery> data(const std::vector<Delivery>& d) {
    std::vector<Delivery> r;
    for (const auto& x : d)
      if (!x.link_level) r.push_back(x);
    return r;
  }
};

Message gas(Opcode op, uint32_t tag, uint16_t tkno = 1) { return make(op, tkno, Space::GAS, tag); }

Message settc(uint32_t tag, uint64_t mask, int count = 1, bool bcast_ram = false) {
  Message m = gas(bcast_ram ? Opcode::SETBM : Opcode::SETTC, tag, 0);
  m.set_count(count);
  m.set_data64(mask);
  return m;
}

Message value(Opcode op, uint32_t tag, uint64_t v) {
  Message m = gas(op, tag);
  if (is_64bit(op))
    m.set_data64(v);
  else
    m.data1 = static_cast<uint32_t>(v);
  return m;
}

uint64_t mask_of(std::initializer_list<int> chans) {
  uint64_t m = 0;
  for (int c : chans) m |= channel_bit(c);
  return m;
}

Message supervisor_sas_write(uint32_t offset, uint64_t v) {
  Message m = make(Opcode::WSRAM64, 0, Space::SAS, offset);
  m.ins.supervisor = true;
  m.set_data64(v);
  return m;
}

}  // namespace

TEST(Controller, ProbeAnswersThePollCounterAsChannelNumber) {
  controller::Config c;
  c.cntno = 7;
  Harness h(c);
  auto d = Harness::data(h.call(23, make(Opcode::PROBE, 5)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, channel_bit(23));
  EXPECT_EQ(d[0].msg.addr.chno, 23);
  EXPECT_EQ(d[0].msg.addr.cntno, 7);
  EXPECT_EQ(d[0].msg.ins.tkno, 5);
}

TEST(Controller, PollCounterServicesReadyChannelsRoundRobin) {
  Harness h;
  for (int ch : {40, 3, 17}) h.send(ch, make(Opcode::PROBE, 0));
  std::vector<int> order;
  while (h.ctl.step(h.out)) order.push_back(h.ctl.poll_counter());
  EXPECT_EQ(order, (std::vector<int>{3, 17, 40}));
  // The poll counter goes on from where it stopped, wrapping past 64.
  for (int ch : {2, 39, 41}) h.send(ch, make(Opcode::PROBE, 0));
  order.clear();
  while (h.ctl.step(h.out)) order.push_back(h.ctl.poll_counter());
  EXPECT_EQ(order, (std::vector<int>{41, 2, 39}));
}

TEST(Controller, LockStopsTheRoundRobinUntilUnlock) {
  Harness h;
  h.send(1, make(Opcode::LOCK, 1));
  h.send(2, make(Opcode::PROBE, 2));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.locked_channel(), 1);
  // Channel 2 is ready, but the controller waits for the locked channel.
  EXPECT_TRUE(h.ctl.data_ready(2));
  EXPECT_FALSE(h.ctl.step(h.out));
  h.send(1, make(Opcode::PROBE, 1));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.poll_counter(), 1);
  h.send(1, make(Opcode::UNLOCK, 1));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.poll_counter(), 2);
}

TEST(Controller, UnlockByAChannelWithoutTheLockIsRefused) {
  Harness h;
  EXPECT_EQ(Harness::error_of(h.call(4, make(Opcode::UNLOCK, 1))), Error::not_locked);
}

TEST(Controller, OwnerWritesItsTaskAddressSpaceAndAnyTaskReadsIt) {
  Harness h;
  Message w = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(3, 10));
  w.set_data64(0x1122334455667788ull);
  EXPECT_EQ(Harness::error_of(h.call(5, w)), Error::none);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 10), 0x1122334455667788ull);

  Message r = make(Opcode::RSRAM64, 9, Space::TAS, Address::tas_tag(3, 10));
  r.ins.z = true;
  r.addr.chno = 5;
  auto d = Harness::data(h.call(12, r));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, channel_bit(12));
  EXPECT_EQ(d[0].msg.data64(), 0x1122334455667788ull);
  EXPECT_EQ(d[0].msg.ins.tkno, 9);  // answers carry the reader's TKNO (its Pid register)

  Message r32 = make(Opcode::RSRAM32, 9, Space::TAS, Address::tas_tag(3, 10));
  r32.ins.z = true;
  r32.addr.chno = 5;
  d = Harness::data(h.call(12, r32));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 0x55667788u);
}

TEST(Controller, WritingAnotherTasksAddressSpaceIsAProtectionError) {
  Harness h;
  Message w = make(Opcode::WSRAM32, 3, Space::TAS, Address::tas_tag(4, 0));  // task 3 writes task 4's space
  w.data1 = 1;
  EXPECT_EQ(Harness::error_of(h.call(5, w)), Error::protection);
  Message other_channel = make(Opcode::WSRAM32, 3, Space::TAS, Address::tas_tag(3, 0));
  other_channel.ins.z = true;
  other_channel.addr.chno = 6;  // same task number, another host's channel
  EXPECT_EQ(Harness::error_of(h.call(5, other_channel)), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 4, 0), 0u);
  EXPECT_EQ(h.ctl.ram().tas(0, 6, 3, 0), 0u);
}

TEST(Controller, ReadModifyWriteMayUpdateAnotherTasksSpace) {
  Harness h;
  Message w = make(Opcode::WSRAM32, 2, Space::TAS, Address::tas_tag(2, 1));
  w.data1 = 40;
  h.call(8, w);
  Message rmw = make(Opcode::RMW32, 1, Space::TAS, Address::tas_tag(2, 1));
  rmw.ins.z = true;
  rmw.addr.chno = 8;
  rmw.data1 = 2;
  auto d = Harness::data(h.call(3, rmw));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 40u);  // the old value
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
  // RMW64 with M adds in the floating-point unit.
  Message f = make(Opcode::RMW64, 1, Space::GAS, 5);
  f.ins.m = true;
  f.set_data64(std::bit_cast<uint64_t>(1.5));
  h.call(3, f);
  h.call(4, f);
  EXPECT_EQ(std::bit_cast<double>(h.ctl.ram().gas(0, 5)), 3.0);
}

TEST(Controller, BarrierReleasesEveryParticipantOnlyAfterTheLastEntryInAnyOrder) {
  std::vector<int> chans{2, 9, 33, 64};
  std::sort(chans.begin(), chans.end());
  int orders = 0;
  do {
    Harness h;
    const uint64_t mask = mask_of({2, 9, 33, 64});
    // The first channel in initialises the masks under the lock (ch. V).
    const int first = chans[0];
    h.call(first, make(Opcode::LOCK, 1));
    EXPECT_EQ(Harness::error_of(h.call(first, settc(100, mask))), Error::none);
    EXPECT_EQ(Harness::error_of(h.call(first, settc(100, mask, 1, true))), Error::none);
    h.call(first, make(Opcode::UNLOCK, 1));
    for (size_t i = 0; i < chans.size(); ++i) {
      auto d = Harness::data(h.call(chans[i], gas(Opcode::BENTRY, 100)));
      if (i + 1 < chans.size()) {
        EXPECT_TRUE(d.empty()) << "released before the last entry";
      } else {
        ASSERT_EQ(d.size(), 1u);
        EXPECT_EQ(d[0].msg.ins.opcode, Opcode::BENTRY);
        EXPECT_EQ(d[0].msg.addr.msgtag, 100u);
        EXPECT_EQ(d[0].channels, mask);
      }
    }
    // Both accessed bits are clear again: the same tag can be reused.
    EXPECT_FALSE(h.ctl.ram().tc(0, 100).accessed);
    EXPECT_FALSE(h.ctl.ram().bm(0, 100).accessed);
    ++orders;
  } while (std::next_permutation(chans.begin(), chans.end()));
  EXPECT_EQ(orders, 24);
}

TEST(Controller, BarrierEntryTwiceOrFromANonParticipantIsRefused) {
  Harness h;
  h.call(1, settc(7, mask_of({1, 2})));
  EXPECT_EQ(Harness::error_of(h.call(3, gas(Opcode::BENTRY, 7))), Error::not_participant);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 7))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 7))), Error::not_participant);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 8))), Error::no_mask);
  // With no broadcast mask the barrier still releases its participants.
  auto d = Harness::data(h.call(2, gas(Opcode::BENTRY, 7)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({1, 2}));
}

struct ReduceCase {
  Opcode op;
  std::vector<uint64_t> inputs;  // one per channel 1..n
  uint64_t expected;
};

std::string reduce_name(const ::testing::TestParamInfo<ReduceCase>& p) { return std::string(opcode_name(p.param.op)); }

class Reduce : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(Reduce, MatchesALocalComputationInEveryArrivalOrder) {
  const ReduceCase& rc = GetParam();
  const int n = int(rc.inputs.size());
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 1);
  uint64_t all = 0;
  for (int c = 1; c <= n; ++c) all |= channel_bit(c);
  const uint64_t roots = channel_bit(1) | channel_bit(n);  // several roots
  do {
    Harness h;
    // The first channel serviced initialises the masks and the partial result.
    const int first = order[0];
    h.call(first, make(Opcode::LOCK, 1));
    h.call(first, settc(50, all));
    h.call(first, settc(50, roots, 1, true));
    Message init = value(is_64bit(rc.op) ? Opcode::WSRAM64 : Opcode::WSRAM32, 50, rc.inputs[size_t(first - 1)]);
    EXPECT_EQ(Harness::error_of(h.call(first, init)), Error::none);
    h.call(first, make(Opcode::UNLOCK, 1));
    std::vector<Delivery> results;
    for (size_t i = 1; i < order.size(); ++i) {
      auto d = h.call(order[i], value(rc.op, 50, rc.inputs[size_t(order[i] - 1)]));
      EXPECT_EQ(Harness::error_of(d), Error::none);
      for (auto& x : Harness::data(d)) results.push_back(x);
    }
    ASSERT_EQ(results.size(), 1u) << opcode_name(rc.op);
    EXPECT_EQ(results[0].channels, roots);
    EXPECT_EQ(results[0].msg.ins.opcode, rc.op);
    const uint64_t got = is_64bit(rc.op) ? results[0].msg.data64() : results[0].msg.data1;
    EXPECT_EQ(got, rc.expected) << opcode_name(rc.op);
  } while (std::next_permutation(order.begin(), order.end()));
}

namespace {
uint64_t d2u(double d) { return std::bit_cast<uint64_t>(d); }
uint64_t i32(int32_t v) { return static_cast<uint32_t>(v); }
uint64_t i64(int64_t v) { return static_cast<uint64_t>(v); }
}  // namespace

INSTANTIATE_TEST_SUITE_P(
    Controller, Reduce,
    ::testing::Values(
        ReduceCase{Opcode::SUMI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(100)},
        ReduceCase{Opcode::MAXI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(100)},
        ReduceCase{Opcode::MINI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(-7)},
        ReduceCase{Opcode::OR32, {0x1, 0x10, 0x100, 0x1000}, 0x1111},
        ReduceCase{Opcode::AND32, {0xFF0F, 0x0FFF, 0xFFFF, 0xF0FF}, 0x000F},
        ReduceCase{Opcode::EXOR32, {0b1100, 0b1010, 0b0001, 0b0000}, 0b0111},
        ReduceCase{Opcode::SUMI64, {i64(1) << 40, i64(-3), i64(1) << 33, i64(4)}, (i64(1) << 40) + (i64(1) << 33) + 1},
        ReduceCase{Opcode::MAXI64, {i64(-1) << 40, i64(-3), i64(9), i64(4)}, i64(9)},
        ReduceCase{Opcode::MINI64, {i64(-1) << 40, i64(-3), i64(9), i64(4)}, i64(-1) << 40},
        ReduceCase{Opcode::OR64, {1ull << 63, 1, 2, 4}, (1ull << 63) | 7},
        ReduceCase{Opcode::AND64, {~0ull, ~1ull, ~2ull, ~4ull}, ~7ull},
        ReduceCase{Opcode::EXOR64, {1ull << 62, 1ull << 62, 3, 5}, 6},
        ReduceCase{Opcode::SUMF, {d2u(0.5), d2u(0.25), d2u(2.0), d2u(-1.0)}, d2u(1.75)},
        ReduceCase{Opcode::MAXF, {d2u(0.5), d2u(-0.25), d2u(2.0), d2u(-1.0)}, d2u(2.0)},
        ReduceCase{Opcode::MINF, {d2u(0.5), d2u(-0.25), d2u(2.0), d2u(-1.0)}, d2u(-1.0)}),
    reduce_name);

TEST(Controller, ReductionWithoutAnInitialisingWriteStartsFromTheFirstContribution) {
  Harness h;
  h.call(1, settc(3, mask_of({1, 2, 3})));
  h.call(1, settc(3, mask_of({2}), 1, true));
  h.ctl.receive(1, value(Opcode::SUMI64, 3, 10), h.out);
  h.ctl.receive(2, value(Opcode::SUMI64, 3, 20), h.out);
  h.ctl.receive(3, value(Opcode::SUMI64, 3, 30), h.out);
  h.out.clear();
  h.run();
  auto d = Harness::data(h.out);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 60u);
  EXPECT_EQ(d[0].channels, channel_bit(2));
}

TEST(Controller, AccessedBitMakesTheSecondSpmdInitialiserBackOff) {
  Harness h;
  const uint64_t mask = mask_of({1, 2, 3});
  // Three SPMD tasks race to initialise: each locks and tries SETTC.
  for (int ch : {1, 2, 3}) {
    h.send(ch, make(Opcode::LOCK, 1));
    h.send(ch, settc(20, mask));
    h.send(ch, make(Opcode::UNLOCK, 1));
  }
  h.out.clear();
  h.run();
  int acks = 0, in_use = 0;
  for (const auto& d : h.out) {
    if (d.msg.ins.opcode == Opcode::NACK && (d.msg.data1 >> 8) == uint32_t(Opcode::SETTC)) {
      EXPECT_EQ(static_cast<Error>(d.msg.data1 & 0xFF), Error::mask_in_use);
      ++in_use;
    }
    if (d.msg.ins.opcode == Opcode::ACK) ++acks;
  }
  EXPECT_EQ(in_use, 2);
  EXPECT_EQ(acks, 7);  // 3 LOCK + 3 UNLOCK + 1 SETTC
  // The entry is free again only after every channel has contributed.
  for (int ch : {1, 2}) h.call(ch, gas(Opcode::BENTRY, 20));
  EXPECT_EQ(Harness::error_of(h.call(1, settc(20, mask))), Error::mask_in_use);
  h.call(3, gas(Opcode::BENTRY, 20));
  EXPECT_EQ(Harness::error_of(h.call(1, settc(20, mask))), Error::none);
}

TEST(Controller, CountedSetInitialisesARangeAllOrNothing) {
  Harness h;
  EXPECT_EQ(Harness::error_of(h.call(1, settc(10, mask_of({1, 2}), 4))), Error::none);
  for (uint32_t t = 10; t < 14; ++t) EXPECT_TRUE(h.ctl.ram().tc(0, t).accessed);
  EXPECT_FALSE(h.ctl.ram().tc(0, 14).accessed);
  // Overlapping range: refused and nothing beyond the overlap is touched.
  EXPECT_EQ(Harness::error_of(h.call(2, settc(12, mask_of({3}), 4))), Error::mask_in_use);
  EXPECT_FALSE(h.ctl.ram().tc(0, 14).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 12).mask, mask_of({1, 2}));
  EXPECT_EQ(Harness::error_of(h.call(2, settc(30, 0))), Error::bad_mask);
  controller::Config small;
  small.channels = 8;
  Harness s(small);
  EXPECT_EQ(Harness::error_of(s.call(1, settc(0, channel_bit(9)))), Error::bad_mask);
}

TEST(Controller, MaskEntriesReadBackWithRsram64AndTheMBit) {
  Harness h;
  h.call(1, settc(5, mask_of({1, 2, 3})));
  h.call(1, settc(5, mask_of({1}), 1, true));
  h.call(2, gas(Opcode::BENTRY, 5));
  Message rd = gas(Opcode::RSRAM64, 5);
  rd.ins.m = true;
  auto d = Harness::data(h.call(1, rd));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), mask_of({1, 3}));  // channels yet to contribute
  rd.ins.msel_bcast = true;
  d = Harness::data(h.call(1, rd));
  EXPECT_EQ(d[0].msg.data64(), mask_of({1}));
}

TEST(Controller, BroadcastGoesToTheMaskWithItsSourceAndConsumesTheEntry) {
  Harness h;
  const uint64_t mask = mask_of({2, 3, 4});
  h.call(1, settc(40, mask, 2, true));
  auto d = Harness::data(h.call(1, value(Opcode::BCAST64, 40, 0xABCDEF0123ull)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask);
  EXPECT_EQ(d[0].msg.data64(), 0xABCDEF0123ull);
  EXPECT_EQ(d[0].msg.addr.chno, 1);
  d = Harness::data(h.call(1, value(Opcode::BCAST32, 41, 77)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 77u);
  EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::BCAST64, 40, 1))), Error::no_mask);
}

TEST(Controller, PartitionsCannotTouchEachOther) {
  Harness h;
  // The operating system puts channels 3 and 4 into partition 1.
  EXPECT_EQ(Harness::error_of(h.call(3, supervisor_sas_write(3, 1))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(3, supervisor_sas_write(4, 1))), Error::none);
  EXPECT_EQ(h.ctl.channel_partition(3), 1);
  EXPECT_EQ(Harness::error_of(h.call(1, supervisor_sas_write(5, 99))), Error::address_range);

  // A message claiming another partition than its channel's is refused.
  EXPECT_EQ(Harness::error_of(h.call(3, gas(Opcode::BENTRY, 1))), Error::partition);
  // A mask naming channels of another partition is refused.
  EXPECT_EQ(Harness::error_of(h.call(1, settc(1, mask_of({1, 3})))), Error::partition);
  // Reading a task space on a channel of another partition is refused.
  Message rd = make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(1, 0));
  rd.ins.z = true;
  rd.ins.ppn = 1;
  rd.addr.chno = 1;
  EXPECT_EQ(Harness::error_of(h.call(3, rd)), Error::partition);

  // The same tag runs two barriers at once, one per partition.
  auto in_p1 = [](Message m) { m.ins.ppn = 1; return m; };
  h.call(1, settc(9, mask_of({1, 2})));
  h.call(3, in_p1(settc(9, mask_of({3, 4}))));
  EXPECT_TRUE(Harness::data(h.call(1, gas(Opcode::BENTRY, 9))).empty());
  EXPECT_TRUE(Harness::data(h.call(3, in_p1(gas(Opcode::BENTRY, 9)))).empty());
  auto d = Harness::data(h.call(4, in_p1(gas(Opcode::BENTRY, 9))));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({3, 4}));
  EXPECT_TRUE(h.ctl.ram().tc(0, 9).accessed);  // partition 0's barrier still waits for channel 2
}

TEST(Controller, SystemSpaceIsWrittenOnlyInSupervisorMode) {
  Harness h;
  Message w = make(Opcode::WSRAM64, 1, Space::SAS, 70);
  w.set_data64(5);
  EXPECT_EQ(Harness::error_of(h.call(1, w)), Error::privilege);
  w.ins.supervisor = true;
  EXPECT_EQ(Harness::error_of(h.call(1, w)), Error::none);
  auto d = Harness::data(h.call(2, make(Opcode::RSRAM64, 1, Space::SAS, 70)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 5u);
}

TEST(Controller, MalformedWordsGetANackWithTheirErrorCode) {
  controller::Config c;
  c.gas_words = 64;
  Harness h(c);
  Words w{};
  int n = encode(gas(Opcode::SUMI32, 64), Direction::to_controller, w);  // one past the GAS
  h.ctl.receive_words(6, std::span<const uint32_t>(w.data(), size_t(n)), h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg.ins.opcode, Opcode::NACK);
  EXPECT_EQ(static_cast<Error>(h.out[0].msg.data1 & 0xFF), Error::address_range);
  EXPECT_EQ(h.out[0].msg.data1 >> 8, uint32_t(Opcode::SUMI32));
  EXPECT_EQ(h.out[0].channels, channel_bit(6));
  h.out.clear();
  const uint32_t garbage[] = {0x7FFFFFFFu, 1u};
  h.ctl.receive_words(6, garbage, h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(static_cast<Error>(h.out[0].msg.data1 & 0xFF), Error::unknown_opcode);
  EXPECT_FALSE(h.ctl.data_ready(6));  // nothing malformed reaches the processor
}

TEST(Controller, ForwardingToALevelTwoControllerIsRefusedWhenNoneIsAttached) {
  Harness h;
  Message m = gas(Opcode::BENTRY, 1);
  m.ins.x = true;
  EXPECT_EQ(Harness::error_of(h.call(1, m)), Error::channel_range);
}

TEST(Controller, XmitResendsTheLastMessageToThatChannel) {
  Harness h;
  auto probe = Harness::data(h.call(9, make(Opcode::PROBE, 2)));
  ASSERT_EQ(probe.size(), 1u);
  h.out.clear();
  h.send(9, make(Opcode::XMIT, 2));
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg, probe[0].msg);  // the answer went after its ACK
  Message w = make(Opcode::WSRAM32, 2, Space::TAS, Address::tas_tag(2, 0));
  h.call(9, w);
  h.out.clear();
  h.send(9, make(Opcode::XMIT, 2));
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg.ins.opcode, Opcode::ACK);  // a write has only its ACK
  EXPECT_FALSE(h.ctl.data_ready(9));                // XMIT is the interface's, not the processor's
}

TEST(Controller, CycleClockChargesHallsCosts) {
  model::Timing t;
  Harness h(controller::Config{});
  Message w = make(Opcode::WSRAM64, 0, Space::GAS, 1);
  h.ctl.receive(1, w, t.t_cn_cop, h.out);  // arrives t_CN-COP after the node wrote it
  h.run();
  EXPECT_EQ(h.ctl.cycles(), t.t_cn_cop + t.t_op_int);
  h.call(1, settc(2, channel_bit(1)));
  h.call(1, settc(2, channel_bit(1), 1, true));
  const uint64_t before = h.ctl.cycles();
  auto d = h.call(1, value(Opcode::SUMF, 2, d2u(1.0)));
  EXPECT_EQ(h.ctl.cycles() - before, t.t_op_fp + t.t_cop_cn);
  EXPECT_EQ(Harness::data(d)[0].at_cycle, h.ctl.cycles());
}
