// The benchmark x backend matching `copbench list` shows.
#include <gtest/gtest.h>

#include "copbench/bench.h"

namespace copbench {
namespace {

TEST(Catalog, KnowsTheBackendsAndBenchmarks) {
  for (const char* b : {"pvm", "mpi", "armci"}) EXPECT_NE(find_backend_spec(b), nullptr) << b;
  EXPECT_EQ(find_backend_spec("nope"), nullptr);
  for (const char* b : {"echo", "barrier", "reduce", "broadcast", "multicast", "lock", "shared", "fence",
                        "bandwidth", "ring", "overhead"})
    EXPECT_NE(find_benchmark(b), nullptr) << b;
}

TEST(Catalog, NotOfferedWhereTheSystemLacksTheOperation) {
  const BackendSpec& armci = *find_backend_spec("armci");
  const BackendSpec& pvm = *find_backend_spec("pvm");
  const BackendSpec& mpi = *find_backend_spec("mpi");
  EXPECT_EQ(missing_ops(*find_benchmark("multicast"), armci), std::vector<Op>{Op::multicast});
  EXPECT_EQ(missing_ops(*find_benchmark("fence"), pvm), std::vector<Op>{Op::fence});
  EXPECT_EQ(missing_ops(*find_benchmark("scan"), pvm), std::vector<Op>{Op::scan});
  for (const Benchmark* b : all_benchmarks()) EXPECT_TRUE(missing_ops(*b, mpi).empty()) << b->name();
}

TEST(Catalog, RoutesAndEncodingsOfPvm) {
  const BackendSpec& pvm = *find_backend_spec("pvm");
  EXPECT_EQ(pvm.routes, (std::vector<std::string>{"normal", "direct"}));
  EXPECT_EQ(pvm.encodings, (std::vector<std::string>{"default", "raw", "inplace"}));
  EXPECT_EQ(pvm.launcher, Launcher::pvm_master);
}

}  // namespace
}  // namespace copbench
