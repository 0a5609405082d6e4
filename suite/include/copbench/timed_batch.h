// The Batch builders of timing.h (timed_collective, timed_loop, timed_collective_loop),
// written once over the clock they read. The harness gives them steady_clock
// (now_seconds, inlined: the timed region is what it always was); a unit test gives them
// a fake clock that its fake backend advances by fixed costs, so that every time they
// record is known exactly (tests/suite/fake_backend.h).
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "copbench/timing.h"

namespace copbench::timed {

inline constexpr const char* kSyncMethod =
    "sync method (thesis ch. VI): per iteration a sync, then one timed call on every rank; "
    "per-iteration maximum over ranks, mean over iterations";
inline constexpr const char* kCollectiveLoopMethod =
    "loop method (IMB, OSU): a sync, then the iterations back to back on every rank; "
    "per rank loop time / iterations, maximum over ranks";

// What timed_loop says it did when its caller says nothing.
inline std::string generic_loop_method(double scale) {
  std::string m = "loop: a sync, then the iterations back to back; loop time / iterations on the timing rank";
  return scale == 1.0 ? m : m + ", scaled by " + std::to_string(scale);
}

// `clock()` returns seconds. The clock is read twice per timed region, as
// timer_overhead_seconds() measures it.
template <class Clock>
Batch collective(Backend& backend, std::function<void()> op, double timer_overhead, Clock clock) {
  return Batch(
      [&backend, op = std::move(op), timer_overhead, clock](std::vector<double>& seconds) {
        for (double& x : seconds) {
          backend.sync();
          double t0 = clock();
          op();
          double t1 = clock();
          x = t1 - t0 - timer_overhead;
        }
      },
      kSyncMethod);
}

template <class Clock>
Batch loop(Backend& backend, std::function<void()> op, bool counted, double scale, double timer_overhead,
           std::string method, Clock clock) {
  if (method.empty()) method = generic_loop_method(scale);
  return Batch(
      [&backend, op = std::move(op), counted, scale, timer_overhead, clock](std::vector<double>& seconds) {
        backend.sync();
        double t0 = clock();
        for (std::size_t i = 0; i < seconds.size(); ++i) op();
        double t1 = clock();
        double per = counted ? (t1 - t0 - timer_overhead) / static_cast<double>(seconds.size()) * scale : 0.0;
        std::fill(seconds.begin(), seconds.end(), per);
      },
      std::move(method));
}

template <class Clock>
Batch collective_loop(Backend& backend, std::function<void()> op, double timer_overhead, Clock clock) {
  return loop(backend, std::move(op), true, 1.0, timer_overhead, kCollectiveLoopMethod, clock);
}

}  // namespace copbench::timed
