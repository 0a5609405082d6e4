// The emulation benchmark (suite/bench/emulation.cpp) checks every result of both paths:
// on a stand-in for rank 0 of two ranks whose reductions add the other rank's values
// (rank 1 holds rank 0's values + 1) it reports every operation with the floor's counters;
// when the floor's reduction (or the system's) leaves the other rank out, the run ends
// with an error naming that path, never with a point.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "copbench/bench.h"

namespace copbench {
namespace {

class TwoRanks final : public Backend {
 public:
  std::string name() const override { return "two"; }
  std::string route() const override { return "-"; }
  int rank() const override { return 0; }
  int ranks() const override { return 2; }
  bool offers(Op op) const override {
    return op == Op::barrier || op == Op::reduce || op == Op::broadcast || op == Op::floor_loops;
  }
  void sync() override {}
  void max_over_ranks(std::span<double>) override {}
  void barrier() override {}
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp, int) override {
    sum(in, out, count, elem, !system_wrong);
  }
  void broadcast(std::span<std::byte>, int) override {}  // rank 0 is the root: it keeps its data
  void floor_barrier() override {}
  void floor_reduce(const void* in, void* out, std::size_t count, Elem elem, int) override {
    sum(in, out, count, elem, !floor_wrong);
  }
  void floor_broadcast(std::span<std::byte>, int) override {}
  std::optional<double> floor_cpu_seconds() override { return cpu += 1e-6; }
  std::optional<double> controller_cpu_seconds() override { return std::nullopt; }  // copd elsewhere

  bool system_wrong = false, floor_wrong = false;
  double cpu = 0;

 private:
  template <class T>
  static void add(const void* in, void* out, std::size_t count, bool other) {
    const T* a = static_cast<const T*>(in);
    T* r = static_cast<T*>(out);
    for (std::size_t i = 0; i < count; ++i) r[i] = static_cast<T>(a[i] + (other ? a[i] + 1 : 0));
  }
  static void sum(const void* in, void* out, std::size_t count, Elem elem, bool other) {
    if (elem == Elem::i32) add<std::int32_t>(in, out, count, other);
    else add<double>(in, out, count, other);
  }
};

class Points final : public Reporter {
 public:
  void report(PointResult p) override { points.push_back(std::move(p)); }
  std::vector<PointResult> points;
};

RunParams tiny() {
  RunParams p;
  p.timing.warmup = 1;
  p.timing.iterations = 2;
  p.timing.min_reps = 2;
  p.timing.max_reps = 3;
  p.timing.min_total_iterations = 2;
  return p;
}

TEST(EmulationBenchmark, ReportsEveryOperationWithTheFloorBesideIt) {
  TwoRanks b;
  Points out;
  find_benchmark("emulation")->run(b, tiny(), out);
  ASSERT_EQ(out.points.size(), 6u);
  EXPECT_EQ(out.points[0].name, "emulation/barrier/nodes:2");
  EXPECT_EQ(out.points[3].name, "emulation/broadcast/size:16384");
  for (const PointResult& p : out.points) {
    EXPECT_EQ(p.counters.count("floor_us"), 1u) << p.name;
    EXPECT_EQ(p.counters.count("floor_cpu_us_per_channel"), 1u) << p.name;
    EXPECT_EQ(p.counters.count("copd_cpu_us_per_channel"), 0u) << p.name;  // not read: absent, not 0
    EXPECT_EQ(p.counters.at("channels"), 2.0) << p.name;
    // The window method's figures beside the sync point's (the default methods name it).
    EXPECT_EQ(p.counters.count("window_us"), 1u) << p.name;
    EXPECT_EQ(p.counters.count("floor_window_us"), 1u) << p.name;
  }
}

// A run that does not time by the window method (--methods sync) has no window figures.
TEST(EmulationBenchmark, NoWindowFiguresWithoutTheWindowMethod) {
  TwoRanks b;
  Points out;
  RunParams params = tiny();
  params.timing.methods = {kMethodSync};
  find_benchmark("emulation")->run(b, params, out);
  ASSERT_EQ(out.points.size(), 6u);
  for (const PointResult& p : out.points) {
    EXPECT_EQ(p.counters.count("floor_us"), 1u) << p.name;
    EXPECT_EQ(p.counters.count("window_us"), 0u) << p.name;
    EXPECT_EQ(p.counters.count("cop_over_floor_window"), 0u) << p.name;
  }
}

TEST(EmulationBenchmark, AWrongResultOfEitherPathIsAnError) {
  for (bool floor : {true, false}) {
    TwoRanks b;
    (floor ? b.floor_wrong : b.system_wrong) = true;
    Points out;
    try {
      find_benchmark("emulation")->run(b, tiny(), out);
      ADD_FAILURE() << "a wrong " << (floor ? "floor" : "system") << " reduction was not caught";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(floor ? "emulation: floor reduce/double/size:8 gave" : "emulation: two reduce/double/size:8 gave"),
                std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(out.points.size() == 1u) << "only the barrier before the wrong reduction is reported";
  }
}

}  // namespace
}  // namespace copbench
