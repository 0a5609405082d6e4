// Google Benchmark JSON layout, the table and the atomic write.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "copbench/results.h"

namespace copbench {
namespace {

PointResult point() {
  PointResult p;
  p.name = "echo/size:8";
  p.counters["nodes"] = 2;
  p.counters["bytes"] = 8;
  p.summary.reps = {1e-6, 2e-6, 3e-6};
  p.summary.cpu_reps = {1e-6, 1e-6, 1e-6};
  p.summary.iterations = 30;
  p.summary.median = 2e-6;
  p.summary.mean = 2e-6;
  p.summary.stddev = 1e-6;
  p.summary.min = 1e-6;
  p.summary.max = 3e-6;
  p.summary.discarded = 1;
  return p;
}

RunContext context() {
  RunContext c;
  c.benchmark = "echo";
  c.backend = "mpi";
  c.route = "default";
  c.nodes = 2;
  c.link_profile = "loopback";
  c.host = "h0";
  c.commit = "abc";
  return c;
}

TEST(GbenchJson, HasContextRepetitionsAndAggregates) {
  nlohmann::json j = make_gbench_json(context(), {point()});
  const auto& ctx = j["context"];
  EXPECT_EQ(ctx["backend"], "mpi");
  EXPECT_EQ(ctx["nodes"], "2");
  EXPECT_EQ(ctx["link_profile"], "loopback");
  EXPECT_EQ(ctx["commit"], "abc");
  EXPECT_TRUE(ctx.contains("timer"));
  const auto& b = j["benchmarks"];
  ASSERT_EQ(b.size(), 3u + 5u);
  EXPECT_EQ(b[0]["name"], "echo/size:8");
  EXPECT_EQ(b[0]["run_type"], "iteration");
  EXPECT_EQ(b[0]["time_unit"], "us");
  EXPECT_DOUBLE_EQ(b[0]["real_time"].get<double>(), 1.0);
  EXPECT_EQ(b[2]["repetition_index"], 2);
  EXPECT_EQ(b[4]["name"], "echo/size:8_median");
  EXPECT_EQ(b[4]["aggregate_name"], "median");
  EXPECT_DOUBLE_EQ(b[4]["real_time"].get<double>(), 2.0);
  EXPECT_EQ(b[4]["bytes"], 8);
}

TEST(Table, ShowsOneRowPerPoint) {
  std::string t = render_table(make_gbench_json(context(), {point()}));
  EXPECT_NE(t.find("echo on mpi"), std::string::npos);
  EXPECT_NE(t.find("echo/size:8"), std::string::npos);
  EXPECT_NE(t.find("2.00"), std::string::npos);
  EXPECT_NE(t.find("timer:"), std::string::npos);
}

// The CI% column: a percentage of the mean for several kept repetitions, "-" for one
// (no interval), with "!" where the target was missed.
TEST(Table, OneRepetitionHasNoInterval) {
  PointResult several = point();
  several.summary.ci95_half = 0.5e-6;
  several.summary.ci_met = false;
  std::string t = render_table(make_gbench_json(context(), {several}));
  EXPECT_NE(t.find(" 25.0!"), std::string::npos) << t;
  PointResult one = point();
  one.summary.reps = {2e-6};
  one.summary.cpu_reps = {1e-6};
  one.summary.ci_met = false;
  t = render_table(make_gbench_json(context(), {one}));
  EXPECT_NE(t.find("1/1     -!"), std::string::npos) << t;
  EXPECT_EQ(t.find("0.0!"), std::string::npos) << t;
  one.summary.ci_met = true;  // the discarded first one equal to it (a simulation)
  t = render_table(make_gbench_json(context(), {one}));
  EXPECT_NE(t.find("1/1      -"), std::string::npos) << t;
}

TEST(AtomicWrite, ReplacesWholeAndLeavesNoTemporary) {
  auto dir = std::filesystem::temp_directory_path() / "copbench-atomic-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto file = dir / "out.json";
  write_file_atomically(file, "first\n");
  write_file_atomically(file, "second\n");
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "second");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  EXPECT_THROW(write_file_atomically(dir / "missing" / "x.json", "x"), std::runtime_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace copbench
