// The workload registry: every benchmark (suite/bench/) and application (apps/) adds
// itself from its own file (RegisterWorkload, copbench/bench.h); nothing here names one.
#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "copbench/bench.h"

namespace copbench {
namespace {

struct Entry {
  const Benchmark* benchmark;
  WorkloadKind kind;
  int order;
};

// Filled during static initialisation, from whichever file the linker runs first: a
// function-local static, so it exists before the first registrar uses it, kept sorted
// by (order, name) so the order never depends on the link.
struct Registry {
  std::vector<Entry> entries;
  std::vector<const Benchmark*> benchmarks;
};
Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::string_view kind_name(WorkloadKind kind) {
  return kind == WorkloadKind::application ? "application" : "benchmark";
}

std::vector<std::size_t> Benchmark::smoke_sizes() const {
  if (default_sizes().empty()) return {};
  return {8};
}

void register_workload(const Benchmark& benchmark, WorkloadKind kind, int order) {
  Registry& r = registry();
  if (find_benchmark(benchmark.name()))
    throw std::logic_error("two workloads are named '" + std::string(benchmark.name()) + "'");
  const auto key = [](const Entry& e) { return std::make_tuple(e.order, e.benchmark->name()); };
  const Entry entry{&benchmark, kind, order};
  const auto at = std::upper_bound(r.entries.begin(), r.entries.end(), entry,
                                   [&](const Entry& a, const Entry& b) { return key(a) < key(b); });
  r.benchmarks.insert(r.benchmarks.begin() + (at - r.entries.begin()), &benchmark);
  r.entries.insert(at, entry);
}

const std::vector<const Benchmark*>& all_benchmarks() { return registry().benchmarks; }

const Benchmark* find_benchmark(std::string_view name) {
  for (const Benchmark* b : all_benchmarks())
    if (b->name() == name) return b;
  return nullptr;
}

WorkloadKind kind_of(const Benchmark& benchmark) {
  for (const Entry& e : registry().entries)
    if (e.benchmark == &benchmark) return e.kind;
  throw std::logic_error("workload '" + std::string(benchmark.name()) + "' is not registered");
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

}  // namespace copbench
