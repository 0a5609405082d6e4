// The application workloads, in the order `copbench list` shows them after the benchmarks.
#include <vector>

#include "copbench/bench.h"

namespace copbench::apps {

const Benchmark& md_app();
const Benchmark& matmul_app();
const Benchmark& radixsort_app();
const Benchmark& halo_app();

const std::vector<const Benchmark*>& app_benchmarks() {
  static const std::vector<const Benchmark*> list = {&md_app(), &matmul_app(), &radixsort_app(), &halo_app()};
  return list;
}

}  // namespace copbench::apps
