// The result JSON's machine fields come from Google Benchmark's CPUInfo, under the
// names the report and compare.py read; checked against what this machine says itself.
#include <unistd.h>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace copbench
