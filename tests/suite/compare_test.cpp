// copbench compare's verdicts on fixed result files (tests/suite/compare/): faster,
// slower, same within tolerance, missing on either side; units; campaign directories.
#include <gtest/gtest.h>

#include <stdexcept>

#include "copbench/compare.h"

namespace copbench::compare {
namespace {

const std::string kDir = COMPARE_FIXTURES;

TEST(Compare, VerdictsOnFixedFiles) {
  auto rows = compare(load_medians(kDir + "/old.json"), load_medians(kDir + "/new.json"), 0.10);
  ASSERT_EQ(rows.size(), 5u);
  std::map<std::string, Row> by;
  for (const Row& r : rows) by[r.point] = r;
  EXPECT_EQ(by.at("echo/size:8").verdict, Verdict::same);  // 1.05 vs 1.0: within 10 %
  EXPECT_DOUBLE_EQ(by.at("echo/size:8").ratio, 1.05);
  EXPECT_EQ(by.at("echo/size:1024").verdict, Verdict::slower);  // 2.5 vs 2.0
  EXPECT_DOUBLE_EQ(by.at("echo/size:1024").ratio, 1.25);
  EXPECT_EQ(by.at("echo/size:65536").verdict, Verdict::faster);  // 8 vs 10
  EXPECT_EQ(by.at("barrier/nodes:2").verdict, Verdict::missing_new);
  EXPECT_FALSE(by.at("barrier/nodes:2").new_us.has_value());
  EXPECT_EQ(by.at("barrier/method:loop/nodes:2").verdict, Verdict::missing_old);
  EXPECT_DOUBLE_EQ(*by.at("barrier/method:loop/nodes:2").new_us, 2.0);
  // A wider tolerance turns the 25 % slowdown into "same".
  auto wide = compare(load_medians(kDir + "/old.json"), load_medians(kDir + "/new.json"), 0.30);
  for (const Row& r : wide)
    if (r.point == "echo/size:1024") {
      EXPECT_EQ(r.verdict, Verdict::same);
    }
}

TEST(Compare, NanosecondFilesAreConvertedToMicroseconds) {
  auto us = load_medians(kDir + "/same.json");
  auto ns = load_medians(kDir + "/same_ns.json");
  ASSERT_EQ(us.size(), ns.size());
  for (const auto& [k, v] : us) EXPECT_NEAR(ns.at(k), v, 1e-9) << k;
}

TEST(Compare, CampaignDirectoryKeysByPointIdAndSkipsNonResults) {
  auto m = load_medians(kDir + "/campaign");
  EXPECT_EQ(m.size(), 8u);  // 4 points in each of two raw files; the verify record is skipped
  EXPECT_DOUBLE_EQ(m.at("echo.mpi.n2.native: echo/size:1024"), 2.0);
  EXPECT_DOUBLE_EQ(m.at("barrier.mpi.n2.native: barrier/nodes:2"), 3.2);
}

TEST(Compare, VerdictBoundariesAndTolerances) {
  EXPECT_EQ(verdict_of(10, 11, 0.10), Verdict::same);  // exactly at the tolerance
  EXPECT_EQ(verdict_of(10, 11.01, 0.10), Verdict::slower);
  EXPECT_EQ(verdict_of(10, 8.99, 0.10), Verdict::faster);
  EXPECT_DOUBLE_EQ(parse_tolerance("10%"), 0.10);
  EXPECT_DOUBLE_EQ(parse_tolerance("0.25"), 0.25);
  EXPECT_THROW(parse_tolerance("ten"), std::invalid_argument);
  EXPECT_THROW(parse_tolerance("-5%"), std::invalid_argument);
  EXPECT_THROW(parse_tolerance("%"), std::invalid_argument);
  EXPECT_THROW(load_medians(kDir + "/nope.json"), std::runtime_error);
  EXPECT_THROW(load_medians(kDir + "/campaign/raw/verify.mpi.n2.json"), std::runtime_error);
}

}  // namespace
}  // namespace copbench::compare
