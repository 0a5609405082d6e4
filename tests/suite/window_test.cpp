// The window method and the clock synchronisation (copbench/clock.h, timed_batch.h;
// issue 35) on a fake cluster (fake_cluster.h) whose every time is known: its sync
// releases the ranks with a known skew, its clocks carry injected offsets and drift.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "copbench/clock.h"
#include "copbench/timed_batch.h"
#include "copbench/timing.h"
#include "fake_cluster.h"

namespace copbench {
namespace {

using testing::FakeCluster;
using testing::FakeClusterSetup;
using testing::FakeRank;

constexpr double kUs = 1e-6;

TimingConfig small_config() {
  TimingConfig c;
  c.warmup = 2;
  c.iterations = 10;
  c.min_reps = 4;
  c.max_reps = 6;
  return c;
}

// Runs `body` on every rank of `cluster`, one thread each; rank 0's result.
template <class R>
R on_every_rank(FakeCluster& cluster, const std::function<R(FakeRank&)>& body) {
  std::vector<R> results(static_cast<std::size_t>(cluster.setup().ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < cluster.setup().ranks; ++r)
    threads.emplace_back([&, r] {
      FakeRank rank(cluster, r);
      results[static_cast<std::size_t>(r)] = body(rank);
    });
  for (auto& t : threads) t.join();
  return results.front();
}

// Four ranks; the sync releases them 0, 30, 50 and 10 us after one another; the call
// takes 10 us from the last arrival; the clocks are offset by up to 10 ms and drift by
// up to 100 ppm, and a message takes 4 to 9 us, more one way than the other.
FakeClusterSetup skewed_setup() {
  FakeClusterSetup s;
  s.ranks = 4;
  s.op_time = 10 * kUs;
  s.sync_cost = 5 * kUs;
  s.agree_cost = 3 * kUs;
  s.skew = {0, 30 * kUs, 50 * kUs, 10 * kUs};
  s.offset = {0.004, -0.010, 0.0072, 0.0099};
  s.rate = {1 + 20e-6, 1 - 100e-6, 1 + 100e-6, 1 + 55e-6};
  s.latency = [](int from, int to, int n) { return (from < to ? 4 : 6) * kUs + (n % 4) * kUs * (n % 3 == 0); };
  return s;
}

// The same ranks with one latency both ways (5 us): round trips estimate offsets exactly.
FakeClusterSetup symmetric_setup() {
  FakeClusterSetup s = skewed_setup();
  s.latency = [](int, int, int) { return 5 * kUs; };
  return s;
}

Summary window_summary(FakeCluster& cluster) {
  return on_every_rank<Summary>(cluster, [](FakeRank& r) {
    auto plan = std::make_shared<timed::WindowPlan>(timed::plan_window(r, [&r] { r.barrier(); }, r.clock(), 5));
    return measure(r, small_config(), timed::window(r, [&r] { r.barrier(); }, plan, 0.0));
  });
}

TEST(Window, GivesTheCallsTrueTimeWhereTheSyncMethodCarriesItsSkew) {
  // Messages as fast both ways: the clocks' estimates are exact, and so is the window.
  const FakeClusterSetup symmetric = symmetric_setup();
  FakeCluster exact_cluster(symmetric);
  const Summary exact = window_summary(exact_cluster);
  EXPECT_NEAR(exact.median, 10 * kUs, 1e-9);
  EXPECT_EQ(exact.invalid_calls, 0);
  EXPECT_GT(exact.timed_calls, 0);
  EXPECT_GT(exact.window, 10 * kUs);
  EXPECT_EQ(exact.clock_basis, "estimated");

  // Slower one way than the other: each rank's instant is off by at most the clock's
  // bound, and so is the time.
  FakeCluster window_cluster(skewed_setup());
  const Summary window = window_summary(window_cluster);
  EXPECT_GT(window.clock_bound, 0.0);
  EXPECT_LT(window.clock_bound, 10 * kUs);
  EXPECT_NEAR(window.median, 10 * kUs, 2 * window.clock_bound);
  EXPECT_EQ(window.invalid_calls, 0);

  FakeCluster sync_cluster(skewed_setup());
  const Summary sync = on_every_rank<Summary>(sync_cluster, [](FakeRank& r) {
    return measure(r, small_config(), timed::collective(r, [&r] { r.barrier(); }, 0.0, r.clock()));
  });
  // Rank 0, released first, waits 50 us for rank 2 inside its timed call.
  EXPECT_NEAR(sync.median, 60 * kUs, 1e-8);
  EXPECT_GT(sync.median - 10 * kUs, 2 * window.clock_bound);
}

TEST(Window, ALateCallMakesTheNextInvalidCountedAndWidensTheWindow) {
  FakeClusterSetup s = skewed_setup();
  // Rank 3 arrives 1 ms late at every 7th measured call (the pilot's 5 included).
  s.delay_before_call = [](int rank, int n) { return rank == 3 && n % 7 == 6 ? 1e-3 : 0.0; };
  s.latency = [](int, int, int) { return 5 * kUs; };
  FakeCluster cluster(s);
  const Summary w = window_summary(cluster);
  // The delayed call ends 1 ms late, after the next instants: the calls whose instant
  // passed meanwhile are invalid, counted, and W widens when they are over a tenth.
  EXPECT_GT(w.invalid_calls, 0);
  EXPECT_LT(w.invalid_calls, w.timed_calls);
  EXPECT_GT(w.widenings, 0);
  EXPECT_GT(w.window, 2 * w.late_tolerance);
}

// A whole run of an application (apps/common.h repeat_runs): a setup that takes rank r
// r x 7 us (untimed), then start(), then the run's one collective (10 us from the last
// arrival). Timed from one instant T_k, every rank starts together: the run takes 10 us.
// Timed from the sync, rank 0 (released 50 us before rank 2) waits for rank 2 inside its
// run: 60 us, the sync's skew and not the run.
Run fake_app_run(FakeRank& r) {
  return [&r](const RunStart& start) {
    r.advance(7 * kUs * r.rank());
    const double t0 = start();
    r.barrier();
    return r.clock()() - t0;
  };
}

TimingConfig runs_config() {
  TimingConfig c = small_config();
  c.iterations = 1;  // a repetition is one run, as repeat_runs sets it
  c.min_total_iterations = 0;
  c.warmup = 0;
  return c;
}

TEST(WindowRuns, AnAppRunTimedFromOneInstantGivesItsTrueTimeWhereTheSyncStartDoesNot) {
  const FakeClusterSetup symmetric = symmetric_setup();
  FakeCluster window_cluster(symmetric);
  const Summary window = on_every_rank<Summary>(window_cluster, [](FakeRank& r) {
    auto plan = std::make_shared<timed::WindowPlan>(timed::plan_runs(r, r.clock()));
    return measure(r, runs_config(), timed::window_runs(r, fake_app_run(r), plan, 0.0));
  });
  EXPECT_NEAR(window.median, 10 * kUs, 1e-9);
  EXPECT_EQ(window.invalid_calls, 0);
  EXPECT_EQ(window.timed_calls, static_cast<long>(window.reps.size()) + window.discarded);
  EXPECT_GT(window.window, 0.0);
  EXPECT_EQ(window.clock_basis, "estimated");
  EXPECT_NE(window.method.find(timed::kWindowRunsMethod), std::string::npos);

  FakeCluster sync_cluster(symmetric);
  const Summary sync = on_every_rank<Summary>(sync_cluster, [](FakeRank& r) {
    return measure(r, runs_config(), timed::sync_runs(r, fake_app_run(r), r.clock()));
  });
  EXPECT_NEAR(sync.median, 60 * kUs, 1e-8);
  EXPECT_EQ(sync.method, timed::kSyncRunsMethod);
}

TEST(WindowRuns, ARunARankStartsLateIsLeftOutCountedAndTheLeadWidens) {
  FakeCluster cluster(symmetric_setup());
  const Summary w = on_every_rank<Summary>(cluster, [](FakeRank& r) {
    auto plan = std::make_shared<timed::WindowPlan>(timed::plan_runs(r, r.clock()));
    // A lead shorter than the agreement (3 us): every rank reads T_k after it passed.
    plan->window = plan->lead = plan->initial_window = 1 * kUs;
    return measure(r, runs_config(), timed::window_runs(r, fake_app_run(r), plan, 0.0));
  });
  EXPECT_GT(w.invalid_calls, 0);
  EXPECT_GT(w.widenings, 0);
  EXPECT_GT(w.window, 3 * kUs);
  EXPECT_NEAR(w.median, 10 * kUs, 1e-9);  // the runs on time, the late ones left out
}

TEST(ClockSync, RecoversInjectedOffsetsAndDriftWithinItsBound) {
  FakeClusterSetup s = skewed_setup();
  FakeCluster cluster(s);
  std::vector<double> errors(4), bounds(4);
  on_every_rank<int>(cluster, [&](FakeRank& r) {
    const LocalClock local = r.clock();
    const CommonClock cc = synchronise_clocks(r, local);
    EXPECT_EQ(cc.basis, CommonClock::Basis::estimated);
    // The truth: rank r reads t rate_r + offset_r at true time t; rank 0 t rate_0 + offset_0.
    const auto i = static_cast<std::size_t>(r.rank());
    const double reading = local();
    const double t = (reading - s.offset[i]) / s.rate[i];
    errors[i] = std::abs(cc.map.to_common(reading) - (t * s.rate[0] + s.offset[0]));
    bounds[i] = cc.bound;
    return 0;
  });
  for (int r = 1; r < 4; ++r) {
    EXPECT_LE(errors[static_cast<std::size_t>(r)], bounds[static_cast<std::size_t>(r)]) << "rank " << r;
    EXPECT_GT(bounds[static_cast<std::size_t>(r)], 0.0);
    EXPECT_LT(bounds[static_cast<std::size_t>(r)], 10 * kUs);  // the smallest round trip / 2 plus residuals
  }
}

TEST(ClockSync, FitRecoversALineExactlyAndBoundsByHalfTheRoundTrip) {
  // Samples of a clock 2 ms ahead drifting 50 ppm, each seen through a 4 us round trip
  // with the answer read 1 us after the midpoint.
  std::vector<ClockSample> samples;
  for (int k = 0; k < 6; ++k) {
    const double t0 = 100.0 + 0.01 * k;
    const double mid = t0 + 2 * kUs;
    samples.push_back({t0, mid + 1 * kUs + 0.002 + 50e-6 * (mid - 100.0), t0 + 4 * kUs});
  }
  // A batch whose every round trip was slow (10 ms, a rank descheduled) is left out.
  samples.push_back({100.03, 100.03 + 0.004, 100.04});
  double bound = 0;
  const ClockMap m = fit_clock(samples, bound);
  EXPECT_NEAR(m.drift, 50e-6, 1e-8);
  EXPECT_NEAR(bound, 2 * kUs, 1e-9);
  const double local = samples.back().t;
  EXPECT_NEAR(m.to_local(m.to_common(local)), local, 1e-9);
}

TEST(ClockSync, RejectsAMalformedSkewSetting) {
  ::setenv("COPBENCH_CLOCK_SKEW", "10ms", 1);
  EXPECT_THROW(local_clock_for(1, 4), std::invalid_argument);
  ::setenv("COPBENCH_CLOCK_SKEW", "0.01,100", 1);
  const LocalClock c = local_clock_for(1, 4);
  EXPECT_LE(std::abs(c.offset), 0.01);
  EXPECT_LE(std::abs(c.rate - 1), 100e-6);
  EXPECT_NE(c.offset, 0.0);
  ::unsetenv("COPBENCH_CLOCK_SKEW");
  EXPECT_EQ(local_clock_for(1, 4).offset, 0.0);
}

}  // namespace
}  // namespace copbench
