// The workload registry: every benchmark (suite/bench/) and application (apps/) adds
// itself from its own file (RegisterWorkload, copbench/bench.h); nothing here names one.
#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

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

namespace {

ParamSpec declared_param(const Benchmark& bench, std::string_view name) {
  for (ParamSpec& spec : bench.params())
    if (spec.name == name) return spec;
  throw std::logic_error(fmt::format("{}: --param {} is not declared by params()", bench.name(), name));
}

// What one value of `spec` may be, in words: "an integer from 1 to 9", "8 or 16".
std::string expected(const ParamSpec& spec) {
  if (spec.choices.empty())
    return spec.integer ? fmt::format("an integer from {} to {}", long(spec.lo), long(spec.hi))
                        : fmt::format("a number from {} to {}", spec.lo, spec.hi);
  std::string out;
  for (std::size_t k = 0; k < spec.choices.size(); ++k)
    out += fmt::format("{}{}", k == 0 ? "" : k + 1 == spec.choices.size() ? " or " : ", ", spec.choices[k]);
  return out;
}

// One value of `spec` parsed from `item`; nullopt when it is not one it may take.
std::optional<double> parse_value(const ParamSpec& spec, std::string_view item) {
  const char* end = item.data() + item.size();
  double v = 0;
  if (spec.integer) {
    long n = 0;
    auto [stop, ec] = std::from_chars(item.data(), end, n);
    if (ec != std::errc{} || stop != end) return std::nullopt;
    v = static_cast<double>(n);
  } else if (auto [stop, ec] = std::from_chars(item.data(), end, v); ec != std::errc{} || stop != end) {
    return std::nullopt;
  }
  const bool ok = spec.choices.empty() ? v >= spec.lo && v <= spec.hi
                                       : std::find(spec.choices.begin(), spec.choices.end(), v) != spec.choices.end();
  return ok ? std::optional<double>(v) : std::nullopt;
}

// `spec`'s values in `p` (a list parameter's comma-separated ones), checked against its
// declaration; its fallback alone when `p` names none.
std::vector<double> param_values(const RunParams& p, std::string_view workload, const ParamSpec& spec) {
  auto it = p.options.find(spec.name);
  if (it == p.options.end()) return {spec.fallback};
  const std::string& s = it->second;
  const auto bad = [&] {
    return std::invalid_argument(fmt::format("{}: --param {}={}: expected {}{}", workload, spec.name, s,
                                             spec.list ? "a comma-separated list, each " : "", expected(spec)));
  };
  std::vector<double> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = spec.list ? s.find(',', start) : std::string::npos;
    const auto v = parse_value(spec, std::string_view(s).substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!v || std::find(out.begin(), out.end(), *v) != out.end()) throw bad();
    out.push_back(*v);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// `spec`'s one value in `p`.
double param_value(const RunParams& p, std::string_view workload, const ParamSpec& spec) {
  return param_values(p, workload, spec).front();
}

}  // namespace

std::vector<std::string> Benchmark::option_names() const {
  std::vector<std::string> names;
  for (const ParamSpec& spec : params()) names.push_back(spec.name);
  return names;
}

void Benchmark::check_options(const RunParams& p) const {
  for (const ParamSpec& spec : params()) param_values(p, name(), spec);
}

long param_int(const RunParams& p, const Benchmark& bench, std::string_view name) {
  return static_cast<long>(param_value(p, bench.name(), declared_param(bench, name)));
}

double param_number(const RunParams& p, const Benchmark& bench, std::string_view name) {
  return param_value(p, bench.name(), declared_param(bench, name));
}

std::vector<long> param_ints(const RunParams& p, const Benchmark& bench, std::string_view name) {
  std::vector<long> out;
  for (double v : param_values(p, bench.name(), declared_param(bench, name))) out.push_back(static_cast<long>(v));
  return out;
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
