// The window method of timing a collective (copbench/timing.h timed_window; issue 35):
// ReproMPI's window-based synchronisation (Hunold and Carpen-Amarie, EuroMPI 2015) and
// MPIX_Harmonize (Schuchart, Hunold, Bosilca, EuroMPI 2023). Every rank starts call k at
// the instant T_k = T_0 + k W of the common clock (copbench/clock.h) and the call's time
// is the last rank's end minus T_k, so no backend's barrier release skew is in it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "copbench/clock.h"
#include "copbench/stats.h"
#include "copbench/timed_batch.h"
#include "copbench/timing.h"

namespace copbench {
namespace timed {

namespace {

// Call k of a repetition: wait for T_k, call, the time to the end; kLateCall when this
// rank reached T_k after it had passed (ReproMPI's invalid call). A wait that woke more
// than the tolerance after T_k (the scheduler) keeps its call, counted in `disturbed`:
// its time includes that delay.
bool reach_instant(const WindowPlan& plan, double t_k, long& disturbed) {
  const LocalClock& local = plan.local;
  const double target = plan.clock.map.to_local(t_k);
  if (local() > target) return false;
  wait_until(local, target, plan.spin_margin);
  if (plan.clock.map.to_common(local()) - t_k > plan.late_tolerance) ++disturbed;
  return true;
}

// This rank's time from T_k to now, or kLateCall when it started late.
double since_instant(const WindowPlan& plan, double t_k, bool on_time, double timer_overhead) {
  const double end = plan.clock.map.to_common(plan.local());
  return on_time ? std::max(end - t_k - timer_overhead, 0.0) : kLateCall;
}

double one_call(const WindowPlan& plan, const std::function<void()>& op, double t_k, double timer_overhead,
                long& disturbed) {
  const bool on_time = reach_instant(plan, t_k, disturbed);
  op();
  return since_instant(plan, t_k, on_time, timer_overhead);
}

bool is_late_call(double x) { return x >= 0.75 * kLateCall; }

// The ranks agree on the repetition's late calls: more than a tenth late, W (and the
// lead) double (quadruple when most are), at most kMaxWidenings times and kMaxWindow on a
// real clock. More than a tenth of this rank's waits woken late: the wait spins longer
// before T_k (up to kMaxSpin).
void agree_and_widen(Backend& b, WindowPlan& plan, std::vector<double>& seconds, long disturbed) {
  b.max_over_ranks(seconds);
  const long late = std::count_if(seconds.begin(), seconds.end(), is_late_call);
  plan.late_calls += late;
  const auto n = static_cast<long>(seconds.size());
  if (late * 10 > n && plan.widenings < kMaxWidenings && (plan.exact || plan.window < kMaxWindow)) {
    const double factor = late * 2 > n ? 4.0 : 2.0;  // most calls late: W is far too short
    const double wider = plan.exact ? factor * plan.window : std::min(factor * plan.window, kMaxWindow);
    plan.lead *= wider / plan.window;
    plan.window = wider;
    ++plan.widenings;
  }
  if (disturbed * 10 > n && !plan.exact) plan.spin_margin = std::min(2 * plan.spin_margin, kMaxSpin);
}

// Every rank together: the instant lead after the latest of the ranks' common clocks.
double agreed_instant(Backend& b, const WindowPlan& plan) {
  std::vector<double> t0{plan.clock.map.to_common(plan.local())};
  b.max_over_ranks(t0);
  return t0[0] + plan.lead;
}

// After a batch: the ranks agree on its late calls (W widens) and on the most waits any
// rank saw woken late.
void finish_batch(Backend& b, WindowPlan& plan, std::vector<double>& seconds, long disturbed) {
  agree_and_widen(b, plan, seconds, disturbed);
  std::vector<double> count{static_cast<double>(disturbed)};
  b.max_over_ranks(count);
  plan.disturbed_calls += static_cast<long>(count[0]);
}

// After the first run on a real clock (thrown out by the protocol): W (the lead) at least
// kRunLeadShare of that run's longest time on any rank, up to kMaxWindow. The agreement
// of T_k is slowed by what slows a run (a loaded machine descheduling ranks), so a run's
// length says how long a lead the agreement may need.
void lead_from_first_run(Backend& b, WindowPlan& plan, double own_seconds) {
  std::vector<double> longest{own_seconds};
  b.max_over_ranks(longest);
  const double lead = std::min(kRunLeadShare * longest[0], kMaxWindow);
  if (lead > plan.lead) plan.window = plan.lead = plan.initial_window = lead;
}

// A batch of `calls` window calls under `plan` from an agreed T_0 (the measured batch's
// and the pilot's): this rank's times, kInvalidCall where it was late.
long window_calls(Backend& b, const WindowPlan& plan, const std::function<void()>& op, std::vector<double>& seconds,
                  double timer_overhead) {
  long disturbed = 0;
  const double start = agreed_instant(b, plan);
  for (std::size_t k = 0; k < seconds.size(); ++k)
    seconds[k] = one_call(plan, op, start + static_cast<double>(k) * plan.window, timer_overhead, disturbed);
  return disturbed;
}

// One agreement (a maximum over ranks) after a sync: this rank's time in it.
double agreement_seconds(Backend& b, const LocalClock& local) {
  b.sync();
  std::vector<double> probe{local()};
  const double a0 = local();
  b.max_over_ranks(probe);
  return local() - a0;
}

// What a plan adds to its point's summary: W, the clock, the late and disturbed calls
// (`what`: "call", "run").
void describe_plan(const WindowPlan& plan, const char* method, const char* what, Summary& s) {
  s.window = plan.window;
  s.late_tolerance = plan.late_tolerance;
  s.widenings = plan.widenings;
  s.clock_bound = plan.clock.bound;
  s.clock_injected_error = plan.clock.injected_error;
  s.clock = plan.clock.describe();
  s.clock_basis = plan.clock.basis_name();
  s.clock_offset = plan.clock.measured_offset;
  s.clock_offset_bound = plan.clock.measured_bound;
  s.method = fmt::format(
      "{}; W = {:.4g} us ({} widening(s) from {:.4g} us); over warm-up and repetitions {} {}(s) a rank reached "
      "late (left out) and {} whose wait woke more than {:.3g} us after its instant on some rank (kept: the "
      "delay is in their time; spin {:.3g} us before it); clock: {}",
      method, 1e6 * s.window, s.widenings, 1e6 * plan.initial_window, plan.late_calls, what, plan.disturbed_calls,
      1e6 * s.late_tolerance, 1e6 * plan.spin_margin, s.clock);
}

// The first guess of the pilot: calls timed the sync way (a sync, one call), and one
// agreement (a maximum over ranks, as each repetition agrees on T_0); the median call
// and the agreement, each the maximum over ranks.
std::pair<double, double> sync_pilot(Backend& b, const std::function<void()>& op, const LocalClock& local, int calls) {
  std::vector<double> pilot(static_cast<std::size_t>(calls) + 1);
  for (int k = 0; k < calls; ++k) {
    b.sync();
    const double t0 = local();
    op();
    pilot[static_cast<std::size_t>(k)] = local() - t0;
  }
  pilot.back() = agreement_seconds(b, local);
  b.max_over_ranks(pilot);
  const double agree = pilot.back();
  pilot.pop_back();
  return {median_of(pilot), agree};
}

// A high quantile of the valid calls (the 80th percentile: one descheduled call in the
// pilot does not set W; the repetitions widen it if it was short).
double high_quantile(const std::vector<double>& seconds) {
  std::vector<double> valid;
  for (double x : seconds)
    if (!is_invalid_call(x)) valid.push_back(x);
  if (valid.empty()) return 0.0;
  std::sort(valid.begin(), valid.end());
  return valid[static_cast<std::size_t>(0.8 * static_cast<double>(valid.size() - 1) + 0.5)];
}

}  // namespace

WindowPlan plan_window(Backend& b, const std::function<void()>& op, const LocalClock& local, int pilot_calls) {
  WindowPlan plan;
  plan.local = local;
  plan.clock = synchronise_clocks(b, local);
  const bool exact = plan.clock.basis == CommonClock::Basis::simulated || local.waiter != nullptr;
  plan.exact = exact;
  // A simulation is deterministic: one call says what five would (and at 4096 simulated
  // ranks each call costs seconds of the simulator's CPU).
  if (plan.clock.basis == CommonClock::Basis::simulated) pilot_calls = 1;
  const auto [typical, agree] = sync_pilot(b, op, local, pilot_calls);
  // W: a high quantile of the call's time, half again for the spread, twice the clock's
  // error, and a floor (a real clock's sleep-and-spin start). The sync way's first guess
  // may be short (its release skew hides part of the call): window calls then try it,
  // W doubling until none is late, and their 80th percentile sets W.
  const double floor = exact ? 1e-7 : kWindowFloor;
  const double margin = 2.0 * plan.clock.bound + floor;
  const double most = exact ? std::numeric_limits<double>::infinity() : kMaxWindow;
  plan.window = std::min(2.0 * typical + margin, most);
  plan.late_tolerance = exact ? kSimulatedLateTolerance : kLateTolerance;
  // At least two calls: a W too short shows as the second call's late start.
  std::vector<double> seconds(static_cast<std::size_t>(std::max(pilot_calls, 2)));
  for (int attempt = 0; attempt < kPilotAttempts; ++attempt) {
    // T_0 lies this far past the agreeing maximum: every rank has its answer by then.
    plan.lead = 2.0 * plan.window + 4.0 * agree + (exact ? 0.0 : kWindowFloor);
    window_calls(b, plan, op, seconds, 0.0);
    b.max_over_ranks(seconds);
    // Only a late arrival says W is short (a disturbed start is the scheduler's).
    const auto late = std::count_if(seconds.begin(), seconds.end(), is_late_call);
    if (late == 0 || plan.window >= most) {
      plan.window = std::min(1.5 * high_quantile(seconds) + margin, most);
      break;
    }
    plan.window = std::min(2 * plan.window, most);
  }
  plan.lead = 2.0 * plan.window + 4.0 * agree + (exact ? 0.0 : kWindowFloor);
  plan.initial_window = plan.window;
  return plan;
}

Batch window(Backend& b, std::function<void()> op, std::shared_ptr<WindowPlan> plan, double timer_overhead) {
  Batch batch(
      [&b, op = std::move(op), plan, timer_overhead](std::vector<double>& seconds) {
        finish_batch(b, *plan, seconds, window_calls(b, *plan, op, seconds, timer_overhead));
      },
      kWindowMethod);
  batch.annotate = [plan](Summary& s) { describe_plan(*plan, kWindowMethod, "call", s); };
  return batch;
}

WindowPlan plan_runs(Backend& b, const LocalClock& local) {
  WindowPlan plan;
  plan.local = local;
  plan.clock = synchronise_clocks(b, local);
  plan.exact = plan.clock.basis == CommonClock::Basis::simulated || local.waiter != nullptr;
  std::vector<double> agree{agreement_seconds(b, local)};
  b.max_over_ranks(agree);
  // A real clock's lead is at least kRunLead: a run has few repetitions (a tenth of them
  // late leaves too few), and a millisecond is little beside a whole run.
  const double floor = plan.exact ? 1e-7 : kWindowFloor;
  plan.window = plan.lead = std::max(4.0 * agree[0] + 2.0 * plan.clock.bound + floor, plan.exact ? 0.0 : kRunLead);
  plan.initial_window = plan.window;
  plan.late_tolerance = plan.exact ? kSimulatedLateTolerance : kLateTolerance;
  return plan;
}

Batch window_runs(Backend& b, Run run, std::shared_ptr<WindowPlan> plan, double timer_overhead) {
  Batch batch(
      [&b, run = std::move(run), plan, timer_overhead](std::vector<double>& seconds) {
        long disturbed = 0;
        double t_k = 0;
        bool on_time = false, started = false;
        double began = 0;
        run([&] {
          t_k = agreed_instant(b, *plan);
          on_time = reach_instant(*plan, t_k, disturbed);
          started = true;
          return began = now_seconds();
        });
        if (!started) throw std::logic_error("a timed run returned without calling its start");
        std::fill(seconds.begin(), seconds.end(), since_instant(*plan, t_k, on_time, timer_overhead));
        if (plan->runs++ == 0 && !plan->exact) lead_from_first_run(b, *plan, now_seconds() - began);
        finish_batch(b, *plan, seconds, disturbed);
      },
      kWindowRunsMethod);
  batch.annotate = [plan](Summary& s) { describe_plan(*plan, kWindowRunsMethod, "run", s); };
  return batch;
}

}  // namespace timed

Batch timed_window(Backend& backend, std::function<void()> op, double timer_overhead) {
  auto plan = std::make_shared<timed::WindowPlan>(
      timed::plan_window(backend, op, local_clock_for(backend.rank(), backend.ranks()), timed::kPilotCalls));
  return timed::window(backend, std::move(op), std::move(plan), timer_overhead);
}

Batch timed_runs(Backend& backend, Run run, const std::vector<std::string>& methods) {
  const auto named = [&](const char* m) { return std::find(methods.begin(), methods.end(), m) != methods.end(); };
  if (named(kMethodSync) && !named(kMethodWindow))
    return timed::sync_runs(backend, std::move(run), [] { return now_seconds(); });
  auto plan = std::make_shared<timed::WindowPlan>(
      timed::plan_runs(backend, local_clock_for(backend.rank(), backend.ranks())));
  return timed::window_runs(backend, std::move(run), std::move(plan), timer_overhead_seconds());
}

}  // namespace copbench
