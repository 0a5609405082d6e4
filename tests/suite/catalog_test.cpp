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

// Seed 004's fence and lock items: what each backend offers, and the fence benchmark's
// points that run only where their operation is offered.
TEST(Catalog, Seed004FencesAndServerLock) {
  const BackendSpec& armci = *find_backend_spec("armci");
  const BackendSpec& pvm = *find_backend_spec("pvm");
  const BackendSpec& mpi = *find_backend_spec("mpi");
  const Benchmark& queue = *find_benchmark("queue-lock");
  EXPECT_TRUE(missing_ops(queue, pvm).empty());
  EXPECT_TRUE(missing_ops(queue, mpi).empty());
  EXPECT_EQ(missing_ops(queue, armci), std::vector<Op>{Op::server_lock});
  const Benchmark& fence = *find_benchmark("fence");
  EXPECT_EQ(fence.optional_ops(), (std::vector<Op>{Op::fence_window, Op::fence_barrier}));
  EXPECT_TRUE(mpi.offers(Op::fence_window));
  EXPECT_FALSE(mpi.offers(Op::fence_barrier));
  EXPECT_FALSE(armci.offers(Op::fence_window));
  EXPECT_TRUE(armci.offers(Op::fence_barrier));
}

TEST(Catalog, RoutesAndEncodingsOfPvm) {
  const BackendSpec& pvm = *find_backend_spec("pvm");
  EXPECT_EQ(pvm.routes, (std::vector<std::string>{"normal", "direct"}));
  EXPECT_EQ(pvm.encodings, (std::vector<std::string>{"default", "raw", "inplace"}));
  EXPECT_EQ(pvm.launcher, Launcher::pvm_master);
}

}  // namespace
}  // namespace copbench
