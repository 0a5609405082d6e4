// sim-cop (baselines/simcop) against the libcop-call model (cop/model/libcop_call.h):
// `copbench run` on the sim-cop backend, platform thesis or present, and every
// sync-method point's simulated time per call beside the model's with the platform's
// COP (the same file, read by the same code: simcop/platform.h). One controller (2 to
// 64 nodes): the simulation is cycle-exact, so equal to the model's cycles (0.01 us,
// the result's rounding). Two levels (65 to 512 nodes): within 1 %.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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

// Simulated time (us) of each sync-method point of `bench` at `nodes`, by run name.
std::map<std::string, std::pair<double, double>> run_simcop(const std::string& platform, const std::string& bench,
                                                            int nodes, const std::string& sizes) {
  const fs::path out = fs::temp_directory_path() /
                       ("simcop_model_test." + platform + "." + bench + "." + std::to_string(nodes) + ".json");
  std::vector<std::string> argv = {COPBENCH_BIN, "run", bench, "--backend", "sim-cop", "--nodes", std::to_string(nodes),
                                   "--platform", platform, "--iters", "3", "--warmup", "1", "--reps", "1",
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
    if (b.value("run_type", "") != "iteration" || name.find("method:loop") != std::string::npos ||
        name.find("roots:") != std::string::npos)
      continue;
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
  if (name.rfind("reduce/", 0) == 0) {
    const DataType dt = name.find("/double/") != std::string::npos ? DataType::floating : DataType::integer;
    return cop::model::libcop_call_us(Function::reduce, dt, t, link, nodes, uint64_t(elements));
  }
  const uint64_t bytes = std::stoull(name.substr(name.find("size:") + 5));
  return cop::model::libcop_call_us(Function::bcast, DataType::integer, t, link, nodes, (bytes + 7) / 8);
}

// Every point of the three benchmarks at `nodes`, within `tolerance` (relative) of the model.
void expect_model(const std::string& platform, int nodes, const std::string& reduce_sizes, const std::string& cast_sizes,
                  double tolerance, size_t points_expected) {
  size_t seen = 0;
  for (const auto& [bench, sizes] : std::vector<std::pair<std::string, std::string>>{
           {"barrier", ""}, {"reduce", reduce_sizes}, {"broadcast", cast_sizes}}) {
    for (const auto& [name, point] : run_simcop(platform, bench, nodes, sizes)) {
      const double model = model_us(platform, name, uint64_t(nodes), point.second);
      const double slack = std::max(tolerance * model, 0.006);  // the result keeps 0.01 us
      EXPECT_NEAR(point.first, model, slack) << name << " at " << nodes << " nodes on " << platform;
      ++seen;
    }
  }
  EXPECT_EQ(seen, points_expected) << "points compared at " << nodes << " nodes on " << platform;
}

TEST(SimCopModel, OneControllerIsTheModelExactly) {
  // barrier; reduce 8 B and 8 KB of int and double; broadcast 8 B, 1 KB and 16 KB.
  expect_model("thesis", 2, "8,8K", "8,1K,16K", 0.0, 8);
  expect_model("thesis", 8, "8,8K", "8,1K,16K", 0.0, 8);
}

TEST(SimCopModel, TwoLevelsWithinOnePercent) {
  // 128 nodes, two level-1 controllers: barrier, reduce 8 B (int, double), broadcast 8 B and 1 KB.
  expect_model("thesis", 128, "8", "8,1K", 0.01, 5);
}

// The COP on present's network (results/platforms/present.xml): a link's flight of
// 500 cycles each way, a 2-cycle wire, P_CLK 1 ns.
TEST(SimCopModel, PresentOneControllerIsTheModelExactly) {
  expect_model("present", 2, "8,8K", "8,1K,16K", 0.0, 8);
  expect_model("present", 8, "8,8K", "8,1K,16K", 0.0, 8);
  expect_model("present", 64, "8,8K", "8,1K", 0.0, 7);
}

TEST(SimCopModel, PresentTwoLevelsWithinOnePercent) {
  expect_model("present", 65, "8,8K", "8,1K", 0.01, 7);
  expect_model("present", 512, "8", "8", 0.01, 4);
}

}  // namespace
