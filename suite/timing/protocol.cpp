// The Libsplit-C repetition protocol (seed 003, section 5.0) and the summary of a point;
// the statistics themselves are Boost.Math's (copbench/stats.h).
#include <algorithm>
#include <cmath>

#include "copbench/timing.h"

namespace copbench {
namespace {

constexpr int kApproxMeanReps = 3;  // "the next three times were used to get an approximation"
constexpr double kOutlierFactor = 3.0;

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

double OutlierProtocol::ci95_half_width() const { return ci95_half_width_of(kept_); }

bool OutlierProtocol::ci_met() const {
  // Every repetition, the discarded first one too, the same value: a deterministic clock
  // (a simulation's), where one kept value says all and there is no interval. The same up
  // to the rounding of the clock's readings: a simulated time read at a later instant
  // loses its last bits (1e-9 of the value is 1000 times that).
  const auto same = [&](double v) { return std::abs(v - kept_.front()) <= 1e-9 * std::abs(kept_.front()); };
  if (kept_.size() == 1 && !discarded_.empty() && std::all_of(discarded_.begin(), discarded_.end(), same))
    return true;
  if (kept_.size() < 2) return false;
  return ci95_half_width() <= config_.ci_target * std::abs(mean());
}

bool OutlierProtocol::wants_more() const {
  const int limit = std::max(config_.max_reps, config_.min_reps + 1);
  if (repetitions() - invalid_ >= limit || repetitions() >= 2 * limit) return false;
  if (static_cast<int>(kept_.size()) < config_.min_reps) return true;
  if (static_cast<long>(kept_.size()) * config_.iterations < config_.min_total_iterations) return true;
  return !ci_met();
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
