// The report's COP projection of an md point (suite/report/cop_projection.h) from the
// counters md records: each part's calls by size priced with the ch. VI expressions,
// worked out here from cop/model/analytic.h directly, and Table V's cells built from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/analytic.h"
#include "report/cop_projection.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace {

using Row = std::vector<std::string>;
using cop::model::DataType;
using cop::model::Function;

// One libcop call on `ranks` channels, C̄ = ranks - 1 and t̄OP = t_OP of its type.
double call_s(Function f, DataType type, int ranks, uint64_t elements) {
  const cop::model::Timing t;
  const cop::model::Load load{uint64_t(ranks - 1), type == DataType::floating ? t.t_op_fp : t.t_op_int};
  return t.us(cop::model::analytic_cycles(f, t, cop::model::OpCosts::hall(t, type), load, elements)) * 1e-6;
}

// md on 3 nodes (one task each): fractions, seconds summed over tasks and calls by size.
PointMedian md_point() {
  PointMedian m;
  m.benchmark = "md";
  m.run_name = m.family = m.plot_family = "md/atoms:12/steps:5";
  m.mode = BackendMode{"mpi", "", "", "native"};
  m.nodes = 3;
  m.median_us = 1000;
  m.counters = {{"nodes", 3},
                {"frac_multicast", 0.2},
                {"frac_reduction", 0.1},
                {"frac_barrier", 0.05},
                {"frac_point_to_point", 0.15},
                {"frac_communication", 0.5},
                {"frac_computation", 0.5},
                {"seconds_multicast", 0.02},
                {"seconds_reduction", 0.004},
                {"seconds_barrier", 0.003},
                {"seconds_point_to_point", 0.01},
                {"calls_multicast_24", 6},
                {"calls_multicast_4", 3},  // one 64-bit word, as 8 bytes
                {"calls_reduction_16", 3},  // two doubles
                {"calls_barrier_0", 6},
                {"calls_point_to_point_96", 4},
                {"calls_point_to_point_100", 2}};  // 13 words
  return m;
}

const std::vector<std::string> kParts = {"multicast", "reduction", "barrier", "point_to_point"};

TEST(CopProjection, EachPartIsItsSecondsOverTheModelledTimeOfItsCalls) {
  const int n = 3;
  const double multicast = 6 * call_s(Function::bcast, DataType::integer, n, 3) +
                           3 * call_s(Function::bcast, DataType::integer, n, 1);
  const double reduction = 3 * call_s(Function::reduce, DataType::floating, n, 2);
  const double barrier = 6 * call_s(Function::barrier_spmd, DataType::integer, n, 1);
  const double p2p = 4 * (call_s(Function::write, DataType::integer, n, 12) + call_s(Function::read, DataType::integer, n, 12)) +
                     2 * (call_s(Function::write, DataType::integer, n, 13) + call_s(Function::read, DataType::integer, n, 13));
  const auto p = cop_projection(md_point(), kParts);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->speedup.at("multicast"), 0.02 / multicast);
  EXPECT_DOUBLE_EQ(p->speedup.at("reduction"), 0.004 / reduction);
  EXPECT_DOUBLE_EQ(p->speedup.at("barrier"), 0.003 / barrier);
  EXPECT_DOUBLE_EQ(p->speedup.at("point_to_point"), 0.01 / p2p);
  const double total = 0.5 + 0.2 / (0.02 / multicast) + 0.1 / (0.004 / reduction) + 0.05 / (0.003 / barrier) +
                       0.15 / (0.01 / p2p);
  EXPECT_NEAR(p->frac_total, total, 1e-12);
  EXPECT_NEAR(p->speedup_total, 1 / total, 1e-9);

  // Table V's row carries them: the four speedups, the normalized total, the projection.
  CampaignResults r;
  r.medians.push_back(md_point());
  r.index_modes();
  const auto t = md_table_v(r);
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->rows.size(), 2u);  // the published row, then ours
  const Row& row = t->rows[1];
  const auto col = [&](const std::string& name) {
    return size_t(std::find(t->header.begin(), t->header.end(), name) - t->header.begin());
  };
  ASSERT_LT(col("projected COP speedup"), row.size());
  EXPECT_EQ(row[col("COP speedup multicast")], format_ratio(0.02 / multicast));
  EXPECT_EQ(row[col("COP speedup point-to-point")], format_ratio(0.01 / p2p));
  EXPECT_EQ(row[col("COP normalized total")], format_number(total));
  EXPECT_EQ(row[col("projected COP speedup")], format_ratio(1 / total));
}

TEST(CopProjection, RanksAreTheNodesTimesTheirTasks) {
  PointMedian m = md_point();
  m.counters["ranks"] = 6;  // 3 nodes x 2 tasks: C̄ = 5
  const auto p = cop_projection(m, {"barrier"});
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->speedup.at("barrier"), 0.003 / (6 * call_s(Function::barrier_spmd, DataType::integer, 6, 1)));
}

TEST(CopProjection, APartWithoutCallsKeepsItsTimeAndMissingCountersGiveNone) {
  PointMedian m = md_point();
  m.counters.erase("calls_barrier_0");
  auto p = cop_projection(m, kParts);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->speedup.at("barrier"), 1.0);  // no modelled time: not sped up
  m.counters.erase("seconds_reduction");
  EXPECT_FALSE(cop_projection(m, kParts).has_value());
  EXPECT_FALSE(cop_call_seconds("scan", 3, 8).has_value());
}

// Results written before md recorded its calls carry the projection as counters.
TEST(CopProjection, OlderResultsShowTheirRecordedProjection) {
  PointMedian m = md_point();
  for (const auto& part : kParts) m.counters.erase("seconds_" + part);
  m.counters["cop_speedup_multicast"] = 24;
  m.counters["projected_cop_speedup"] = 1.55;
  CampaignResults r;
  r.medians.push_back(m);
  r.index_modes();
  const auto t = md_table_v(r);
  ASSERT_TRUE(t.has_value());
  const Row& row = t->rows[1];
  const auto col = [&](const std::string& name) {
    return size_t(std::find(t->header.begin(), t->header.end(), name) - t->header.begin());
  };
  EXPECT_EQ(row[col("COP speedup multicast")], "24.0x");
  EXPECT_EQ(row[col("projected COP speedup")], "1.55x");
  EXPECT_EQ(row[col("COP speedup barrier")], "—");
}

}  // namespace
}  // namespace copbench::report
