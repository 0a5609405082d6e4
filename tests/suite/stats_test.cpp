// copbench/stats.h (Boost.Math underneath) against published values and exact inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "copbench/stats.h"

namespace copbench {
namespace {

TEST(Stats, StudentTQuantilesAreTheTablesValues) {
  // Two-sided 95 %: t(0.975, dof), as every Student t table gives them (to 6 places).
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706205, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 6), 2.446912, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 120), 1.979930, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.95, 10), 1.812461, 1e-6);
}

TEST(Stats, ConfidenceIntervalHalfWidth) {
  // 1, 2, 3, 4: s = sqrt(5 / 3); t(0.975, 3) = 3.182446; half width t s / sqrt 4.
  EXPECT_NEAR(ci95_half_width_of({1, 2, 3, 4}), 3.182446 * std::sqrt(5.0 / 3.0) / 2.0, 1e-6);
  EXPECT_EQ(ci95_half_width_of({7, 7, 7}), 0.0);
  EXPECT_EQ(ci95_half_width_of({7}), 0.0);
  EXPECT_EQ(ci95_half_width_of({}), 0.0);
}

TEST(Stats, MeanMedianStddev) {
  EXPECT_DOUBLE_EQ(mean_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(stddev_of({4, 1, 3, 2}), std::sqrt(5.0 / 3.0));
  EXPECT_EQ(mean_of({}), 0.0);
  EXPECT_EQ(median_of({}), 0.0);
  EXPECT_EQ(stddev_of({3}), 0.0);
}

TEST(Stats, FitOfPointsOnALine) {
  Line l = fit_line({0, 1, 2, 4, 8}, {3, 5, 7, 11, 19});  // y = 3 + 2 x
  EXPECT_NEAR(l.intercept, 3.0, 1e-12);
  EXPECT_NEAR(l.slope, 2.0, 1e-12);
  // ring's shape: t = f + x m, f = 5 us, x = 1 ns per byte.
  std::vector<double> m = {8, 64, 256, 1024, 4096, 16384}, t;
  for (double v : m) t.push_back(5e-6 + 1e-9 * v);
  Line ring = fit_line(m, t);
  EXPECT_NEAR(ring.intercept, 5e-6, 1e-15);
  EXPECT_NEAR(ring.slope, 1e-9, 1e-18);
}

TEST(Stats, FitOfScatteredPointsIsTheLeastSquaresLine) {
  // x 0, 1, 2, 3; y 1, 3, 2, 5: slope = Sxy / Sxx = 5.5 / 5 = 1.1, intercept 2.75 - 1.1 x 1.5 = 1.1.
  Line l = fit_line({0, 1, 2, 3}, {1, 3, 2, 5});
  EXPECT_NEAR(l.slope, 1.1, 1e-12);
  EXPECT_NEAR(l.intercept, 1.1, 1e-12);
}

TEST(Stats, FitWithoutASlope) {
  Line none = fit_line({}, {});
  EXPECT_EQ(none.intercept, 0.0);
  EXPECT_EQ(none.slope, 0.0);
  Line one = fit_line({8}, {3});
  EXPECT_EQ(one.intercept, 3.0);
  EXPECT_EQ(one.slope, 0.0);
  Line same_x = fit_line({2, 2, 2}, {1, 2, 6});
  EXPECT_DOUBLE_EQ(same_x.intercept, 3.0);
  EXPECT_EQ(same_x.slope, 0.0);
  Line shorter = fit_line({0, 1, 2, 99}, {1, 3, 5});  // the points both lists have
  EXPECT_NEAR(shorter.intercept, 1.0, 1e-12);
  EXPECT_NEAR(shorter.slope, 2.0, 1e-12);
}

}  // namespace
}  // namespace copbench
