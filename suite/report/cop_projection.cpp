// The COP projection of an application point (cop_projection.h).
#include "report/cop_projection.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "model/analytic.h"

namespace copbench::report {

namespace {

double cop_seconds(cop::model::Function f, cop::model::DataType type, int nodes, std::size_t elements) {
  using namespace cop::model;
  const Timing t;
  const OpCosts ops = OpCosts::hall(t, type);
  const uint64_t c_bar = nodes > 1 ? static_cast<uint64_t>(nodes - 1) : 0;
  const Load load{c_bar, type == DataType::floating ? t.t_op_fp : t.t_op_int};
  return t.us(analytic_cycles(f, t, ops, load, std::max<std::size_t>(1, elements))) * 1e-6;
}

std::size_t words64(std::size_t bytes) { return (bytes + 7) / 8; }

}  // namespace

std::optional<double> cop_call_seconds(const std::string& part, int ranks, std::size_t bytes) {
  using cop::model::DataType;
  using cop::model::Function;
  if (part == "multicast") return cop_seconds(Function::bcast, DataType::integer, ranks, words64(bytes));
  if (part == "reduction") return cop_seconds(Function::reduce, DataType::floating, ranks, bytes / sizeof(double));
  if (part == "barrier") return cop_seconds(Function::barrier_spmd, DataType::integer, ranks, 1);
  if (part == "point_to_point")
    return cop_seconds(Function::write, DataType::integer, ranks, words64(bytes)) +
           cop_seconds(Function::read, DataType::integer, ranks, words64(bytes));
  return std::nullopt;
}

std::optional<CopProjection> cop_projection(const PointMedian& m, const std::vector<std::string>& parts) {
  const std::optional<double> computation = counter(m, "frac_computation");
  if (!computation) return std::nullopt;
  // The application's ranks: its "ranks" counter where a node runs several tasks, else one a node.
  const int ranks = static_cast<int>(counter(m, "ranks").value_or(counter(m, "nodes").value_or(m.nodes)));
  CopProjection p;
  p.frac_total = *computation;
  for (const std::string& part : parts) {
    const std::optional<double> fraction = counter(m, "frac_" + part);
    const std::optional<double> seconds = counter(m, "seconds_" + part);
    if (!fraction || !seconds) return std::nullopt;
    double modelled = 0;
    const std::string prefix = "calls_" + part + "_";
    for (auto it = m.counters.lower_bound(prefix); it != m.counters.end() && it->first.starts_with(prefix); ++it) {
      std::size_t bytes = 0;
      const char* first = it->first.data() + prefix.size();
      const char* last = it->first.data() + it->first.size();
      if (auto [end, ec] = std::from_chars(first, last, bytes); ec != std::errc{} || end != last) continue;
      if (std::optional<double> one = cop_call_seconds(part, ranks, bytes)) modelled += it->second * *one;
    }
    const double speedup = modelled > 0 ? *seconds / modelled : 1.0;
    p.speedup[part] = speedup;
    p.frac_total += *fraction / speedup;
  }
  p.speedup_total = p.frac_total > 0 ? 1.0 / p.frac_total : 0.0;
  return p;
}

}  // namespace copbench::report
