// The statistics of the timing method (suite/README.md "Timing method": the summary of
// the kept repetitions and the 95 % confidence interval of seed 003's protocol) and the
// line fits of the benchmarks (ring: seed 002's t_comm = f + x*m). Computed by
// Boost.Math (libboost-dev, header-only), not by hand-written tables and sums.
#pragma once

#include <cstddef>
#include <vector>

namespace copbench {

double mean_of(const std::vector<double>& values);    // 0 when empty
double stddev_of(const std::vector<double>& values);  // sample (n - 1) standard deviation; 0 with fewer than 2
double median_of(std::vector<double> values);         // 0 when empty

// The Student t quantile: the t with P(T <= t) = p for `dof` (> 0) degrees of freedom.
// The two-sided 95 % interval uses p = 0.975.
double student_t_quantile(double p, std::size_t dof);
// Half the width of the two-sided 95 % confidence interval of the mean of `values`
// (t(0.975, n - 1) * s / sqrt(n)); 0 with fewer than 2 values.
double ci95_half_width_of(const std::vector<double>& values);

// Least-squares line y = intercept + slope * x over the first min(|x|, |y|) points.
// With fewer than 2 points, or all x alike, there is no slope: {mean of y, 0} ({0, 0}
// with no point).
struct Line {
  double intercept = 0;
  double slope = 0;
};
Line fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace copbench
