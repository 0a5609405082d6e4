// The list of benchmarks (explicit, so a static library never drops one) and the
// benchmark x backend matching that `copbench list` shows.
#include <algorithm>
#include <iterator>
#include <string_view>

#include "copbench/bench.h"

namespace copbench {
namespace bench {
const Benchmark& echo_benchmark();
const Benchmark& bandwidth_benchmark();
const Benchmark& ring_benchmark();
const Benchmark& barrier_benchmark();
const Benchmark& reduce_benchmark();
const Benchmark& allreduce_benchmark();
const Benchmark& broadcast_benchmark();
const Benchmark& multicast_benchmark();
const Benchmark& gather_benchmark();
const Benchmark& scatter_benchmark();
const Benchmark& scan_benchmark();
const Benchmark& lock_benchmark();
const Benchmark& ticket_lock_benchmark();
const Benchmark& mcs_lock_benchmark();
const Benchmark& queue_lock_benchmark();
const Benchmark& shared_benchmark();
const Benchmark& fence_benchmark();
const Benchmark& overhead_benchmark();
const Benchmark& emulation_benchmark();
}  // namespace bench
namespace apps {
// The application workloads (apps/), listed after the benchmarks.
const std::vector<const Benchmark*>& app_benchmarks();
}  // namespace apps

const std::vector<const Benchmark*>& all_benchmarks() {
  static const std::vector<const Benchmark*> list = [] {
    std::vector<const Benchmark*> l = {
      &bench::echo_benchmark(),      &bench::bandwidth_benchmark(), &bench::ring_benchmark(),
      &bench::barrier_benchmark(),   &bench::reduce_benchmark(),    &bench::allreduce_benchmark(),   &bench::broadcast_benchmark(),
      &bench::multicast_benchmark(), &bench::gather_benchmark(),    &bench::scatter_benchmark(),
      &bench::scan_benchmark(),      &bench::lock_benchmark(),      &bench::ticket_lock_benchmark(),
      &bench::mcs_lock_benchmark(),  &bench::queue_lock_benchmark(), &bench::shared_benchmark(),    &bench::fence_benchmark(),     &bench::overhead_benchmark(),
      &bench::emulation_benchmark(),
    };
    for (const Benchmark* app : apps::app_benchmarks()) l.push_back(app);
    return l;
  }();
  return list;
}

const Benchmark* find_benchmark(std::string_view name) {
  for (const Benchmark* b : all_benchmarks())
    if (b->name() == name) return b;
  return nullptr;
}

std::vector<Op> ops_of_worker_command(int argc, char** argv) {
  std::string_view bench;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--verify") return {std::begin(kAllOps), std::end(kAllOps)};
    if (a.starts_with("--bench=")) bench = a.substr(8);
    if (a == "--bench" && i + 1 < argc) bench = argv[i + 1];
  }
  const Benchmark* b = bench.empty() ? nullptr : find_benchmark(bench);
  if (!b) return {};
  std::vector<Op> ops = b->needs();
  for (Op op : b->optional_ops()) ops.push_back(op);
  return ops;
}

bool uses_any(const std::vector<Op>& used, std::initializer_list<Op> ops) {
  for (Op op : ops)
    if (std::find(used.begin(), used.end(), op) != used.end()) return true;
  return false;
}

bool BackendSpec::offers(Op op) const {
  return std::find(offered.begin(), offered.end(), op) != offered.end();
}

const BackendSpec* find_backend_spec(std::string_view name) {
  for (const BackendSpec& s : all_backend_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<Op> missing_ops(const Benchmark& bench, const BackendSpec& spec) {
  std::vector<Op> missing;
  for (Op op : bench.needs())
    if (!spec.offers(op)) missing.push_back(op);
  return missing;
}

}  // namespace copbench
