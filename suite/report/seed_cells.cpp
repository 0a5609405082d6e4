// The seeds' published cells (results/reference/*.csv) and which of our points each row
// reads: the named point at the row's node count, or a ratio of two points.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fnmatch.h>
#include <sstream>

#include <fmt/format.h>

#include "copbench/catalog.h"
#include "copbench/csv.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace fs = std::filesystem;

std::optional<std::pair<double, double>> parse_spread(const std::string& text, std::string& why) {
  auto number = [](const std::string& t, double& out) {
    if (t.empty() || t[0] == '+' || t[0] == '-') return false;
    char* end = nullptr;
    out = std::strtod(t.c_str(), &end);
    return *end == '\0' && std::isfinite(out) && out >= 0;
  };
  double below = 0, above = 0;
  if (!text.empty() && text[0] == '-') {
    auto plus = text.find('+');
    if (plus != std::string::npos && number(text.substr(1, plus - 1), below) && number(text.substr(plus + 1), above))
      return std::make_pair(below, above);
  } else if (number(text, below)) {
    return std::make_pair(below, below);
  }
  why = text.find('%') != std::string::npos
            ? fmt::format("tolerance '{}' is a percentage; write the seed's spread in the row's unit (X for ± X, -A+B)", text)
            : fmt::format("tolerance '{}' is neither X (± X) nor -A+B, in the row's unit", text);
  return std::nullopt;
}

namespace {

// Where each column of a seed table is; the optional ones are missing in tables copied
// into older campaign directories.
struct SeedColumns {
  std::size_t source, table, row, column, value, unit, benchmark, point, nodes, metric, backend;
  std::optional<std::size_t> needs, over, note, tolerance;
};

SeedColumns seed_columns(const std::vector<std::string>& header, const fs::path& file) {
  auto optional_col = [&](const std::string& name) -> std::optional<std::size_t> {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  auto col = [&](const std::string& name) {
    if (auto c = optional_col(name)) return *c;
    throw std::runtime_error(fmt::format("{}: no column '{}'", file.string(), name));
  };
  return SeedColumns{col("source"),    col("table"), col("row"),    col("column"),         col("value"),
                     col("unit"),      col("benchmark"), col("point"), col("nodes"),     col("metric"),
                     col("backend"),   optional_col("needs"), optional_col("over_benchmark"), optional_col("note"),
                     optional_col("tolerance")};
}

// The operation names of a `needs` cell.
std::vector<Op> needed_ops(const std::string& text, const std::string& where) {
  std::vector<Op> ops;
  std::stringstream ss(text);
  std::string name;
  while (ss >> name) {
    auto op = std::find_if(std::begin(kAllOps), std::end(kAllOps), [&](Op o) { return op_name(o) == name; });
    if (op == std::end(kAllOps)) throw std::runtime_error(fmt::format("{}: unknown operation '{}' in needs", where, name));
    ops.push_back(*op);
  }
  return ops;
}

SeedCell seed_cell(const std::vector<std::string>& v, const SeedColumns& c, const std::string& where) {
  SeedCell cell{v[c.source], v[c.table],  v[c.row],    v[c.column], v[c.unit], v[c.benchmark],
                v[c.point],  v[c.metric], v[c.backend], 0,          {},        {}, {}, {}, {}};
  char* end = nullptr;
  cell.value = std::strtod(v[c.value].c_str(), &end);
  if (v[c.value].empty() || *end) throw std::runtime_error(fmt::format("{}: value '{}' is not a number", where, v[c.value]));
  if (!v[c.nodes].empty()) cell.nodes = std::atoi(v[c.nodes].c_str());
  if (cell.metric.empty()) cell.metric = "median";
  if (c.over) cell.over_benchmark = v[*c.over];
  if (c.note) cell.note = v[*c.note];
  if (c.tolerance && !v[*c.tolerance].empty()) {
    std::string why;
    cell.spread = parse_spread(v[*c.tolerance], why);
    if (!cell.spread) throw std::runtime_error(fmt::format("{}: {}", where, why));
  }
  if (c.needs) cell.needs = needed_ops(v[*c.needs], where);
  for (const std::string* name : {&cell.benchmark, &cell.over_benchmark})
    if (!name->empty() && !find_benchmark(*name))
      throw std::runtime_error(fmt::format("{}: unknown benchmark '{}'", where, *name));
  if (cell.metric.rfind("ratio:", 0) == 0 && cell.metric.size() == 6)
    throw std::runtime_error(fmt::format("{}: metric 'ratio:' names no point", where));
  return cell;
}

}  // namespace

std::vector<SeedCell> load_seed_cells(const fs::path& file) {
  const CsvFile csv = read_csv(file, "seed table");
  const SeedColumns columns = seed_columns(csv.header, file);
  std::vector<SeedCell> out;
  for (const CsvRecord& r : csv.records)
    out.push_back(seed_cell(r.fields, columns, fmt::format("{}:{}", file.string(), r.line)));
  return out;
}

// ------------------------------------------------------------------ our points for a row

namespace {

std::string at_nodes(std::string point, int nodes) {
  if (auto p = point.find("{nodes}"); p != std::string::npos) point.replace(p, 7, std::to_string(nodes));
  return point;
}

// Whether a backend offers everything a row needs: both sides' benchmarks and the row's
// `needs` (a point a benchmark writes only where an optional operation is offered).
bool offered(const BackendMode& mode, const SeedCell& c) {
  const BackendSpec* spec = find_backend_spec(mode.backend);
  if (!spec) return true;  // a backend this build does not know: its points speak for it
  for (const std::string* name : {&c.benchmark, &c.over_benchmark})
    if (const Benchmark* b = name->empty() ? nullptr : find_benchmark(*name); b && !missing_ops(*b, *spec).empty())
      return false;
  for (Op op : c.needs)
    if (!spec->offers(op)) return false;
  return true;
}

// The denominator of a ratio row: the named point, or for min(PATTERN) the point with the
// smallest median among those whose name matches PATTERN (`*` = any characters), e.g. the
// best window K of a windowed AllFence.
const PointMedian* denominator(const CampaignResults& results, const BackendMode& mode, const std::string& over,
                               bool over_min, int nodes) {
  if (!over_min) return results.find(mode, over, nodes, 1);
  const PointMedian* d = nullptr;
  for (const auto& o : results.medians)
    if (o.mode == mode && o.nodes == nodes && o.tasks == 1 && fnmatch(over.c_str(), o.run_name.c_str(), 0) == 0 &&
        (!d || o.median_us < d->median_us || (o.median_us == d->median_us && o.run_name < d->run_name)))
      d = &o;
  return d;
}

// Our value of a row that is not a ratio: the median (and the modelled time) or a counter.
SeedRowValue single_point_value(const SeedCell& c, const PointMedian& m, SeedRowValue out) {
  if (c.metric == "median") {
    out.value = m.median_us;
    if (m.modelled_us) out.modelled = *m.modelled_us;
    return out;
  }
  auto it = m.counters.find(c.metric);
  if (it == m.counters.end()) out.missing = "—";
  else out.value = it->second;
  return out;
}

}  // namespace

SeedRowValue read_seed_row(const CampaignResults& results, const SeedCell& c, const BackendMode& mode, int nodes) {
  SeedRowValue out;
  out.point = at_nodes(c.point, nodes);
  const std::string over_bench = c.over_benchmark.empty() ? c.benchmark : c.over_benchmark;
  const bool is_ratio = c.metric.rfind("ratio:", 0) == 0;
  std::string over;
  bool over_min = false;
  if (is_ratio) {
    over = at_nodes(c.metric.substr(6), nodes);
    if (over.rfind("min(", 0) == 0 && over.size() > 5 && over.back() == ')') {
      over = over.substr(4, over.size() - 5);
      over_min = true;
    }
    out.over = over;
  }
  if (!offered(mode, c)) {
    out.missing = "not offered";
    return out;
  }
  const PointMedian* m = results.find(mode, out.point, nodes, 1);
  if (!m) {
    // Not run: the status of the numerator's point, else of the denominator's.
    out.missing = results.missing_cell(mode, c.benchmark, nodes, 1);
    if (is_ratio && out.missing == "—") out.missing = results.missing_cell(mode, over_bench, nodes, 1);
    return out;
  }
  if (!is_ratio) return single_point_value(c, *m, std::move(out));
  const PointMedian* d = denominator(results, mode, over, over_min, nodes);
  if (!d) {
    out.missing = results.missing_cell(mode, over_bench, nodes, 1);
    return out;
  }
  out.over = d->run_name;
  if (d->median_us <= 0) {
    out.missing = "—";
    return out;
  }
  out.value = m->median_us / d->median_us;
  return out;
}

std::optional<int> seed_row_nodes(const CampaignResults& results, const SeedCell& c) {
  std::set<int> have;
  for (const auto& m : results.medians)
    if (m.benchmark == c.benchmark && m.run_name == at_nodes(c.point, m.nodes) && m.tasks == 1) have.insert(m.nodes);
  if (have.empty()) return std::nullopt;
  if (!c.nodes) return *have.rbegin();
  int best = *have.begin();
  for (int n : have)
    if (std::abs(n - *c.nodes) < std::abs(best - *c.nodes) ||
        (std::abs(n - *c.nodes) == std::abs(best - *c.nodes) && n > best))
      best = n;
  return best;
}

std::string spread_verdict(double ours, const SeedCell& pub) {
  const double lo = pub.value - pub.spread->first, hi = pub.value + pub.spread->second;
  const double eps = 1e-9 * std::max({std::fabs(lo), std::fabs(hi), 1.0});  // the CSV's decimals, not a tolerance
  if (ours >= lo - eps && ours <= hi + eps) return "within the seed's spread";
  if (pub.value == 0) return "outside";
  return "outside (ours " + format_ratio(ours / pub.value) + " the seed)";
}

}  // namespace copbench::report
