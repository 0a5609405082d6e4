// measure(), measure_interleaved() and the batch builders on a fake backend with a fake
// clock (fake_backend.h): warm-up, repetitions, the per-iteration maximum over ranks,
// the stop rule and what a Summary records, every expected number computed here.
// Nothing here reads the machine's clock for a value it asserts.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "copbench/timed_batch.h"
#include "copbench/timing.h"
#include "fake_backend.h"

namespace copbench {
namespace {

using testing::FakeBackend;
using testing::ScriptedBatch;

constexpr double kUnit = 1.0 / 1024;  // a power of two: sums of it are exact

TimingConfig config(int warmup, int iterations, int min_reps, int max_reps) {
  TimingConfig c;
  c.warmup = warmup;
  c.iterations = iterations;
  c.min_reps = min_reps;
  c.max_reps = max_reps;
  return c;
}

TEST(Measure, WarmsUpOnceThenRunsRepetitionsOfTheConfiguredSize) {
  FakeBackend b(2, {});
  ScriptedBatch script{b, {kUnit}};
  // 4 kept x 5 iterations = 20 < 30: it keeps 6 (30 iterations); with the first thrown
  // out that is 7 repetitions. Equal values meet the interval at once.
  Summary s = measure(b, config(7, 5, 4, 10), script.batch());
  EXPECT_EQ(script.calls, (std::vector<std::size_t>{7, 5, 5, 5, 5, 5, 5, 5}));
  EXPECT_EQ(s.reps, std::vector<double>(6, kUnit));
  EXPECT_EQ(s.discarded, 1);
  EXPECT_EQ(s.iterations, 5);
  EXPECT_DOUBLE_EQ(s.median, kUnit);
  EXPECT_DOUBLE_EQ(s.mean, kUnit);
  EXPECT_DOUBLE_EQ(s.min, kUnit);
  EXPECT_DOUBLE_EQ(s.max, kUnit);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.ci95_half, 0.0);
  EXPECT_TRUE(s.ci_met);
  EXPECT_EQ(s.method, "scripted");
  EXPECT_EQ(s.max_reps, 10);
  EXPECT_EQ(s.ci_target, 0.10);
  EXPECT_EQ(s.timer_overhead, timer_overhead_seconds());
  EXPECT_EQ(s.cpu_reps.size(), s.reps.size());  // one CPU time per kept repetition
  EXPECT_TRUE(s.modelled_reps.empty());         // this backend has no modelled clock
  EXPECT_EQ(b.max_calls, 7);                    // one gathering per repetition, none for the warm-up
  EXPECT_EQ(b.syncs, 0);                        // measure() adds no sync of its own
}

TEST(Measure, NoWarmUpWhenItIsZero) {
  FakeBackend b(1, {});
  ScriptedBatch script{b, {kUnit}};
  script.warmup_pending = false;
  Summary s = measure(b, config(0, 16, 2, 5), script.batch());
  EXPECT_EQ(script.calls, (std::vector<std::size_t>{16, 16, 16}));  // 1 thrown out + 2 kept (32 iterations)
  EXPECT_EQ(s.reps.size(), 2u);
}

TEST(Measure, ARepetitionIsTheMeanOverIterationsOfTheMaximumOverRanks) {
  FakeBackend b(2, {});
  const std::vector<double> mine = {1 * kUnit, 4 * kUnit, 2 * kUnit, 8 * kUnit};
  b.others = [](int, std::vector<double>& v) {
    const double theirs[] = {3 * kUnit, 1 * kUnit, 5 * kUnit, 2 * kUnit};
    std::copy(std::begin(theirs), std::end(theirs), v.begin());
    v[4] = 2.0;  // the other rank's CPU seconds per iteration, more than this one's
  };
  Batch batch([&](std::vector<double>& seconds) { seconds = mine; });
  // min_reps 2, max_reps 3: 2 x 4 iterations stay below 30, so it stops at 3 repetitions.
  Summary s = measure(b, config(0, 4, 2, 3), batch);
  const double expected = (3 + 4 + 5 + 8) * kUnit / 4;
  EXPECT_EQ(s.reps, (std::vector<double>{expected, expected}));
  EXPECT_EQ(s.cpu_reps, (std::vector<double>{2.0, 2.0}));
  EXPECT_EQ(b.max_calls, 3);
}

TEST(Measure, ANegativeRepetitionCountsAsZero) {
  // More timer overhead subtracted than the region took: the repetition is 0, not less.
  FakeBackend b(1, {});
  ScriptedBatch script{b, {-kUnit}};
  Summary s = measure(b, config(1, 16, 2, 5), script.batch());
  EXPECT_EQ(s.reps, (std::vector<double>{0.0, 0.0}));
  EXPECT_TRUE(s.ci_met);
}

TEST(Measure, ThrowsOutTheFirstAndOutliersAndStopsOnceTheIntervalIsMet) {
  FakeBackend b(2, {});
  // The first (50) is thrown out; 1, 1.25, 1 give the approximate mean 3.25 / 3, so 3.5
  // (over 3x that) is thrown out too; then 1.25 and 1 alternate.
  ScriptedBatch script{b, {50, 1, 1.25, 1, 3.5, 1.25, 1, 1.25, 1, 1.25, 1, 1.25, 1, 1.25, 1, 1.25}};
  TimingConfig c = config(3, 8, 3, 40);
  Summary s = measure(b, c, script.batch());
  // Kept 1, 1.25, 1, 1.25, 1, 1.25, 1 (7): mean 7.75 / 7, s = 0.1336306, half width
  // t(0.975, 6) s / sqrt 7 = 2.446912 x 0.1336306 / 2.6457513 = 0.123589 > 10 % of the
  // mean (0.110714): one more. Kept 8: mean 1.125, s = 0.1336306, half width
  // t(0.975, 7) s / sqrt 8 = 2.364624 x 0.1336306 / 2.8284271 = 0.111718 <= 0.1125: stop.
  const std::vector<double> kept = {1, 1.25, 1, 1.25, 1, 1.25, 1, 1.25};
  EXPECT_EQ(s.reps, kept);
  EXPECT_EQ(s.discarded, 2);
  EXPECT_EQ(script.calls.size(), 1u + 10u);  // warm-up + 8 kept + 2 thrown out
  EXPECT_DOUBLE_EQ(s.mean, 1.125);
  const double sd = std::sqrt(8 * 0.125 * 0.125 / 7);
  EXPECT_NEAR(s.stddev, sd, 1e-12);
  EXPECT_NEAR(s.ci95_half, 2.364624 * sd / std::sqrt(8.0), 1e-6);
  EXPECT_TRUE(s.ci_met);
  EXPECT_TRUE(summary_warnings(s).empty());
}

TEST(Measure, GivesUpAtMaxRepsWhenTheIntervalStaysWide) {
  FakeBackend b(2, {});
  ScriptedBatch script{b, std::vector<double>(40, 1.0)};
  for (std::size_t i = 0; i < script.values.size(); i += 2) script.values[i] = 2.0;  // 2, 1, 2, 1, ...
  Summary s = measure(b, config(1, 8, 2, 8), script.batch());
  EXPECT_EQ(script.calls.size(), 1u + 8u);  // the values would last 40 repetitions
  EXPECT_EQ(s.reps.size(), 7u);
  EXPECT_EQ(s.discarded, 1);
  EXPECT_FALSE(s.ci_met);
  std::vector<std::string> w = summary_warnings(s);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("after 8 repetitions (limit 8)"), std::string::npos) << w[0];
}

TEST(Measure, RecordsTheModelledClockAdvancePerIteration) {
  FakeBackend b(2, {});
  b.with_modelled_clock = true;
  ScriptedBatch script{b, {3 * kUnit}};
  Summary s = measure(b, config(1, 4, 8, 10), script.batch());
  EXPECT_EQ(s.modelled_reps, std::vector<double>(8, 3 * kUnit));
}

TEST(Measure, InterleavesTwoBatchesAlternatingWhichGoesFirst) {
  FakeBackend b(2, {});
  std::vector<std::string> order;
  auto recorder = [&](const char* name) {
    return Batch([&order, name](std::vector<double>& seconds) {
      order.push_back(name + std::to_string(seconds.size()));
      std::fill(seconds.begin(), seconds.end(), kUnit);
    });
  };
  // Each side: 1 thrown out + 3 kept (48 iterations), equal values: 4 repetitions.
  auto [a, bb] = measure_interleaved(b, config(2, 16, 3, 10), recorder("A"), recorder("B"));
  EXPECT_EQ(order, (std::vector<std::string>{"A2", "B2", "A16", "B16", "B16", "A16", "A16", "B16", "B16", "A16"}));
  EXPECT_EQ(a.reps.size(), 3u);
  EXPECT_EQ(bb.reps.size(), 3u);
}

TEST(TimedBatch, SyncMethodTimesEachCallAloneAndSubtractsTheTimerOverhead) {
  FakeBackend b(3, {.sync = 0.5, .barrier = 16 * kUnit});
  Batch batch = timed::collective(b, [&] { b.barrier(); }, kUnit, b.clock());
  std::vector<double> seconds(5);
  batch(seconds);
  EXPECT_EQ(seconds, std::vector<double>(5, 15 * kUnit));  // the sync's 0.5 s is outside
  EXPECT_EQ(b.syncs, 5);
  EXPECT_EQ(b.barriers, 5);
  EXPECT_EQ(batch.method(), timed::kSyncMethod);

  Summary s = measure(b, config(2, 8, 4, 10), batch);
  EXPECT_EQ(s.reps, std::vector<double>(4, 15 * kUnit));
  EXPECT_EQ(b.barriers, 5 + 2 + 5 * 8);  // warm-up, then 1 thrown out + 4 kept
}

TEST(TimedBatch, LoopTimesTheCallsBackToBackAfterOneSync) {
  FakeBackend b(2, {.sync = 0.5, .send = 32 * kUnit, .recv = 32 * kUnit});
  auto round_trip = [&] {
    b.send(1, {});
    b.recv(1, {});
  };
  Batch counted = timed::loop(b, round_trip, true, 0.5, kUnit, "", b.clock());
  std::vector<double> seconds(4);
  counted(seconds);
  // Four round trips of 64 units, less one unit of overhead, per iteration, halved.
  EXPECT_EQ(seconds, std::vector<double>(4, (4 * 64 - 1) * kUnit / 4 * 0.5));
  EXPECT_EQ(b.syncs, 1);
  EXPECT_EQ(b.sends, 4);
  EXPECT_EQ(counted.method(), timed::generic_loop_method(0.5));
  EXPECT_NE(counted.method().find("scaled by 0.5"), std::string::npos) << counted.method();

  Batch uncounted = timed::loop(b, round_trip, false, 0.5, kUnit, "mine", b.clock());
  uncounted(seconds);
  EXPECT_EQ(seconds, std::vector<double>(4, 0.0));  // run (the peer needs it), not counted
  EXPECT_EQ(b.sends, 8);
  EXPECT_EQ(uncounted.method(), "mine");
}

TEST(TimedBatch, CollectiveLoopIsTheLoopTimedOnEveryRank) {
  FakeBackend b(4, {.barrier = 16 * kUnit});
  Batch batch = timed::collective_loop(b, [&] { b.barrier(); }, 0.0, b.clock());
  std::vector<double> seconds(8);
  batch(seconds);
  EXPECT_EQ(seconds, std::vector<double>(8, 16 * kUnit));
  EXPECT_EQ(b.syncs, 1);
  EXPECT_EQ(batch.method(), timed::kCollectiveLoopMethod);
}

// The methods a point runs (copbench run --methods, a campaign's methods:): one parser,
// the order window, sync, loop whatever the order given, every bad list refused by name.
TEST(Methods, ParsesAListInTheOneOrderAndRefusesBadOnes) {
  EXPECT_EQ(parse_methods("window"), (std::vector<std::string>{"window"}));
  EXPECT_EQ(parse_methods("loop,window"), (std::vector<std::string>{"window", "loop"}));
  EXPECT_EQ(parse_methods("sync,loop,window"), TimingConfig{}.methods);
  EXPECT_EQ(TimingConfig{}.methods, (std::vector<std::string>{kMethodWindow, kMethodSync, kMethodLoop}));
  EXPECT_EQ(methods_text(parse_methods("loop,sync")), "sync,loop");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"fast", "unknown method 'fast' (known: window, sync, loop)"},
      {"window,", "unknown method '' (known: window, sync, loop)"},
      {"Window", "unknown method 'Window' (known: window, sync, loop)"},
      {"sync,window,sync", "method 'sync' named twice"},
      {"", "no method named (known: window, sync, loop)"},
      {",", "no method named (known: window, sync, loop)"}};
  for (const auto& [list, message] : bad) {
    try {
      parse_methods(list);
      ADD_FAILURE() << "'" << list << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

}  // namespace
}  // namespace copbench
