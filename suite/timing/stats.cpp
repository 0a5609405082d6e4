// Statistics by Boost.Math (see copbench/stats.h).
//
// The fit uses Boost's simple_ordinary_least_squares rather than GSL's gsl_fit_linear:
// Boost.Math is header-only and already here for the Student t distribution, while GSL
// would add a shared library (libgsl) to copbench and to every worker for one
// two-parameter fit that both compute by the same closed form.
#include "copbench/stats.h"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/statistics/linear_regression.hpp>
#include <boost/math/statistics/univariate_statistics.hpp>

namespace copbench {

double mean_of(const std::vector<double>& values) {
  return values.empty() ? 0.0 : boost::math::statistics::mean(values);
}

double stddev_of(const std::vector<double>& values) {
  return values.size() < 2 ? 0.0 : std::sqrt(boost::math::statistics::sample_variance(values));
}

double median_of(std::vector<double> values) {
  return values.empty() ? 0.0 : boost::math::statistics::median(values);
}

double student_t_quantile(double p, std::size_t dof) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(static_cast<double>(dof)), p);
}

double ci95_half_width_of(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double n = static_cast<double>(values.size());
  return student_t_quantile(0.975, values.size() - 1) * stddev_of(values) / std::sqrt(n);
}

Line fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n == 0) return {};
  std::vector<double> xs(x.begin(), x.begin() + static_cast<long>(n));
  std::vector<double> ys(y.begin(), y.begin() + static_cast<long>(n));
  // Boost refuses (std::domain_error) what has no slope; the answer there is the mean.
  const bool spread = std::any_of(xs.begin(), xs.end(), [&](double v) { return v != xs.front(); });
  if (n < 2 || !spread) return {mean_of(ys), 0.0};
  auto [intercept, slope] = boost::math::statistics::simple_ordinary_least_squares(xs, ys);
  return {intercept, slope};
}

}  // namespace copbench
