// sim-cop (baselines/simcop) against the libcop-call model (cop/model/libcop_call.h):
// `copbench run` on the sim-cop backend, platform thesis or present, and every
// sync-method point's simulated time per call beside the model's with the platform's
// COP (the same file, read by the same code: simcop/platform.h). One controller (2 to
// 64 nodes): the simulation is cycle-exact, so equal to the model's cycles (0.01 us,
// the result's rounding). Two levels (65 to 512 nodes): within 1 %. Reduce to several
// roots and multicast (to the odd ranks) against the model's reduce and broadcast.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "copbench/process.h"
#include "model/libcop_call.h"
#include "simcop/platform.h"

namespace {

namespace fs = std::filesystem;
using cop::model::DataType;
using cop::model::Function;

// Simulated time (us) of each window-method (plain name) and sync-method (method:sync/)
// point of `bench` at `nodes`, by run name: on the simulated clock both are the call's time.
std::map<std::string, std::pair<double, double>> run_simcop(const std::string& platform, const std::string& bench,
                                                            int nodes, const std::string& sizes, int iters = 3) {
  const fs::path out = fs::temp_directory_path() /
                       ("simcop_model_test." + platform + "." + bench + "." + std::to_string(nodes) + ".json");
  std::vector<std::string> argv = {COPBENCH_BIN, "run", bench, "--backend", "sim-cop", "--nodes", std::to_string(nodes),
                                   "--platform", platform, "--iters", std::to_string(iters), "--warmup", "1", "--reps", "1",
                                   "--max-reps", "1", "--timeout", "120", "--out", out.string()};
  if (!sizes.empty()) argv.insert(argv.end(), {"--sizes", sizes});
  copbench::ProcessOptions o;
  o.capture = true;
  o.timeout_s = 150;
  const copbench::ProcessResult r = copbench::run_process(argv, o);
  EXPECT_EQ(r.status(), 0) << r.output;
  std::map<std::string, std::pair<double, double>> points;  // run name -> (us, elements)
  if (r.status() != 0) return points;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(out));
  fs::remove(out);
  for (const auto& b : j.at("benchmarks")) {
    const std::string name = b.at("run_name");
    if (b.value("run_type", "") != "iteration" || name.find("method:loop") != std::string::npos) continue;
    points[name] = {b.at("real_time").get<double>(), b.value("elements", 0.0)};
  }
  return points;
}

cop::model::CopHardware cop_of(const std::string& platform) {
  return copbench::simcop::cop_hardware_of_file(std::string(COPBENCH_PLATFORMS) + "/" + platform + ".xml");
}

double model_us(const std::string& platform, const std::string& name, uint64_t nodes, double elements) {
  const cop::model::CopHardware hw = cop_of(platform);
  const cop::model::Timing& t = hw.timing;
  const auto link = cop::model::SerialLink::of(hw);
  if (name.rfind("barrier", 0) == 0) return cop::model::libcop_call_us(Function::barrier_spmd, DataType::integer, t, link, nodes, 1);
  // A reduction to several roots is one reduction whose result the broadcast mask sends
  // to every root at once (reduce/.../roots:N): the model's reduce to one root.
  if (name.rfind("reduce/", 0) == 0) {
    const DataType dt = name.find("/double/") != std::string::npos ? DataType::floating : DataType::integer;
    return cop::model::libcop_call_us(Function::reduce, dt, t, link, nodes, uint64_t(elements));
  }
  // broadcast/ and multicast/ (to the odd ranks: one broadcast mask naming fewer channels).
  const uint64_t bytes = std::stoull(name.substr(name.find("size:") + 5));
  return cop::model::libcop_call_us(Function::bcast, DataType::integer, t, link, nodes, (bytes + 7) / 8);
}

// Every point of the three benchmarks at `nodes`, within `tolerance` (relative) of the model.
void expect_model(const std::string& platform, int nodes, const std::string& reduce_sizes, const std::string& cast_sizes,
                  double tolerance, size_t points_expected) {
  size_t seen = 0;
  for (const auto& [bench, sizes] : std::vector<std::pair<std::string, std::string>>{
           {"barrier", ""}, {"reduce", reduce_sizes}, {"broadcast", cast_sizes}, {"multicast", cast_sizes}}) {
    for (const auto& [name, point] : run_simcop(platform, bench, nodes, sizes)) {
      // A multicast to the odd ranks whose members all sit on level-1 controller 0 (up to
      // 65 nodes: the highest odd rank is below 64) never crosses the level 2: the model's
      // broadcast on one controller (its time does not depend on the silent channels).
      const int highest_odd = nodes % 2 == 0 ? nodes - 1 : nodes - 2;
      const bool one_level = name.rfind("multicast/", 0) == 0 && highest_odd < 64;
      const uint64_t model_nodes = one_level ? uint64_t(std::min(nodes, 64)) : uint64_t(nodes);
      const double model = model_us(platform, name, model_nodes, point.second);
      std::printf("%s at %d nodes on %s: sim-cop %.2f us, model %.2f us\n", name.c_str(), nodes, platform.c_str(),
                  point.first, model);
      // Every rank a root: every channel awaits each burst's results before its next
      // (libcop, channel_reduce), and over two levels every level-1 passes the result down,
      // where the model's one root alone does. Not the model's case: the model is its lower
      // bound (thesis: +2.4 % at 8 nodes and 8 KB; present, whose results wait out the
      // link's flight at every burst: +11 to +27 % at 8 KB, +2.5 % at 512 nodes and 8 B).
      const bool all_roots = name.find("/roots:" + std::to_string(nodes) + "/") != std::string::npos;
      if (all_roots) {
        EXPECT_GE(point.first, model - 0.006) << name << " at " << nodes << " nodes on " << platform;
      } else {
        const double slack = std::max(tolerance * model, 0.006);  // the result keeps 0.01 us
        EXPECT_NEAR(point.first, model, slack) << name << " at " << nodes << " nodes on " << platform;
      }
      ++seen;
    }
  }
  // Every point twice: the window method's and the sync method's (suite/bench/common.h).
  EXPECT_EQ(seen, 2 * points_expected) << "points compared at " << nodes << " nodes on " << platform;
}

TEST(SimCopModel, OneControllerIsTheModelExactly) {
  // barrier; reduce 8 B and 8 KB of int and double, to rank 0, to ranks 0 and 1 and (8
  // nodes) to every rank; broadcast and multicast (to the odd ranks) 8 B, 1 KB and 16 KB.
  expect_model("thesis", 2, "8,8K", "8,1K,16K", 0.0, 15);
  expect_model("thesis", 8, "8,8K", "8,1K,16K", 0.0, 19);
}

TEST(SimCopModel, TwoLevelsWithinOnePercent) {
  // 128 nodes, two level-1 controllers: barrier, reduce 8 B (int, double; 1, 2 and 128
  // roots), broadcast and multicast 8 B and 1 KB.
  expect_model("thesis", 128, "8", "8,1K", 0.01, 11);
}

// The COP on present's network (results/platforms/present.xml): a link's flight of
// 500 cycles each way, a 2-cycle wire, P_CLK 1 ns.
TEST(SimCopModel, PresentOneControllerIsTheModelExactly) {
  expect_model("present", 2, "8,8K", "8,1K,16K", 0.0, 15);
  expect_model("present", 8, "8,8K", "8,1K,16K", 0.0, 19);
  expect_model("present", 64, "8,8K", "8,1K", 0.0, 17);
}

TEST(SimCopModel, PresentTwoLevelsWithinOnePercent) {
  expect_model("present", 65, "8,8K", "8,1K", 0.01, 17);
  expect_model("present", 512, "8", "8", 0.01, 9);
}

// The lock (baselines/simcop/ops_shared.cpp: a waiter k places back sleeps (k - 1) x H,
// H between the machine's hand-over and 1.5 times it, and reads back to back once next),
// one acquire and release a rank after a warm-up one, as the what-if campaign runs it; its
// bounds from the platform's cycle timings. The machine's hand-over (platform.h) as its
// terms say: 72 cycles on thesis at one controller, 140 through the level 2. Floor (any
// ticket lock): n - 1 hand-overs, each at least the release up (t_CN-COP + a flight),
// its t_OP and the read's, the word down (t_COP-CN + a flight). Ceiling (this rule): the
// n tickets and the n first reads served one after another (t_OP + t_COP-CN each), and
// every hand-over at most 2 H (no waiter sleeps more than 1.5 H a place) and a read's
// round trip (one woken just after its turn). The rule before the oracle broke it (820 us
// at 64 nodes on thesis, 2366 at 128: its unit, its fastest read, was the first reads'
// queue); so did the machine's one-controller figure alone (1666 us at 128 on thesis).
double lock_us(const std::string& platform, int nodes) {
  const auto points = run_simcop(platform, "lock", nodes, "", 1);
  const auto it = points.find("lock/native/nodes:" + std::to_string(nodes));
  EXPECT_NE(it, points.end()) << "no lock point at " << nodes << " nodes on " << platform;
  return it == points.end() ? -1 : it->second.first;
}

void expect_lock_within_bounds(const std::string& platform, int nodes) {
  const cop::model::CopHardware hw = cop_of(platform);
  const cop::model::Timing& t = hw.timing;
  const auto link = cop::model::SerialLink::of(hw);
  const uint64_t f = link.flight, crossing = t.t_cn_cop + 2 * t.t_op_int + t.t_cop_cn + 2 * f;
  const uint64_t h = copbench::simcop::lock_hand_over_cycles(t, link, nodes);
  EXPECT_EQ(h, t.t_cn_cop + 2 * t.t_op_int + 3 * t.t_cop_cn + link.wire + 2 * f + (nodes > 64 ? 2 * crossing : 0));
  const uint64_t least = t.t_cn_cop + 2 * t.t_op_int + t.t_cop_cn + 2 * f;
  const uint64_t read = t.t_cn_cop + t.t_op_int + t.t_cop_cn + link.wire + 2 * f + (nodes > 64 ? 2 * crossing : 0);
  const uint64_t n = uint64_t(nodes);
  const uint64_t ceiling = 2 * n * (t.t_op_int + t.t_cop_cn) + (n - 1) * (2 * h + read);
  const double us = lock_us(platform, nodes);
  std::printf("lock at %d nodes on %s: %.2f us, bounds %.2f .. %.2f us\n", nodes, platform.c_str(), us,
              t.us((n - 1) * least), t.us(ceiling));
  EXPECT_GE(us, t.us((n - 1) * least)) << nodes << " nodes on " << platform;
  EXPECT_LE(us, t.us(ceiling)) << nodes << " nodes on " << platform;
}

TEST(SimCopModel, LockOnBothPlatformsWithinItsBounds) {
  const cop::model::CopHardware thesis = cop_of("thesis");
  const auto link = cop::model::SerialLink::of(thesis);
  EXPECT_EQ(copbench::simcop::lock_hand_over_cycles(thesis.timing, link, 64), 72u);
  EXPECT_EQ(copbench::simcop::lock_hand_over_cycles(thesis.timing, link, 65), 140u);
  for (const int nodes : {8, 64, 128}) {
    expect_lock_within_bounds("thesis", nodes);
    expect_lock_within_bounds("present", nodes);
  }
}

}  // namespace
