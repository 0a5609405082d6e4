// cop/controller: reductions in every arrival order and operator, the accessed bit,
// voiding, mask reads, broadcasts, partitions, malformed words, XMIT and the cycle clock.
#include "controller_harness.h"

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

// Tasks that disagree on a reduction's function or datatype (SUMI64 against SUMF on one
// tag): the differing contribution is refused with NACK mismatch, the root gets a NACK
// mismatch instead of a sum of mixed bit patterns, and the entries are free again.
TEST(Controller, ContributionsWithDifferentOpcodesEndTheOperationWithAMismatch) {
  Harness h;
  h.call(1, settc(3, mask_of({1, 2, 3})));
  h.call(1, settc(3, mask_of({2}), 1, true));
  EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::SUMI64, 3, 10))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(2, value(Opcode::SUMF, 3, 20))), Error::mismatch);
  const auto last = h.call(3, value(Opcode::SUMI64, 3, 30));
  ASSERT_TRUE(Harness::data(last).empty()) << "no result from mixed contributions";
  bool root_told = false;
  for (const auto& d : last)
    root_told |= d.msg.ins.opcode == Opcode::NACK && nack_error(d.msg.data1) == Error::mismatch &&
                 d.channels == channel_bit(2) && d.msg.addr.msgtag == 3;
  EXPECT_TRUE(root_told);
  // The tag is free for the next operation, which completes normally.
  EXPECT_EQ(Harness::error_of(h.call(1, settc(3, mask_of({1, 2})))), Error::none);
  h.call(1, settc(3, mask_of({1}), 1, true));
  h.call(1, value(Opcode::SUMI64, 3, 1));
  const auto d = Harness::data(h.call(2, value(Opcode::SUMI64, 3, 2)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 3u);
}

// Issue 34: contributions with the same opcode but another operation identity (another
// generation: a task one call behind; or another count, datatype, job) are refused like
// another opcode: the differing one gets NACK mismatch, every root a NACK mismatch with
// no result, and the result of an agreeing operation carries its identity.
TEST(Controller, ContributionsOfAnotherIdentityEndTheOperationWithAMismatch) {
  const uint64_t round5 = wire::make_identity(5, 0xABCD), round4 = wire::make_identity(4, 0xABCD);
  const uint64_t other_count = wire::make_identity(5, 0x1234);
  for (uint64_t odd : {round4, other_count}) {
    Harness h;
    h.call(1, settc(3, mask_of({1, 2, 3})));
    h.call(1, settc(3, mask_of({1, 2, 3}), 1, true));  // every channel a root (they all await)
    auto with = [](Message m, uint64_t id) {
      m.op_id = id;
      return m;
    };
    EXPECT_EQ(Harness::error_of(h.call(1, with(value(Opcode::SUMI64, 3, 10), round5))), Error::none);
    EXPECT_EQ(Harness::error_of(h.call(2, with(value(Opcode::SUMI64, 3, 20), odd))), Error::mismatch);
    const auto last = h.call(3, with(value(Opcode::SUMI64, 3, 30), round5));
    ASSERT_TRUE(Harness::data(last).empty()) << "no result from contributions of two identities";
    uint64_t told = 0;
    for (const auto& d : last)
      if (d.msg.ins.opcode == Opcode::NACK && nack_error(d.msg.data1) == Error::mismatch && d.msg.addr.msgtag == 3)
        told |= d.channels;
    EXPECT_EQ(told, mask_of({1, 2, 3})) << "every root (all three channels) is told";
    // The tag is free; an operation whose contributions agree completes with their identity.
    h.call(1, settc(3, mask_of({1, 2})));
    h.call(1, settc(3, mask_of({1}), 1, true));
    h.call(1, with(value(Opcode::SUMI64, 3, 1), round5));
    const auto d = Harness::data(h.call(2, with(value(Opcode::SUMI64, 3, 2), round5)));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].msg.data64(), 3u);
    EXPECT_EQ(d[0].msg.op_id, round5);
  }
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
      EXPECT_EQ(nack_error(d.msg.data1), Error::mask_in_use);
      ++in_use;
    }
    if (d.msg.ins.opcode == Opcode::ACK) ++acks;
  }
  EXPECT_EQ(in_use, 2);
  EXPECT_EQ(acks, 7);  // 3 LOCK + 3 UNLOCK + 1 SETTC
  // The entry is free again only after every channel has contributed; a
  // SETTC from a channel that has contributed is for the next operation: it
  // waits until this one is over, then initialises the entry.
  for (int ch : {1, 2}) h.call(ch, gas(Opcode::BENTRY, 20));
  EXPECT_TRUE(h.call(1, settc(20, mask)).empty());
  EXPECT_TRUE(h.ctl.held(1));
  EXPECT_EQ(Harness::error_of(h.call(3, settc(20, mask))), Error::mask_in_use);  // 3 is still pending
  auto d = h.call(3, gas(Opcode::BENTRY, 20));
  EXPECT_EQ(Harness::error_of(d), Error::none);
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](const Delivery& x) { return x.msg.ins.opcode == Opcode::ACK; }), 2);
  EXPECT_TRUE(h.ctl.ram().tc(0, 20).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 20).pending, mask);
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
  // An empty mask is a VOID (controller.h "Voiding"): nothing of channel 2's on word 30 to void.
  EXPECT_EQ(Harness::error_of(h.call(2, settc(30, 0))), Error::none);
  EXPECT_FALSE(h.ctl.ram().tc(0, 30).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 12).mask, mask_of({1, 2}));
  controller::Config small;
  small.channels = 8;
  Harness s(small);
  EXPECT_EQ(Harness::error_of(s.call(1, settc(0, channel_bit(9)))), Error::bad_mask);
}

// A reduction whose call failed on channel 3 (its contribution never came) keeps the
// others' contributions: channel 3's next contribution would complete it with another
// round's value. Channel 3's VOID (a SETTC with an empty mask) ends it first: the others
// get NACK voided, the entries are free, and the next round's sum is its own.
TEST(Controller, AVoidEndsTheOperationOnItsWordsSoTheNextStartsClean) {
  Harness h;
  const uint64_t all = mask_of({1, 2, 3});
  auto round = [&](uint64_t a, uint64_t b) {
    h.call(1, make(Opcode::LOCK, 1));
    h.call(1, settc(60, all));
    h.call(1, settc(60, mask_of({1}), 1, true));
    EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::SUMI64, 60, a))), Error::none);
    h.call(1, make(Opcode::UNLOCK, 1));
    EXPECT_TRUE(Harness::data(h.call(2, value(Opcode::SUMI64, 60, b))).empty());
  };
  round(10, 20);
  // A channel outside the operation voids nothing of it.
  EXPECT_EQ(Harness::error_of(h.call(4, settc(60, 0))), Error::none);
  EXPECT_TRUE(h.ctl.ram().tc(0, 60).accessed);
  auto voided = h.call(3, settc(60, 0));
  ASSERT_EQ(voided.size(), 2u);
  EXPECT_EQ(voided[0].msg.ins.opcode, Opcode::ACK);
  EXPECT_EQ(voided[1].channels, mask_of({1, 2}));
  EXPECT_EQ(voided[1].msg.addr.msgtag, 60u);
  EXPECT_EQ(nack_error(voided[1].msg.data1), Error::voided);
  EXPECT_FALSE(h.ctl.ram().tc(0, 60).accessed);
  EXPECT_FALSE(h.ctl.ram().bm(0, 60).accessed);
  round(100, 200);
  auto result = Harness::data(h.call(3, value(Opcode::SUMI64, 60, 300)));
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].channels, mask_of({1}));
  EXPECT_EQ(result[0].msg.data64(), 600u);
  // A VOID from a channel that has contributed already is not held for the operation
  // (its next contribution would be): it ends it at once.
  h.call(1, settc(61, mask_of({1, 2})));
  h.call(1, gas(Opcode::BENTRY, 61));
  auto ended = h.call(1, settc(61, 0));
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[1].channels, mask_of({2}));
  EXPECT_EQ(nack_error(ended[1].msg.data1), Error::voided);
  EXPECT_FALSE(h.ctl.ram().tc(0, 61).accessed);
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
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(3, 1), kSupervisor)), Error::none);
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(4, 1), kSupervisor)), Error::none);
  EXPECT_EQ(h.ctl.channel_partition(3), 1);
  EXPECT_EQ(Harness::error_of(h.call_as(1, supervisor_sas_write(5, 99), kSupervisor)), Error::address_range);

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
  // The in-process sender is a user task: it cannot set U/S either.
  EXPECT_EQ(Harness::error_of(h.call(1, w)), Error::protection);
  EXPECT_EQ(h.ctl.ram().sas(70), 0u);
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, kSupervisor)), Error::none);
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
  EXPECT_EQ(nack_error(h.out[0].msg.data1), Error::address_range);
  EXPECT_EQ(nack_opcode(h.out[0].msg.data1), uint32_t(Opcode::SUMI32));
  EXPECT_EQ(h.out[0].channels, channel_bit(6));
  h.out.clear();
  const uint32_t garbage[] = {0x7FFFFFFFu, 1u};
  h.ctl.receive_words(6, garbage, h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(nack_error(h.out[0].msg.data1), Error::unknown_opcode);
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
  hardware::Timing t;
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
