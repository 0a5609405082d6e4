// cop/model/scenario_two_level: collectives over N nodes on ceil(N/64) level-1
// cores and one level-2 core (seed 000 ch. IV, Figure 5), timed by the cores'
// clocks. The expected cycles are Hall's costs summed by hand along the path.
#include "model/scenario_two_level.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace cop::model;

TEST(ModelTwoLevel, ABroadcastTo4095NodesIsThreePassesThroughALevel) {
  const Timing t;
  const TwoLevelResult r = simulate_two_level(Function::bcast, DataType::integer, 4096, t);
  EXPECT_EQ(r.level1s, 64);
  EXPECT_EQ(r.passes, 3);
  // Node -> level 1 -> level 2 -> every level 1 -> every node: t_CN-COP twice
  // (the node's link, the link up), t_OP at each level, t_COP-CN twice.
  EXPECT_EQ(r.cycles, 2 * t.t_cn_cop + 3 * t.t_op_int + 2 * t.t_cop_cn);
  EXPECT_DOUBLE_EQ(r.us, t.us(r.cycles));
  // On one controller: one pass.
  const TwoLevelResult one = simulate_two_level(Function::bcast, DataType::integer, 64, t);
  EXPECT_EQ(one.level1s, 1);
  EXPECT_EQ(one.passes, 1);
  EXPECT_EQ(one.cycles, t.t_cn_cop + t.t_op_int + t.t_cop_cn);
}

TEST(ModelTwoLevel, BarrierAndReduceServiceEveryContributionAtEachLevel) {
  const Timing t;
  const TwoLevelResult b = simulate_two_level(Function::barrier_spmd, DataType::integer, 4096, t);
  // 64 BENTRYs at each level-1 (in parallel), one combined each at the level 2, then down.
  EXPECT_EQ(b.cycles, 2 * t.t_cn_cop + 64 * t.t_op_int + 64 * t.t_op_int + t.t_cop_cn + t.t_op_int + t.t_cop_cn);
  EXPECT_EQ(b.serviced, 4096u + 64u);
  const TwoLevelResult f = simulate_two_level(Function::reduce, DataType::floating, 4096, t);
  EXPECT_EQ(f.cycles, 2 * t.t_cn_cop + 128 * t.t_op_fp + t.t_cop_cn + t.t_op_fp + t.t_cop_cn);
  // 130 nodes: two full level-1s' worth of work on the first two, 2 nodes on the third.
  const TwoLevelResult r = simulate_two_level(Function::reduce, DataType::integer, 130, t);
  EXPECT_EQ(r.level1s, 3);
  // The third level-1's combined contribution is in long before: the level 2 waits for two.
  EXPECT_EQ(r.cycles, 2 * t.t_cn_cop + 64 * t.t_op_int + 2 * t.t_op_int + t.t_cop_cn + t.t_op_int + t.t_cop_cn);
  const TwoLevelResult single = simulate_two_level(Function::barrier_spmd, DataType::integer, 64, t);
  EXPECT_EQ(single.cycles, t.t_cn_cop + 64 * t.t_op_int + t.t_cop_cn);
}

TEST(ModelTwoLevel, RefusesWhatItDoesNotModel) {
  EXPECT_THROW(simulate_two_level(Function::rmw, DataType::integer, 128), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::bcast, DataType::integer, 4097), std::invalid_argument);
  EXPECT_THROW(simulate_two_level(Function::bcast, DataType::integer, 1), std::invalid_argument);
}
