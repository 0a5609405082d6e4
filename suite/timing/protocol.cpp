// The Libsplit-C repetition protocol (seed 003, section 5.0) and the summary statistics.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "copbench/timing.h"

namespace copbench {
namespace {

constexpr int kApproxMeanReps = 3;  // "the next three times were used to get an approximation"
constexpr double kOutlierFactor = 3.0;

// Two-sided 95 % Student t quantiles for 1..30 degrees of freedom; 1.96 beyond.
double t95(std::size_t dof) {
  static constexpr double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                     2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                     2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                     2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (dof == 0) return 0.0;
  if (dof <= std::size(table)) return table[dof - 1];
  return 1.96;
}

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  double m = mean_of(v);
  double sq = 0.0;
  for (double x : v) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

}  // namespace

bool OutlierProtocol::add(double value) {
  if (repetitions() == 0) {  // "The first time was thrown out."
    discarded_.push_back(value);
    return false;
  }
  if (kept_.size() < kApproxMeanReps) {
    kept_.push_back(value);
    if (kept_.size() == kApproxMeanReps) approx_mean_ = mean_of(kept_);
    return true;
  }
  // "greater than three times the mean ... corrupted by a context switch and thrown out"
  if (value > kOutlierFactor * approx_mean_ && approx_mean_ > 0.0) {
    discarded_.push_back(value);
    return false;
  }
  kept_.push_back(value);
  return true;
}

double OutlierProtocol::mean() const { return mean_of(kept_); }

double OutlierProtocol::ci95_half_width() const {
  if (kept_.size() < 2) return 0.0;
  return t95(kept_.size() - 1) * stddev_of(kept_) / std::sqrt(static_cast<double>(kept_.size()));
}

bool OutlierProtocol::ci_met() const {
  if (kept_.size() < 2) return false;
  return ci95_half_width() <= config_.ci_target * std::abs(mean());
}

bool OutlierProtocol::wants_more() const {
  if (repetitions() >= std::max(config_.max_reps, config_.min_reps + 1)) return false;
  if (static_cast<int>(kept_.size()) < config_.min_reps) return true;
  if (static_cast<long>(kept_.size()) * config_.iterations < config_.min_total_iterations) return true;
  return !ci_met();
}

double median_of(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

Summary summarize(const OutlierProtocol& protocol, std::vector<double> cpu_reps, int iterations,
                  double timer_overhead, std::vector<double> modelled_reps) {
  Summary s;
  s.modelled_reps = std::move(modelled_reps);
  s.reps = protocol.kept();
  s.cpu_reps = std::move(cpu_reps);
  s.discarded = static_cast<int>(protocol.discarded().size());
  s.iterations = iterations;
  s.timer_overhead = timer_overhead;
  if (!s.reps.empty()) {
    s.median = median_of(s.reps);
    s.mean = mean_of(s.reps);
    s.stddev = stddev_of(s.reps);
    s.min = *std::min_element(s.reps.begin(), s.reps.end());
    s.max = *std::max_element(s.reps.begin(), s.reps.end());
  }
  s.ci95_half = protocol.ci95_half_width();
  s.ci_met = protocol.ci_met();
  return s;
}

}  // namespace copbench
