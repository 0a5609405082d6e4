// cop/model/scale.h: the two-level expressions of analytic.h against hand
// computations with Hall's timings (seed 000 ch. VI; Figure 5 of ch. IV), and
// every row of `copbench model scale` against the controller cores.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/analytic.h"
#include "model/scale.h"

using namespace cop::model;

namespace {

uint64_t two_level(Function f, DataType dt, uint64_t nodes, uint64_t elements, const Timing& t = Timing{}) {
  const Hierarchy h = hierarchy(nodes);
  return two_level_cycles(f, t, OpCosts::hall(t, dt), best_load(t, dt, h.per_controller - 1), h, elements);
}

// The table with Hall's timings, computed once per test process (a few seconds).
const std::vector<ScaleRow>& hall_rows() {
  static const std::vector<ScaleRow> rows = scale(Timing{});
  return rows;
}

}  // namespace

TEST(Scale, HierarchyFollowsFigureFive) {
  const Hierarchy one = hierarchy(64);
  EXPECT_EQ(one.levels, 1);
  EXPECT_EQ(one.per_controller, 64u);
  EXPECT_EQ(one.controllers, 1u);
  const Hierarchy h = hierarchy(100);
  EXPECT_EQ(h.levels, 2);
  EXPECT_EQ(h.per_controller, 64u);
  EXPECT_EQ(h.controllers, 2u);
  EXPECT_EQ(h.last_controller, 36u);
  EXPECT_EQ(hierarchy(4096).controllers, 64u);
  EXPECT_EQ(hierarchy(4096).last_controller, 64u);
  EXPECT_THROW(hierarchy(4097), std::invalid_argument);
  EXPECT_THROW(hierarchy(0), std::invalid_argument);
  EXPECT_THROW(two_level_cycles(Function::barrier_spmd, Timing{}, OpCosts{}, Load{}, one, 1), std::invalid_argument);
  EXPECT_THROW(two_level(Function::write, DataType::integer, 128, 1), std::invalid_argument);
}

TEST(Scale, TwoLevelBarrierByHand) {
  // Level 1 in: t_CN-COP 11 + C̄1 63 x 3 + LOCK 3 + SETTC, SETBM, BENTRY, UNLOCK 4 x 3
  // + 63 slaves' BENTRY x 3 = 404; up 11; level 2: K x 3; down 17; out 3 + 17.
  EXPECT_EQ(two_level(Function::barrier_master_slave, DataType::integer, 128, 1), 404u + 11 + 2 * 3 + 17 + 3 + 17);
  EXPECT_EQ(two_level(Function::barrier_master_slave, DataType::integer, 4096, 1), 404u + 11 + 64 * 3 + 17 + 3 + 17);
  // SPMD: each fellow node's LOCK, SETTC, BENTRY, UNLOCK (4 x 3) instead of one BENTRY.
  EXPECT_EQ(two_level(Function::barrier_spmd, DataType::integer, 4096, 1),
            11u + 63 * 3 + 3 + 12 + 63 * 12 + 11 + 64 * 3 + 17 + 3 + 17);
  // t_CN-COP is paid twice: the source node's link and the level-1 -> level-2 link.
  Timing slow;
  slow.t_cn_cop = 20;
  EXPECT_EQ(two_level(Function::barrier_master_slave, DataType::integer, 4096, 1, slow), 644u + 2 * 9);
}

TEST(Scale, TwoLevelBroadcastIsThreePasses) {
  // ch. IV: node 0 -> controller 0 -> level 2 -> every level-1 controller -> its 64 nodes.
  const uint64_t level1_in = (11 + 63 * 7 + 3) + 3 + 3;  // queue, LOCK; SETBM; BCAST serviced
  const uint64_t up = 11;
  const uint64_t level2 = 63 * 7 + 3;  // the 63 other level-1 controllers' visits, then the BCAST
  const uint64_t down = 17;
  const uint64_t level1_out = 3 + 17;
  EXPECT_EQ(two_level(Function::bcast, DataType::floating, 4096, 1), level1_in + up + level2 + down + level1_out);
  EXPECT_NEAR(scale_analytic_us(Function::bcast, DataType::floating, Timing{}, 4096, 1), 9.53, 1e-9);
  // A few elements follow the first at the level 2's pace, t_OP + t_COP-CN each.
  EXPECT_EQ(two_level(Function::bcast, DataType::floating, 4096, 4), 953u + 3 * (3 + 17));
  // A 1 KB array: controller 0 forwards every element up (3 + 11) and passes it
  // out to its own nodes when it comes back (3 + 17): 34 cycles an element.
  const uint64_t lock_setbm = 11 + 63 * 7 + 3 + 3;
  EXPECT_EQ(two_level(Function::bcast, DataType::floating, 4096, 128), lock_setbm + 128 * 34);
  // 2048 elements: two SETBMs (1024 entries each).
  EXPECT_EQ(two_level(Function::bcast, DataType::floating, 128, 2048), lock_setbm + 3 + 2048 * 34);
}

TEST(Scale, TwoLevelReduceByHand) {
  // t_init 11 + 63 x 3 + 3 + SETTC, SETBM 6 + own element 3 + UNLOCK 3 = 215; the element:
  // level-1 round 62 x 3 + 3, up 11, level 2 2 x 3, down 17, out 3 + 17.
  EXPECT_EQ(two_level(Function::reduce, DataType::integer, 128, 1), 215u + 62 * 3 + 3 + 11 + 2 * 3 + 17 + 3 + 17);
  // Doubles at 4096, 2 elements: the FP unit (7) for the element operations
  // (the source's own elements carry X as SUMF, the results pass out as SUMF),
  // 3 for the rest. The level-1 (round 63 x 7, up 11, a result out 7 + 17 = 476)
  // paces the elements; the last one's level-2 pass (64 x 7 + 17) ends the call.
  const uint64_t init = 11 + 63 * 7 + 3 + 6 + 2 * 7 + 3;
  EXPECT_EQ(two_level(Function::reduce, DataType::floating, 4096, 2), init + 2 * (62 * 7 + 7 + 11 + 7 + 17) + 64 * 7 + 17);
  // 1024 integers at 128 nodes: 220 cycles an element at the level-1.
  EXPECT_EQ(two_level(Function::reduce, DataType::integer, 128, 1024),
            (11u + 63 * 3 + 3 + 6 + 1024 * 3 + 3) + 1024 * (63 * 3 + 11 + 3 + 17) + 2 * 3 + 17);
}

// Every row of the table has the cores' time beside the expression's; they
// agree within 1 % and any difference at all carries a note that explains it.
TEST(Scale, EveryRowIsSimulatedAndEveryDifferenceExplained) {
  const auto& rows = hall_rows();
  ASSERT_EQ(rows.size(), 9u * scale_nodes().size());
  int two_level_rows = 0, exact_two_level = 0;
  for (const auto& r : rows) {
    const std::string what = r.function + " " + r.type + " " + std::to_string(r.size) + " B at " + std::to_string(r.nodes);
    ASSERT_TRUE(r.simulated_us.has_value()) << what;
    EXPECT_EQ(r.levels, r.nodes > 64 ? 2 : 1) << what;
    EXPECT_EQ(r.note.empty(), *r.simulated_us == r.analytic_us) << what << ": " << r.note;
    EXPECT_EQ(r.note.find("not explained"), std::string::npos) << what << ": " << r.note;
    EXPECT_EQ(r.note.find("not compared"), std::string::npos) << what << ": " << r.note;
    // The one-level SPMD barrier is ch. VI's own expression, one t_OP off (5 % at 2 nodes).
    if (r.levels == 1 && r.type == "spmd") continue;
    EXPECT_LE(std::abs(*r.difference()), 0.01) << what << ": " << r.note;
    if (r.levels == 2) {
      ++two_level_rows;
      exact_two_level += r.note.empty();
    }
  }
  EXPECT_EQ(two_level_rows, 9 * 4);
  // Exact: the master-slave barrier, every one-element reduce and bcast, the
  // 1024-element reductions below 4096 nodes (4 x 4 + 2 x 3).
  EXPECT_EQ(exact_two_level, 22);
}

TEST(Scale, NotesGiveTheCyclesTheyExplain) {
  const auto& rows = hall_rows();
  auto row = [&](const std::string& f, const std::string& type, uint64_t size, uint64_t nodes) {
    for (const auto& r : rows)
      if (r.function == f && r.type == type && r.size == size && r.nodes == nodes) return r;
    ADD_FAILURE() << "no row " << f << " " << type << " " << size << " " << nodes;
    return ScaleRow{};
  };
  // The documented difference (table3's note too): the exit before the last UNLOCK, one t_OP.
  for (uint64_t nodes : {16u, 64u, 4096u}) {
    const ScaleRow spmd = row("cop_barrier", "spmd", 0, nodes);
    EXPECT_NEAR(spmd.analytic_us - *spmd.simulated_us, 0.03, 1e-9) << nodes;
    EXPECT_NE(spmd.note.find("-3 cycles"), std::string::npos) << spmd.note;
    EXPECT_NE(spmd.note.find("UNLOCK"), std::string::npos) << spmd.note;
  }
  // 4096 nodes: the level 2's pass (64 x 3 + 17 = 209) outlasts the level-1's round and up (200).
  const ScaleRow reduce = row("cop_reduce", "integer", 8192, 4096);
  EXPECT_NE(reduce.note.find("-20 cycles"), std::string::npos) << reduce.note;
  EXPECT_NE(reduce.note.find("209"), std::string::npos) << reduce.note;
  EXPECT_TRUE(row("cop_reduce", "integer", 8192, 1024).note.empty());
  EXPECT_TRUE(row("cop_bcast", "double", 8, 4096).note.empty());
  const ScaleRow bcast = row("cop_bcast", "double", 16384, 4096);
  EXPECT_NE(bcast.note.find("level-2 pass"), std::string::npos) << bcast.note;
  EXPECT_GT(*bcast.simulated_us, bcast.analytic_us);
  EXPECT_LE(*bcast.simulated_us - bcast.analytic_us, 0.2 + 1e-9);  // at most t_OP + t_COP-CN
}

TEST(Scale, OneLevelAtSixtyFourNodesIsTableThree) {
  // Table III's best master-slave barrier and integer reduce: 4.21 us.
  const Timing t;
  EXPECT_NEAR(scale_analytic_us(Function::barrier_master_slave, DataType::integer, t, 64, 1), 4.21, 1e-9);
  EXPECT_NEAR(scale_analytic_us(Function::reduce, DataType::integer, t, 64, 1), 4.21, 1e-9);
  EXPECT_THROW(scale_analytic_us(Function::reduce, DataType::integer, t, 1, 1), std::invalid_argument);
}

TEST(Scale, CsvHeaderAndBothTimesOnEveryRow) {
  const std::string csv = scale_csv(hall_rows());
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "function,type,size,nodes,levels,analytic_us,simulated_us,note");
  EXPECT_NE(csv.find("\ncop_bcast,double,8,4096,2,9.5300,9.5300,\n"), std::string::npos);
  EXPECT_NE(csv.find("\ncop_barrier,master-slave,0,4096,2,6.4400,6.4400,\n"), std::string::npos);
  EXPECT_NE(csv.find("\ncop_barrier,master-slave,0,64,1,4.2100,4.2100,\n"), std::string::npos);
}
