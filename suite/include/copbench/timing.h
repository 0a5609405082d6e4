// The timing method (suite/README.md "Timing method", seed 003 section 5.0, thesis ch. VI).
//
// - One clock for everything: clock_gettime(CLOCK_MONOTONIC) via steady_clock, stated in
//   every result as timer_name() (MPI_Wtime, simulated time, in the smpi build; the
//   simulation's clock in sim-cop's, simulated_clock()).
// - Empty-loop subtraction: the cost of reading the clock twice is measured and taken off
//   every timed iteration (seed 003).
// - Warm-up iterations before any timed one.
// - Collectives: by default the window method (timed_window: every rank starts each call
//   at one instant of a common clock, copbench/clock.h); the thesis's sync method (the
//   backend's barrier before each timed iteration) and the loop method of IMB / OSU as
//   labelled variants.
// - Each repetition is a batch of iterations; every rank times each iteration and the
//   harness keeps, per iteration, the maximum over ranks; the repetition's value is the
//   mean of those maxima.
// - Repetitions follow the Libsplit-C protocol: the first is thrown out, the next three
//   give an approximate mean, any later one above 3x that mean is discarded as disturbed,
//   and repetitions go on until at least `min_reps` are kept, at least 30 iterations are
//   measured, and the 95 % confidence interval is within 10 % of the mean (or max_reps).
//   The interval and the summary statistics are Boost.Math's (copbench/stats.h).
#pragma once

#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "copbench/backend.h"
#include "copbench/stats.h"

#ifdef COPBENCH_SIMULATED_CLOCK
#include <mpi.h>
#endif

namespace copbench {

#ifdef COPBENCH_SIMULATED_CLOCK
// The smpi build (baselines/smpi): the worker runs inside SimGrid's simulation, where the
// wall clock measures the simulator, not the simulated cluster. Its clock is the
// backend's, MPI_Wtime: simulated seconds on the platform's hosts.
inline constexpr const char* kTimerName = "MPI_Wtime (SimGrid SMPI simulated time)";

inline double now_seconds() { return MPI_Wtime(); }
inline const char* timer_name() { return kTimerName; }
#else
inline constexpr const char* kTimerName = "std::chrono::steady_clock (clock_gettime CLOCK_MONOTONIC)";

// A simulator that runs every node as an actor of this one process (sim-cop,
// baselines/simcop) installs its simulated clock here before anything is timed: the
// wall clock would measure the simulator, not the simulated system. Nothing else does.
struct SimulatedClock {
  double (*now)() = nullptr;
  const char* name = nullptr;  // what the results say the timer is
};
inline SimulatedClock& simulated_clock() {
  static SimulatedClock clock;
  return clock;
}

inline double now_seconds() {
  if (const auto simulated = simulated_clock().now) return simulated();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline const char* timer_name() { return simulated_clock().now ? simulated_clock().name : kTimerName; }
#endif
// Process CPU time in seconds (CLOCK_PROCESS_CPUTIME_ID), reported as Google Benchmark's cpu_time.
double cpu_seconds();
// Seconds taken by an empty timed region (two clock reads), the median of many.
double timer_overhead_seconds();

// The ways a collective is timed; each point names which (its name and its label).
inline constexpr const char* kMethodWindow = "window";  // one start instant on a common clock (default)
inline constexpr const char* kMethodSync = "sync";  // the thesis's: sync before each call
inline constexpr const char* kMethodLoop = "loop";  // IMB / OSU: n calls back to back

// The methods a point runs (`copbench run --methods`, a campaign's `methods:`), the one
// parser both use: "window,sync" -> {window, sync}, always in the order window, sync,
// loop (the order a collective's points come in). Throws std::invalid_argument "unknown
// method 'X' (known: window, sync, loop)", "method 'X' named twice", "no method named
// (known: ...)".
std::vector<std::string> parse_methods(const std::string& list);
std::string methods_text(const std::vector<std::string>& methods);  // "window,sync"

struct TimingConfig {
  // The methods of a collective point, each a point of its own (default: all three); an
  // application's runs take the window method, or the sync one where only it is named.
  std::vector<std::string> methods{kMethodWindow, kMethodSync, kMethodLoop};
  int warmup = 10;       // untimed iterations before the first repetition
  int iterations = 30;   // timed iterations per repetition
  int min_reps = 10;     // repetitions to keep at least
  int max_reps = 40;     // give up on the confidence target after this many
  double ci_target = 0.10;
  int min_total_iterations = 30;
};

// The Libsplit-C repetition protocol over repetition values, independent of any backend.
class OutlierProtocol {
 public:
  explicit OutlierProtocol(const TimingConfig& config) : config_(config) {}
  // Records one repetition's value (seconds per iteration); false when it was discarded.
  bool add(double value);
  // Records a repetition that has no value (the window method's, every call invalid): discarded.
  void add_invalid() {
    discarded_.push_back(std::nan(""));
    ++invalid_;
  }
  // True while another repetition is needed. A repetition with no value does not count
  // toward max_reps (one late start must not use up an application's few runs), but
  // the repetitions stop at twice the limit whatever they were.
  bool wants_more() const;

  const std::vector<double>& kept() const { return kept_; }
  const std::vector<double>& discarded() const { return discarded_; }
  int repetitions() const { return static_cast<int>(kept_.size() + discarded_.size()); }
  bool ci_met() const;
  double ci95_half_width() const;  // of the kept values' mean, 0 with fewer than 2
  double mean() const;

 private:
  TimingConfig config_;
  std::vector<double> kept_;
  std::vector<double> discarded_;
  double approx_mean_ = 0.0;  // from the first three kept values
  int invalid_ = 0;           // repetitions recorded by add_invalid
};

struct Summary {
  std::vector<double> reps;     // kept repetition values, seconds per iteration
  std::vector<double> cpu_reps; // matching process CPU seconds per iteration (rank max)
  std::vector<double> modelled_reps;  // modelled-hardware seconds per iteration, when the backend has a clock
  int discarded = 0;            // the first repetition plus outliers
  int iterations = 0;           // per repetition
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0;
  double ci95_half = 0;
  bool ci_met = false;
  double timer_overhead = 0;    // subtracted from every iteration
  std::string method;           // what one iteration timed, in words (Batch::method)
  int max_reps = 0;             // the repetition limit it ran under
  double ci_target = 0.10;      // the confidence target it aimed for
  // The window method (window_collective): calls timed, calls left out because a rank
  // reached its start instant late (kInvalidCall), the final window W, and the common
  // clock (copbench/clock.h) with its error bound. Zero / empty for the other methods.
  long timed_calls = 0;
  long invalid_calls = 0;
  double window = 0;
  double late_tolerance = 0;
  int widenings = 0;
  double clock_bound = 0;
  double clock_injected_error = -1;  // CommonClock::injected_error
  std::string clock;                 // CommonClock::describe()
  std::string clock_basis;           // simulated, one-kernel, estimated
  double clock_offset = 0, clock_offset_bound = 0;  // measured by round trips (max over ranks)
};
// Plain-word warnings about a summary: more repetitions discarded than kept; the
// confidence target missed. Empty when neither.
std::vector<std::string> summary_warnings(const Summary& s);
Summary summarize(const OutlierProtocol& protocol, std::vector<double> cpu_reps, int iterations,
                  double timer_overhead, std::vector<double> modelled_reps = {});

// One repetition: fills `seconds` (one entry per iteration) with this rank's times.
// `method` says in words what was timed and how (it becomes the point's timing_method in
// the JSON): a collective with a sync before each call, a loop timed on one rank, ...
class Batch {
 public:
  using Fn = std::function<void(std::vector<double>& seconds)>;
  Batch() = default;
  template <class F>
    requires(!std::same_as<std::remove_cvref_t<F>, Batch> && std::invocable<F&, std::vector<double>&>)
  Batch(F f, std::string method = "custom batch (see the benchmark's source)")  // NOLINT: implicit from a lambda
      : fn_(std::move(f)), method_(std::move(method)) {}
  void operator()(std::vector<double>& seconds) const { fn_(seconds); }
  const std::string& method() const { return method_; }
  // What a batch adds to the point's summary once measured (the window method: W, the
  // clock); measure() calls it.
  std::function<void(Summary&)> annotate;

 private:
  Fn fn_;
  std::string method_;
};

// An iteration a batch leaves out (the window method's call that a rank started late):
// its value; the maximum over ranks keeps it, and a repetition's mean is over the others.
inline constexpr double kInvalidCall = 1e30;
inline bool is_invalid_call(double seconds) { return seconds >= 0.5 * kInvalidCall; }

// Runs warm-up (warmup_batch with config.warmup iterations) and then repetitions of
// `batch` under the protocol, taking the per-iteration maximum over ranks. All ranks
// must call it together and all return the same Summary.
Summary measure(Backend& backend, const TimingConfig& config, const Batch& batch);

// Two measurements interleaved repetition by repetition (A B, B A, A B, ...), so a drift
// in machine speed falls on both alike; used to compare a harness path with a bare one.
std::pair<Summary, Summary> measure_interleaved(Backend& backend, const TimingConfig& config,
                                                const Batch& a, const Batch& b);

// Helpers that build a Batch, timed with steady_clock (the same builders over any clock:
// copbench/timed_batch.h).
// Collective, the thesis's method (ch. VI): sync, then time one call of `op`, per
// iteration; the repetition is the mean over iterations of the maximum over ranks.
Batch timed_collective(Backend& backend, std::function<void()> op, double timer_overhead);
// Loop: sync, then time `op` n times back to back; every rank runs it, but only where
// `counted` is true does the time count (elsewhere 0), and every iteration gets the loop's
// mean scaled by `scale` (0.5 for echo's round trip / 2). `method` describes it; empty
// gives a generic description.
Batch timed_loop(Backend& backend, std::function<void()> op, bool counted, double scale,
                 double timer_overhead, std::string method = "");
// Collective, the loop method of IMB and OSU: sync, then n calls back to back timed on
// every rank; the repetition is the maximum over ranks of (loop time / n).
Batch timed_collective_loop(Backend& backend, std::function<void()> op, double timer_overhead);

// Collective, the window method (ReproMPI, MPIX_Harmonize; issue 35), the default: the
// ranks agree on a common clock (copbench/clock.h) and on start instants T_k = T_0 + k W,
// W from a short pilot; every rank waits for T_k, calls, reads its end; an iteration's
// time is end - T_k (the maximum over ranks is taken by measure()); a rank that reaches
// T_k late makes the call invalid (left out, counted), and W doubles (quadruples) after a
// repetition with more than a tenth (half) of its calls late; a call whose wait woke
// after its instant by more than the tolerance is kept and counted (its time includes
// the delay; the wait then spins longer). A real clock's W stays under 50 ms. Builds the plan (clock sync, pilot) now:
// every rank calls it together.
Batch timed_window(Backend& backend, std::function<void()> op, double timer_overhead);

// Whole runs (the applications, apps/common.h; one run per repetition): `run(start)` does
// its untimed setup, calls start() where its timed part begins (every rank together:
// there the ranks are started), and returns its own seconds from that start (the
// harness's clock, now_seconds(), which start() returns). The run's time is the harness's:
// - the window method (default): at start() the ranks agree on an instant T_k of the
//   common clock (copbench/clock.h, as each repetition of timed_window agrees its T_0: the
//   latest of their clocks plus a lead) and each waits for it; the run's time is the
//   maximum over ranks of end - T_k; a rank that reaches T_k late makes the run invalid
//   (left out, counted) and the lead widens (timed_window's W, agree_and_widen);
// - the sync method (`methods` naming sync and not window): start() is the backend's
//   sync; the maximum over ranks of each rank's end - its own start, which carries the
//   sync's release skew.
// Builds the plan (clock sync) now: every rank calls it together.
using RunStart = std::function<double()>;
using Run = std::function<double(const RunStart& start)>;
Batch timed_runs(Backend& backend, Run run, const std::vector<std::string>& methods);


}  // namespace copbench
