// The Libsplit-C repetition protocol (seed 003 section 5.0) and the summary.
#include <gtest/gtest.h>

#include "copbench/timing.h"
#include "fake_backend.h"

namespace copbench {
namespace {

TimingConfig config(int min_reps, int max_reps, int iterations = 30) {
  TimingConfig c;
  c.min_reps = min_reps;
  c.max_reps = max_reps;
  c.iterations = iterations;
  return c;
}

TEST(OutlierProtocol, ThrowsOutTheFirstRepetition) {
  OutlierProtocol p(config(3, 10));
  EXPECT_FALSE(p.add(100.0));
  EXPECT_TRUE(p.add(1.0));
  EXPECT_EQ(p.discarded().size(), 1u);
  EXPECT_EQ(p.kept().size(), 1u);
}

// An application's point: --reps 1 --max-reps 2 (the run tests'). The first run thrown
// out, the second invalid (a rank late for its instant): a third run is still made, and
// the repetitions stop at twice the limit however many are invalid.
TEST(OutlierProtocol, AnInvalidRepetitionDoesNotUseUpTheLimitButTwiceItStops) {
  OutlierProtocol p(config(1, 2, 1));
  p.add(5.0);  // thrown out
  p.add_invalid();
  EXPECT_TRUE(p.wants_more());
  p.add(1.0);
  EXPECT_FALSE(p.wants_more());
  EXPECT_EQ(p.kept().size(), 1u);
  EXPECT_EQ(p.discarded().size(), 2u);

  OutlierProtocol q(config(1, 2, 1));
  q.add(5.0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(q.wants_more()) << i;
    q.add_invalid();
  }
  EXPECT_FALSE(q.wants_more());  // 4 repetitions: twice the limit
  EXPECT_EQ(q.repetitions(), 4);
}

TEST(OutlierProtocol, DiscardsLaterValuesAboveThreeTimesTheMeanOfTheNextThree) {
  OutlierProtocol p(config(5, 20));
  p.add(50.0);  // first: thrown out
  p.add(1.0);
  p.add(1.2);
  p.add(0.8);   // approximate mean 1.0
  EXPECT_FALSE(p.add(3.5));
  EXPECT_TRUE(p.add(2.9));
  EXPECT_EQ(p.discarded().size(), 2u);
}

TEST(OutlierProtocol, StopsWhenEnoughKeptAndConfidenceIntervalMet) {
  OutlierProtocol p(config(4, 40));
  p.add(9.0);
  for (int i = 0; i < 3; ++i) {
    p.add(1.0);
    EXPECT_TRUE(p.wants_more());
  }
  p.add(1.0);
  EXPECT_TRUE(p.ci_met());
  EXPECT_FALSE(p.wants_more());
}

// A simulated clock gives every repetition the same value: one kept after the discarded
// first is enough when they are equal, and not when they differ.
TEST(OutlierProtocol, OneKeptRepetitionEqualToTheDiscardedFirstMeetsTheTarget) {
  OutlierProtocol same(config(1, 1));
  same.add(2.5e-5);
  same.add(2.5e-5);
  EXPECT_TRUE(same.ci_met());
  EXPECT_FALSE(same.wants_more());
  // Equal but for the rounding of a simulated clock read later (last bits): the same.
  OutlierProtocol rounded(config(1, 1));
  rounded.add(0.665954880000023);
  rounded.add(0.665954880000001);
  EXPECT_TRUE(rounded.ci_met());
  OutlierProtocol differ(config(1, 1));
  differ.add(2.6e-5);
  differ.add(2.5e-5);
  EXPECT_FALSE(differ.ci_met());
  OutlierProtocol barely(config(1, 1));  // 1e-8 apart: a real difference, not rounding
  barely.add(1.00000001);
  barely.add(1.0);
  EXPECT_FALSE(barely.ci_met());
}

// Adds 1, 2, 1, 2, ... (an interval far wider than 10 %) while the protocol wants more,
// up to 100: where it stops is the protocol's decision. Returns how many it took.
int add_wide_values(OutlierProtocol& p) {
  int added = 0;
  while (p.wants_more() && added < 100) p.add(added++ % 2 ? 2.0 : 1.0);
  return added;
}

TEST(OutlierProtocol, KeepsGoingWhileTheIntervalIsWideUntilMaxReps) {
  OutlierProtocol p(config(2, 8));
  EXPECT_EQ(add_wide_values(p), 8);
  EXPECT_EQ(p.repetitions(), 8);
  EXPECT_FALSE(p.ci_met());
  EXPECT_FALSE(p.wants_more());
}

TEST(OutlierProtocol, MaxRepsBelowMinRepsStillKeepsMinReps) {
  // max_reps under min_reps + 1 is raised to it: min_reps kept after the thrown-out first.
  OutlierProtocol p(config(5, 2));
  EXPECT_EQ(add_wide_values(p), 6);
  EXPECT_EQ(p.kept().size(), 5u);
}

TEST(OutlierProtocol, MeasuresAtLeastThirtyIterations) {
  OutlierProtocol p(config(2, 100, 5));
  p.add(1.0);
  for (int i = 0; i < 5; ++i) p.add(1.0);
  EXPECT_TRUE(p.wants_more());  // 5 kept x 5 iterations = 25 < 30
  p.add(1.0);
  EXPECT_FALSE(p.wants_more());
}

TEST(Summary, MedianMeanSpread) {
  OutlierProtocol p(config(4, 10));
  p.add(100.0);
  for (double v : {4.0, 1.0, 3.0, 2.0}) p.add(v);
  Summary s = summarize(p, {0.5, 0.5, 0.5, 0.5}, 30, 1e-8);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 4.0);
  EXPECT_NEAR(s.stddev, 1.2909944, 1e-6);
  EXPECT_EQ(s.discarded, 1);
  EXPECT_EQ(s.iterations, 30);
}

TEST(Summary, WarningsInWords) {
  Summary s;
  s.reps = {1.0, 1.0};
  s.discarded = 3;
  s.mean = 1.0;
  s.ci95_half = 0.25;
  s.ci_met = false;
  s.max_reps = 5;
  s.ci_target = 0.10;
  std::vector<std::string> w = summary_warnings(s);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("3 repetitions discarded"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("only 2 kept"), std::string::npos) << w[0];
  EXPECT_NE(w[1].find("confidence target missed"), std::string::npos) << w[1];
  EXPECT_NE(w[1].find("25.0 % of the mean (target 10 %) after 5 repetitions (limit 5)"), std::string::npos) << w[1];
  // One kept repetition has no interval to compare with the target: said so.
  Summary one = s;
  one.reps = {1.0};
  one.discarded = 1;
  one.ci95_half = 0;
  one.max_reps = 2;
  w = summary_warnings(one);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("1 repetition kept, which gives no interval"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("after 2 repetitions (limit 2)"), std::string::npos) << w[0];
  EXPECT_EQ(w[0].find("0.0 %"), std::string::npos) << w[0];
  // As many discarded as kept, and the target met: nothing to say.
  s.discarded = 2;
  s.ci_met = true;
  EXPECT_TRUE(summary_warnings(s).empty());
}

TEST(Summary, TheBatchSaysHowItTimed) {
  testing::FakeBackend b(1, {});
  TimingConfig c = config(2, 3);
  c.iterations = 2;
  c.warmup = 0;
  Summary sync = measure(b, c, timed_collective(b, [] {}, 0.0));
  Summary loop = measure(b, c, timed_collective_loop(b, [] {}, 0.0));
  EXPECT_EQ(sync.method.rfind("sync method (thesis ch. VI)", 0), 0u) << sync.method;
  EXPECT_EQ(loop.method.rfind("loop method (IMB, OSU)", 0), 0u) << loop.method;
  EXPECT_EQ(sync.max_reps, 3);
}

// The empty-region cost is measured once per process and is what every summary says
// was subtracted (its size is the machine's and is not asserted).
TEST(Timer, OverheadIsMeasuredOnceAndRecordedInEverySummary) {
  const double overhead = timer_overhead_seconds();
  EXPECT_EQ(timer_overhead_seconds(), overhead);
  testing::FakeBackend b(1, {});
  TimingConfig c = config(2, 3);
  c.warmup = 0;
  Summary s = measure(b, c, Batch([](std::vector<double>& seconds) { std::fill(seconds.begin(), seconds.end(), 1.0); }));
  EXPECT_EQ(s.timer_overhead, overhead);
  Summary t = summarize(OutlierProtocol(c), {}, 30, 0.25);
  EXPECT_EQ(t.timer_overhead, 0.25);
}

}  // namespace
}  // namespace copbench
