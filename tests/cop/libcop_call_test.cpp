// The libcop-call model (cop/model/libcop_call.h): with the live stack's ideal link it
// is ch. VI's expression plus the commands libcop sends that ch. VI does not count;
// over sim-cop's serial link it adds the terms worked out here by hand, command by
// command (Hall's timings: t_CN-COP 11, t_OP 3 / 7, t_COP-CN 17, a wire time of 4).
#include <gtest/gtest.h>

#include <stdexcept>

#include "model/analytic.h"
#include "model/libcop_call.h"

namespace cop::model {
namespace {

const Timing kT;
const OpCosts kInt = OpCosts::hall(kT, DataType::integer);

uint64_t ideal(Function f, uint64_t nodes, uint64_t elements, DataType type = DataType::integer) {
  return libcop_call_cycles(f, type, kT, SerialLink::ideal(), nodes, elements);
}
uint64_t simulated(Function f, uint64_t nodes, uint64_t elements, DataType type = DataType::integer) {
  return libcop_call_cycles(f, type, kT, SerialLink::simulated(kT), nodes, elements);
}

TEST(LibcopCall, SimulatedLinkIsFourCyclesAMessage) {
  EXPECT_EQ(SerialLink::simulated(kT).wire, 4u);  // 16 B at 400 MB/s = 40 ns, P_CLK 10 ns
  Timing slow = kT;
  slow.p_clk_ns = 20;
  EXPECT_EQ(SerialLink::simulated(slow).wire, 2u);
}

// The live stack (tests/cop/modelled_check.cpp): C̄ = the channels that send.
TEST(LibcopCall, IdealLinkIsChapterSixPlusWhatLibcopSends) {
  for (uint64_t n : {2u, 3u, 8u, 64u}) {
    const Load others{n - 1, kT.t_op_int};
    EXPECT_EQ(ideal(Function::barrier_spmd, n, 1), analytic_cycles(Function::barrier_spmd, kT, kInt, others, 1)) << n;
    for (uint64_t e : {1u, 2u, 128u})  // each other channel's SETTC, SETBM and UNLOCK on top
      EXPECT_EQ(ideal(Function::reduce, n, e), analytic_cycles(Function::reduce, kT, kInt, others, e) + (n - 1) * 3 * kInt.ctl)
          << n << " nodes, " << e << " elements";
    const Load none{0, kT.t_op_int};  // a broadcast's receivers send nothing
    EXPECT_EQ(ideal(Function::bcast, n, 1), analytic_cycles(Function::bcast, kT, kInt, none, 1));
    EXPECT_EQ(ideal(Function::bcast, n, 128), analytic_cycles(Function::bcast, kT, kInt, none, 128));
    // 16 bursts of 128, one t_CN-COP: the bursts follow each other.
    EXPECT_EQ(ideal(Function::bcast, n, 2048), 16 * analytic_cycles(Function::bcast, kT, kInt, none, 128) - 15 * kT.t_cn_cop);
  }
}

TEST(LibcopCall, BarrierOverTheLinkByHand) {
  // First channel: LOCK ready at 11, its 4 more commands 4 apart: UNLOCK done at 30.
  // Second: LOCK, SETTC, SETBM, BENTRY (42), the exit onto the links (59), UNLOCK (62),
  // its 5 answers back: 17 + 4 x 4 = 33 -> 95.
  EXPECT_EQ(simulated(Function::barrier_spmd, 2, 1), 95u);
  // Each further channel: 5 x t_OP.
  EXPECT_EQ(simulated(Function::barrier_spmd, 64, 1), 95u + 62 * 15);
}

TEST(LibcopCall, ReduceOverTheLinkByHand) {
  // Two ints: first burst of 6 ends at 11 + 5 x 4 + 3 = 34; the last one's LOCK, SETTC,
  // SETBM (9), two elements each with its result (2 x 20), UNLOCK (3): 86; answers 17 + 5 x 4.
  EXPECT_EQ(simulated(Function::reduce, 2, 2), 123u);
  // One double: the element (7) outruns the wire; first burst ends at 33, the last 36 more.
  EXPECT_EQ(simulated(Function::reduce, 2, 1, DataType::floating), 102u);
  // 2048 ints, 16 bursts: the second node's answers and next burst (3127 cycles) gate
  // each further burst at 2 nodes; the controller's work (N x 396 + 128 x 17) from 4 on.
  EXPECT_EQ(simulated(Function::reduce, 2, 2048), 3651u + 15 * 3127);
  EXPECT_EQ(simulated(Function::reduce, 4, 2048), 4443u + 15 * (4 * 396 + 128 * 17));
}

TEST(LibcopCall, BroadcastOverTheLinkByHand) {
  // LOCK 11-14, SETBM 15-18, BCAST 19-22 onto the links (39), UNLOCK 42; 4 answers: 29.
  EXPECT_EQ(simulated(Function::bcast, 2, 1), 71u);
  EXPECT_EQ(simulated(Function::bcast, 64, 1), 71u);  // the receivers send nothing
  // 128 elements, each BCAST + t_COP-CN = 20: 19 + 2560 + 3, answers 17 + 130 x 4.
  EXPECT_EQ(simulated(Function::bcast, 2, 128), 3119u);
  EXPECT_EQ(simulated(Function::bcast, 2, 2048), 16 * 3119u);  // the root awaits each burst's answers
}

TEST(LibcopCall, TwoLevelsGrowWithTheLevelTwo) {
  // Above 64 nodes a full level-1's pass, then the level 2: more level-1 controllers
  // add their entries at the level 2 (t_OP each).
  const uint64_t b128 = simulated(Function::barrier_spmd, 128, 1), b1024 = simulated(Function::barrier_spmd, 1024, 1);
  EXPECT_EQ(b1024 - b128, (16 - 2) * kT.t_op_int);
  EXPECT_GT(b128, simulated(Function::barrier_spmd, 64, 1));
  EXPECT_GT(simulated(Function::bcast, 128, 1), simulated(Function::bcast, 64, 1));
  EXPECT_GT(simulated(Function::reduce, 128, 2), simulated(Function::reduce, 64, 2));
  // Two ints: the root level-1's last channel has its first element up at 1201 (its 64
  // bursts of LOCK, SETTC, SETBM, 2 elements, UNLOCK and the 2 masks its first node
  // forwards); the level 2 passes it down (20) and the level-1 out (20), the second
  // element 20 behind: 1261. At 64 level-1s the level 2 is slower: from the other
  // level-1s' first element (1201 - 64 x 3, no SETBM in their bursts) 64 x 2 entries
  // (3 each) and 2 broadcasts (17), then the level-1's pass (20): 1447.
  EXPECT_EQ(simulated(Function::reduce, 128, 2), 1261u);
  EXPECT_EQ(simulated(Function::reduce, 1024, 2), 1261u);
  EXPECT_EQ(simulated(Function::reduce, 4096, 2), 1447u);
}

// A platform's link (CopHardware, results/platforms/present.xml): 16 B at 100 Gbit/s is
// 1.28 ns, taken on a clock edge: 2 cycles of 1 ns; a link's flight F (pipelined) adds
// F to each crossing on the call's critical path: 2F on one controller for a call of
// one burst (up, down), 4F through the level 2 (up twice, down twice).
TEST(LibcopCall, PlatformLinkRoundsTheWireUpAndAddsItsFlightPerCrossing) {
  CopHardware hw;
  hw.timing.p_clk_ns = 1;
  hw.link_bytes_per_second = 12.5e9;
  EXPECT_EQ(SerialLink::of(hw).wire, 2u);
  EXPECT_EQ(SerialLink::of(CopHardware{}).wire, 4u);  // the thesis's, as SerialLink::simulated
  EXPECT_EQ(SerialLink::of(CopHardware{}).flight, 0u);
  SerialLink far = SerialLink::simulated(kT);
  far.flight = 500;
  auto with = [&](const SerialLink& l, Function f, uint64_t nodes, uint64_t elements) {
    return libcop_call_cycles(f, DataType::integer, kT, l, nodes, elements);
  };
  const SerialLink near = SerialLink::simulated(kT);
  for (uint64_t n : {2u, 8u, 64u}) {
    EXPECT_EQ(with(far, Function::barrier_spmd, n, 1), with(near, Function::barrier_spmd, n, 1) + 1000) << n;
    EXPECT_EQ(with(far, Function::reduce, n, 128), with(near, Function::reduce, n, 128) + 1000) << n;
    EXPECT_EQ(with(far, Function::bcast, n, 256), with(near, Function::bcast, n, 256) + 2 * 1000) << n;  // 2 bursts
  }
  EXPECT_EQ(with(far, Function::barrier_spmd, 128, 1), with(near, Function::barrier_spmd, 128, 1) + 2000);
  EXPECT_EQ(with(far, Function::bcast, 128, 1), with(near, Function::bcast, 128, 1) + 2000);
}

TEST(LibcopCall, RefusesWhatItDoesNotModel) {
  EXPECT_THROW(simulated(Function::write, 8, 1), std::invalid_argument);
  EXPECT_THROW(simulated(Function::barrier_spmd, 1, 1), std::invalid_argument);
  EXPECT_THROW(simulated(Function::barrier_spmd, 4097, 1), std::invalid_argument);
}

}  // namespace
}  // namespace cop::model
