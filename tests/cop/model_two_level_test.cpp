// cop/model/scenario_two_level: collectives over N nodes on ceil(N/64) level-1
// cores and one level-2 core (seed 000 ch. IV, Figure 5), timed by the cores'
// clocks. The results every node got are compared with a local computation;
// the cycles with Hall's costs summed by hand along the path, with the
// expression of analytic.h, and on one level with the one-level scenario.
#include "model/scenario_two_level.h"

#include <gtest/gtest.h>

#include <bit>
#include <stdexcept>

#include "model/scenario.h"

using namespace cop::model;

namespace {

uint64_t expression(Function f, DataType dt, uint64_t nodes, uint64_t elements, const Timing& t = Timing{}) {
  const Hierarchy h = hierarchy(nodes);
  return two_level_cycles(f, t, OpCosts::hall(t, dt), best_load(t, dt, h.per_controller - 1), h, elements);
}

// Node i contributes i + e to element e: the sum over every node, computed here.
uint64_t local_sum(int nodes, uint64_t e) {
  uint64_t sum = 0;
  for (int i = 0; i < nodes; ++i) sum += uint64_t(i) + e;
  return sum;
}

}  // namespace

TEST(ModelTwoLevel, ABroadcastTo4095NodesIsThreePassesThroughALevel) {
  const Timing t;
  const TwoLevelResult r = simulate_two_level(Function::bcast, DataType::integer, 4096, t);
  EXPECT_EQ(r.level1s, 64);
  EXPECT_EQ(r.passes, 3);
  // Controller 0: 63 fellow nodes' visits, the source's LOCK, SETBM, BCAST64
  // (t_CN-COP + 66 t_OP), up (t_CN-COP); level 2: the 63 other level-1
  // controllers' requests and the BCAST64 (64 t_OP), down (t_COP-CN); every
  // level-1 passes it out (t_OP + t_COP-CN).
  EXPECT_EQ(r.cycles, t.t_cn_cop + 66 * t.t_op_int + t.t_cn_cop + 64 * t.t_op_int + t.t_cop_cn + t.t_op_int + t.t_cop_cn);
  EXPECT_EQ(r.cycles, expression(Function::bcast, DataType::integer, 4096, 1));
  EXPECT_DOUBLE_EQ(r.us, t.us(r.cycles));
  EXPECT_EQ(r.results, 4095u);
  ASSERT_EQ(r.values.size(), 1u);
  EXPECT_EQ(r.values[0], 0x5EEDu);
}

TEST(ModelTwoLevel, ReductionsGiveEveryNodeTheSumOfEveryNode) {
  // 130 nodes: two full level-1 controllers and one with 2 nodes.
  const TwoLevelResult r = simulate_two_level(Function::reduce, DataType::integer, 130, Timing{}, 3);
  EXPECT_EQ(r.level1s, 3);
  EXPECT_EQ(r.results, 130u * 3);
  ASSERT_EQ(r.values.size(), 3u);
  for (uint64_t e = 0; e < 3; ++e) EXPECT_EQ(r.values[e], local_sum(130, e)) << e;
  const TwoLevelResult d = simulate_two_level(Function::reduce, DataType::floating, 4096, Timing{}, 2);
  EXPECT_EQ(d.results, 4096u * 2);
  ASSERT_EQ(d.values.size(), 2u);
  for (uint64_t e = 0; e < 2; ++e) EXPECT_EQ(std::bit_cast<double>(d.values[e]), double(local_sum(4096, e))) << e;
  EXPECT_EQ(d.nacks, 0u);
  // One element is the expression's three passes, cycle for cycle, also with a
  // smaller last level-1 (its contribution is in before the full ones').
  EXPECT_EQ(simulate_two_level(Function::reduce, DataType::floating, 4096).cycles,
            expression(Function::reduce, DataType::floating, 4096, 1));
  EXPECT_EQ(r.cycles, expression(Function::reduce, DataType::integer, 130, 3));
}

TEST(ModelTwoLevel, BroadcastDataReachesEveryNodeButTheSource) {
  const TwoLevelResult r = simulate_two_level(Function::bcast, DataType::floating, 130, Timing{}, 2048);
  EXPECT_EQ(r.results, 129u * 2048);
  ASSERT_EQ(r.values.size(), 2048u);
  for (uint64_t e = 0; e < 2048; ++e) ASSERT_EQ(std::bit_cast<double>(r.values[e]), double(0x5EED + e)) << e;
  // Controller 0 forwards every element up and passes it out again: 34 cycles an
  // element, and at most one level-2 pass (t_OP + t_COP-CN) more at the end.
  const uint64_t a = expression(Function::bcast, DataType::floating, 130, 2048);
  EXPECT_GE(r.cycles, a);
  EXPECT_LE(r.cycles, a + 3 + 17);
}

TEST(ModelTwoLevel, BarriersReleaseEveryNodeOnce) {
  const Timing t;
  const TwoLevelResult b = simulate_two_level(Function::barrier_spmd, DataType::integer, 4096, t);
  EXPECT_EQ(b.results, 4096u);
  EXPECT_TRUE(b.values.empty());
  // Each fellow node's SETTC finds its level-1's entry set (SPMD).
  EXPECT_EQ(b.nacks, 4096u - 64);
  // The level-1's BENTRY goes up as soon as its last BENTRY is serviced: the
  // last fellow node's UNLOCK (t_OP), which the expression counts, comes after.
  EXPECT_EQ(b.cycles + t.t_op_int, expression(Function::barrier_spmd, DataType::integer, 4096, 1));
  const TwoLevelResult m = simulate_two_level(Function::barrier_master_slave, DataType::integer, 200, t);
  EXPECT_EQ(m.results, 200u);
  EXPECT_EQ(m.nacks, 0u);
  EXPECT_EQ(m.cycles, expression(Function::barrier_master_slave, DataType::integer, 200, 1));
}

// On one controller the scenario is the one-level scenario's call, command for
// command: the same cycles (a broadcast there ends at the source's UNLOCK, t_OP later).
TEST(ModelTwoLevel, OnOneLevelItIsTheOneLevelScenario) {
  const Timing t;
  for (Function f : {Function::barrier_master_slave, Function::barrier_spmd, Function::reduce, Function::bcast})
    for (DataType dt : {DataType::integer, DataType::floating})
      for (int nodes : {2, 17, 64})
        for (uint64_t n : {1u, 5u}) {
          if (n > 1 && (f == Function::barrier_spmd || f == Function::barrier_master_slave)) continue;
          const TwoLevelResult two = simulate_two_level(f, dt, nodes, t, n);
          EXPECT_EQ(two.level1s, 1);
          EXPECT_EQ(two.passes, 1);
          const uint64_t one = simulate(f, dt, Column::best, t, uint64_t(nodes - 1), n).cycles;
          EXPECT_EQ(two.cycles + (f == Function::bcast ? t.t_op_int : 0), one)
              << function_name(f) << " " << int(dt) << " " << nodes << " nodes " << n << " elements";
        }
}

TEST(ModelTwoLevel, RefusesWhatItDoesNotModel) {
  EXPECT_THROW(simulate_two_level(Function::rmw, DataType::integer, 128), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::bcast, DataType::integer, 4097), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::bcast, DataType::integer, 1), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::reduce, DataType::integer, 128, Timing{}, 0), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::reduce, DataType::integer, 128, Timing{}, 2049), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::barrier_spmd, DataType::integer, 128, Timing{}, 2), std::invalid_argument);
}
