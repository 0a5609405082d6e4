// The Batch builders of timing.h (timed_collective, timed_loop, timed_collective_loop),
// written once over the clock they read. The harness gives them steady_clock
// (now_seconds, inlined: the timed region is what it always was); a unit test gives them
// a fake clock that its fake backend advances by fixed costs, so that every time they
// record is known exactly (tests/suite/fake_backend.h).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "copbench/clock.h"
#include "copbench/timing.h"

namespace copbench::timed {

inline constexpr const char* kSyncMethod =
    "sync method (thesis ch. VI): per iteration a sync, then one timed call on every rank; "
    "per-iteration maximum over ranks, mean over iterations";
inline constexpr const char* kCollectiveLoopMethod =
    "loop method (IMB, OSU): a sync, then the iterations back to back on every rank; "
    "per rank loop time / iterations, maximum over ranks";

inline constexpr const char* kWindowMethod =
    "window method (ReproMPI, MPIX_Harmonize): start instants T_k = T_0 + k W on a common clock agreed in "
    "advance; every rank waits for T_k, calls, reads its end; per call the maximum over ranks of end - T_k, "
    "calls a rank started late left out; mean over valid calls";

inline constexpr double kSpinMargin = 300e-6;  // a real clock's first spin before T_k
inline constexpr double kMaxSpin = 2e-3;       // and its longest

// The window method's plan (timed_window): the common clock, W, and the instants' lead.
struct WindowPlan {
  CommonClock clock;
  LocalClock local;
  double window = 0;          // W, seconds of the common clock
  double initial_window = 0;  // W from the pilot, before any widening
  double lead = 0;            // T_0 = the agreeing maximum of the ranks' clocks + lead
  double late_tolerance = 0;  // a start later than T_k + this is counted as disturbed
  double spin_margin = kSpinMargin;  // the wait spins this long before T_k
  int widenings = 0;
  bool exact = false;  // a simulated clock (or a test's): waits end at the instant
  long late_calls = 0, disturbed_calls = 0;  // over warm-up and repetitions
  long runs = 0;  // whole runs timed (window_runs)
};
// A call a rank reached after its instant: invalid (is_invalid_call), and W widens. A
// call whose wait woke more than the tolerance after it is kept and counted.
inline constexpr double kLateCall = 2 * kInvalidCall;
inline constexpr int kPilotCalls = 8;
inline constexpr int kMaxWidenings = 8;
inline constexpr int kPilotAttempts = 12;  // W doubles at most this often in the pilot
inline constexpr double kMaxWindow = 0.05;   // a real clock's W at most (50 ms: a call here takes less)
inline constexpr double kWindowFloor = 20e-6;    // a real clock's W floor and lead margin
inline constexpr double kLateTolerance = 5e-6;   // a real clock's start tolerance
// A simulated wait ends at the instant, but reading SMPI's clock costs simulated time
// (smpi/wtime, 10 ns by default): a start within 100 ns of T_k is on time.
inline constexpr double kSimulatedLateTolerance = 1e-7;

// Synchronises the clocks (synchronise_clocks) and runs the pilot: `pilot_calls` calls
// of `op` timed the sync way for a first W (2 x their median), then batches of
// `pilot_calls` window calls, W doubling until none is late (or kMaxWindow);
// W = 1.5 x their 80th percentile + twice the clock's bound + a floor, at most
// kMaxWindow on a real clock. Every rank calls it together.
WindowPlan plan_window(Backend& b, const std::function<void()>& op, const LocalClock& local, int pilot_calls);
// The window method's batch under `plan` (shared: W widens across repetitions).
Batch window(Backend& b, std::function<void()> op, std::shared_ptr<WindowPlan> plan, double timer_overhead);

// Whole runs (timed_runs, timing.h), one per repetition.
inline constexpr const char* kWindowRunsMethod =
    "window method for whole runs (ReproMPI, MPIX_Harmonize): after its setup every rank starts run k at one "
    "instant T_k of a common clock, agreed just before it (the latest of the ranks' clocks plus a lead W); the "
    "run's time is the maximum over ranks of end - T_k; a run a rank started late is left out";
inline constexpr const char* kSyncRunsMethod =
    "sync method for whole runs (thesis ch. VI): after its setup a sync, then every rank times the run from its own "
    "release; the maximum over ranks (it carries the sync's release skew)";
// The plan of whole runs: the common clock, no pilot (a run is long). W is the lead
// from the agreement of T_k to T_k: 4 x the agreement's time + twice the clock's bound
// + the floor, at least kRunLead on a real clock; after the first run (thrown out by the
// protocol) at least kRunLeadShare of its time (up to kMaxWindow); it widens as
// timed_window's does (agree_and_widen) after a run a rank reached late.
inline constexpr double kRunLead = 1e-3;
inline constexpr double kRunLeadShare = 0.5;
WindowPlan plan_runs(Backend& b, const LocalClock& local);
Batch window_runs(Backend& b, Run run, std::shared_ptr<WindowPlan> plan, double timer_overhead);

template <class Clock>
Batch sync_runs(Backend& backend, Run run, Clock clock) {
  return Batch(
      [&backend, run = std::move(run), clock](std::vector<double>& seconds) {
        double t0 = 0;
        run([&] {
          backend.sync();
          return t0 = clock();
        });
        std::fill(seconds.begin(), seconds.end(), clock() - t0);
      },
      kSyncRunsMethod);
}

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
