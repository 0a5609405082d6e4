// The result JSON's machine fields come from Google Benchmark's CPUInfo, under the
// names the report and compare.py read; checked against what this machine says itself.
// The cluster a manifest records is emulated (its hosts share this machine's cores)
// exactly where the inventory says copbench_emulated: true, or it is `local`.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "copbench/campaign.h"
#include "copbench/results.h"

namespace copbench {
namespace {

TEST(machine_context, cpu_fields_are_this_machines) {
  RunContext c;
  c.benchmark = "echo";
  c.backend = "mpi";
  const nlohmann::json ctx = make_gbench_json(c, {})["context"];
  EXPECT_EQ(ctx.at("num_cpus").get<long>(), ::sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GE(ctx.at("mhz_per_cpu").get<long>(), 0);
  EXPECT_TRUE(ctx.at("cpu_scaling_enabled").is_boolean());
  ASSERT_TRUE(ctx.at("caches").is_array());
  for (const auto& cache : ctx["caches"]) {
    EXPECT_GE(cache.at("level").get<int>(), 1);
    EXPECT_GT(cache.at("size").get<long>(), 0);
    EXPECT_FALSE(cache.at("type").get<std::string>().empty());
  }
  EXPECT_EQ(ctx.at("backend"), "mpi");  // copbench's own context beside it
}

TEST(machine_context, emulated_cluster_from_the_inventory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("copbench-emulated-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "hostfile") << "node1\nnode2\n";
  ::setenv("COPBENCH_HOSTFILE", (dir / "hostfile").c_str(), 1);
  auto inventory = [&](const std::string& name, const std::string& vars) {
    std::ofstream(dir / name) << "all:\n  vars:\n    copbench_link_profile: native\n" << vars
                              << "  children:\n    compute:\n      hosts:\n        node1:\n        node2:\n";
    return (dir / name).string();
  };
  const campaign::Cluster emulated = campaign::describe_cluster(inventory("emulated.yml", "    copbench_emulated: true\n"));
  EXPECT_TRUE(emulated.emulated);
  EXPECT_EQ(emulated.size, 2);
  EXPECT_FALSE(campaign::describe_cluster(inventory("real.yml", "")).emulated);
  EXPECT_FALSE(campaign::describe_cluster(inventory("said-no.yml", "    copbench_emulated: false\n")).emulated);
  EXPECT_TRUE(campaign::describe_cluster("local").emulated);
  ::unsetenv("COPBENCH_HOSTFILE");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace copbench
