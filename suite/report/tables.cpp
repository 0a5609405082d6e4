// Tables: their Markdown and CSV text, the summary of every point, and thesis Table V
// (seed 000 ch. VI) from the md application.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "copbench/bench.h"
#include "report/cop_projection.h"
#include "report/report_parts.h"

namespace copbench::report {

std::string format_number(double v) {
  double a = std::fabs(v);
  if (a == 0) return "0";
  if (a < 0.1) return fmt::format("{:.4f}", v);
  if (a < 100) return fmt::format("{:.2f}", v);
  if (a < 1000) return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}

std::string format_ratio(double v) {
  if (v < 1) return fmt::format("{:.3g}x", v);
  if (v >= 100) return fmt::format("{:.0f}x", v);
  if (v >= 10) return fmt::format("{:.1f}x", v);
  return fmt::format("{:.2f}x", v);
}

std::string ReportTable::markdown() const {
  std::string s = "## " + title + "\n\n";
  if (!source.empty()) s += "Source: " + source + "\n\n";
  if (!description.empty()) s += description + "\n\n";
  auto line = [](const std::vector<std::string>& cells) {
    std::string l = "|";
    for (const auto& c : cells) {
      std::string e = c;
      for (std::size_t p = 0; (p = e.find('|', p)) != std::string::npos; p += 2) e.replace(p, 1, "\\|");
      l += " " + e + " |";
    }
    return l + "\n";
  };
  s += line(header);
  std::vector<std::string> sep;
  for (std::size_t i = 0; i < header.size(); ++i) sep.push_back(i == 0 ? "---" : "--:");
  s += line(sep);
  for (const auto& r : rows) s += line(r);
  if (!notes.empty()) {
    s += "\n";
    for (const auto& n : notes) s += "- " + n + "\n";
  }
  return s;
}

void ReportTable::drop_empty_columns(const std::string& prefix) {
  for (std::size_t c = header.size(); c-- > 0;) {
    if (header[c].rfind(prefix, 0) != 0) continue;
    bool empty = true;
    for (const auto& r : rows)
      if (c < r.size() && r[c] != "—") empty = false;
    if (!empty) continue;
    header.erase(header.begin() + static_cast<long>(c));
    for (auto& r : rows)
      if (c < r.size()) r.erase(r.begin() + static_cast<long>(c));
  }
}

std::string ReportTable::csv_of(const std::vector<std::string>& header,
                                const std::vector<std::vector<std::string>>& rows) {
  auto field = [](const std::string& f) {
    if (f.find_first_of(",\"\n") == std::string::npos) return f;
    std::string e = "\"";
    for (char ch : f) e += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return e + "\"";
  };
  std::string s;
  auto line = [&](const std::vector<std::string>& cells) {
    // Appended in two steps: GCC 12 mis-warns (-Wrestrict) on `"," + field(...)` inlined here.
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) s += ',';
      s += field(cells[i]);
    }
    s += "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return s;
}

std::optional<double> best_of(const std::map<BackendMode, double>& values, const std::string& backend,
                              const std::string& profile) {
  std::optional<double> best;
  for (const auto& [v, x] : values)
    if (v.backend == backend && v.profile == profile && (!best || x < *best)) best = x;
  return best;
}

std::vector<std::string> ratio_baselines() {
  std::vector<const BackendSpec*> ordered;
  for (const BackendSpec& s : all_backend_specs())
    if (!s.studied && s.report_order != BackendSpec::kAfterTheOrdered) ordered.push_back(&s);
  std::stable_sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->report_order < b->report_order; });
  std::vector<std::string> names;
  for (const BackendSpec* s : ordered) names.push_back(s->name);
  return names;
}

const SimulatedNames& simulated_names() {
  static const SimulatedNames names = [] {
    SimulatedNames n;
    for (const BackendSpec& s : all_backend_specs()) {
      if (s.simulates.empty()) continue;
      if (s.simulates == studied_backend().name) {
        if (n.of_studied.empty()) n.of_studied = s.name;
      } else if (n.other.empty()) {
        n.other = s.name;
        n.other_simulates = s.simulates;
      }
    }
    return n;
  }();
  return names;
}

std::vector<std::string> ratio_header() {
  const std::string& studied = studied_backend().name;
  std::vector<std::string> header = {studied + " modelled µs"};
  for (const std::string& b : ratio_baselines()) header.push_back(b + " ÷ " + studied);
  return header;
}

std::vector<std::string> ratio_cells(const std::map<BackendMode, double>& values,
                                     const std::map<BackendMode, double>& modelled, const std::string& profile) {
  std::optional<double> cop = best_of(modelled, studied_backend().name, profile);
  std::vector<std::string> cells = {cop ? format_number(*cop) : "—"};
  for (const std::string& b : ratio_baselines()) {
    std::optional<double> x = best_of(values, b, profile);
    cells.push_back(cop && x && *cop > 0 ? format_ratio(*x / *cop) : "—");
  }
  return cells;
}

// ------------------------------------------------------------------ summary

namespace {

// A row of the summary: on-host and inter-host echo of one size sit together (their plot
// family is the same).
struct SummaryRowKey {
  std::string profile;
  int bench_rank;
  std::string family;
  double bytes;
  int nodes, tasks, placement;
  std::string run_name, benchmark;
  bool operator<(const SummaryRowKey& o) const {
    return std::tie(profile, bench_rank, family, bytes, nodes, tasks, placement, run_name) <
           std::tie(o.profile, o.bench_rank, o.family, o.bytes, o.nodes, o.tasks, o.placement, o.run_name);
  }
};

// Some point ran on more emulated hosts than the machine has cores: the summary gets a
// column saying how many shared each core (only then, so other tables stay as they were).
int max_nodes(const CampaignResults& results) {
  int most = 0;
  for (const auto& m : results.medians) most = std::max(most, m.nodes);
  return most;
}

bool any_crowded(const CampaignResults& results) {
  return std::any_of(results.medians.begin(), results.medians.end(),
                     [&](const PointMedian& m) { return results.machine.crowded(m.nodes); });
}

// Some cop point has the emulation's floor beside it (the emulation benchmark ran): the
// summary gets the floor and cop ÷ floor (only then, so other tables stay as they were).
bool any_floor(const CampaignResults& results) {
  const auto& ms = results.medians;
  if (std::none_of(ms.begin(), ms.end(), [](const PointMedian& m) { return m.counters.count("floor_us") > 0; }))
    return false;
  return std::any_of(ms.begin(), ms.end(), [&](const PointMedian& m) { return cop_floor_of(results, m).has_value(); });
}

std::set<SummaryRowKey> summary_rows(const CampaignResults& results) {
  std::set<SummaryRowKey> keys;
  const auto& all = all_benchmarks();
  for (const auto& m : results.medians) {
    int rank = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i]->name() == m.benchmark) rank = static_cast<int>(i);
    keys.insert(SummaryRowKey{m.mode.profile, rank, m.plot_family, m.bytes.value_or(-1), m.nodes, m.tasks,
                              placement_rank(m.placement), m.run_name, m.benchmark});
  }
  return keys;
}

std::vector<std::string> summary_row(const CampaignResults& results, const SummaryRowKey& k,
                                     const std::vector<BackendMode>& columns, bool with_floor) {
  std::vector<std::string> row = {k.benchmark, k.run_name, std::to_string(k.nodes)};
  if (any_crowded(results)) row.push_back(results.machine.crowded(k.nodes) ? results.machine.per_core(k.nodes) : "—");
  if (results.multi_tasks) row.push_back(std::to_string(k.tasks));
  if (results.multi_profile) row.push_back(k.profile);
  std::map<BackendMode, double> values, modelled;
  std::optional<double> floor, cop;  // the emulation's floor beside the best cop mode
  for (BackendMode v : columns) {
    v.profile = k.profile;
    if (const PointMedian* m = results.find(v, k.run_name, k.nodes, k.tasks)) {
      values[v] = m->median_us;
      if (m->modelled_us) modelled[v] = *m->modelled_us;
      if (auto f = cop_floor_of(results, *m); f && (!cop || m->median_us < *cop)) cop = m->median_us, floor = f;
      row.push_back(format_number(m->median_us) + (m->ci_met ? "" : " !"));
    } else {
      row.push_back(results.missing_cell(v, k.benchmark, k.nodes, k.tasks));
    }
  }
  for (const auto& c : ratio_cells(values, modelled, k.profile)) row.push_back(c);
  if (with_floor) {
    row.push_back(floor ? format_number(*floor) : "—");
    row.push_back(floor && *floor > 0 ? format_ratio(*cop / *floor) : "—");
  }
  return row;
}

}  // namespace

ReportTable summary_table(const CampaignResults& results, const std::string& campaign_name) {
  ReportTable t;
  t.title = "all points (median µs per operation)";
  t.description = fmt::format("Every point of campaign {}: the median of the kept repetitions, in µs, for each backend and mode. "
                              "`!` marks a point whose 95 % confidence interval missed 10 % of the mean.",
                              campaign_name);
  t.header = {"benchmark", "point", "nodes"};
  if (any_crowded(results)) t.header.push_back("emulated hosts per core");
  // Only a campaign with several tasks per node somewhere has the column, so older tables stay as they were.
  if (results.multi_tasks) t.header.push_back("tasks per node");
  if (results.multi_profile) t.header.push_back("profile");
  // One row per profile: columns are the backend modes of that profile.
  const std::vector<BackendMode> columns = results.column_modes();
  for (const auto& v : columns) t.header.push_back(results.label(v, false) + " µs");
  for (const auto& h : ratio_header()) t.header.push_back(h);
  const bool with_floor = any_floor(results);
  if (with_floor) t.header.insert(t.header.end(), {"cop floor µs", "cop ÷ floor"});
  for (const auto& k : summary_rows(results)) t.rows.push_back(summary_row(results, k, columns, with_floor));
  t.notes = {"X ÷ cop: the best mode of backend X divided by the cop modelled-hardware time (the thesis's comparison of "
             "measured libpvm with modelled libcop); — where either is missing.",
             "not offered: the backend lacks an operation the benchmark needs (or is not built yet); see index.md for reasons."};
  if (with_floor)
    t.notes.push_back("cop floor: the same operation on the transport the emulated COP runs on, through a bare controller "
                      "process (the emulation benchmark, at the same nodes; tables/emulation.md); cop ÷ floor: the best "
                      "cop mode over it. Near 1 the transport is what cop measures, well above the emulation's own work.");
  if (any_crowded(results))
    t.notes.push_back(fmt::format("emulated hosts per core: the nodes were emulated hosts sharing the machine's {} cores "
                                  "(e.g. {}); {}.",
                                  results.machine.cpus, results.machine.text(max_nodes(results)), HostsOnCores::kNote));
  if (results.multi_tasks)
    t.notes.push_back("tasks per node T: nodes x T ranks, T on each node; echo with T > 1 measures rank 0 with rank 1 on its own "
                      "node (on-host) and with the first rank of the last node (inter-host); echo/size:N (T = 1) is inter-host.");
  return t;
}

// ------------------------------------------------------------------ thesis Table V

namespace {

const std::vector<std::pair<std::string, std::string>> kMdParts = {
    {"multicast", "multicast"}, {"reduction", "reduction"}, {"barrier", "barrier"}, {"point_to_point", "point-to-point"}};

std::vector<std::string> md_header(const CampaignResults& results) {
  std::vector<std::string> h = {"point", "nodes"};
  if (results.multi_tasks) h.push_back("tasks per node");
  if (results.multi_profile) h.push_back("profile");
  h.push_back("backend");
  for (const auto& [key, name] : kMdParts) h.push_back(name);
  h.insert(h.end(), {"communication", "computation"});
  for (const auto& [key, name] : kMdParts) h.push_back("COP speedup " + name);
  h.insert(h.end(), {"COP normalized total", "projected COP speedup", "measured COP speedup", "median run µs"});
  return h;
}

// The thesis's row (pvm, 5 hosts).
std::vector<std::string> md_published_row(const CampaignResults& results) {
  std::vector<std::string> published = {"EGO alanin 66 atoms x 256 steps", "5"};
  if (results.multi_tasks) published.push_back("—");
  if (results.multi_profile) published.push_back("(thesis)");
  published.insert(published.end(), {"published libpvm", "0.16", "0.14", "0.04", "0.06", "0.40", "0.60", "24x", "4.00x",
                                     "1000x", "30.0x", "0.644", "1.55x", "—", "—"});
  return published;
}

std::vector<std::string> md_row(const CampaignResults& results, const PointMedian* m) {
  auto counter = [m](const std::string& k) -> std::optional<double> {
    auto it = m->counters.find(k);
    if (it == m->counters.end()) return std::nullopt;
    return it->second;
  };
  auto cell = [](std::optional<double> v, bool as_ratio = false) {
    return v ? (as_ratio ? format_ratio(*v) : format_number(*v)) : "—";
  };
  std::vector<std::string> row = {m->run_name, std::to_string(m->nodes)};
  if (results.multi_tasks) row.push_back(std::to_string(m->tasks));
  if (results.multi_profile) row.push_back(m->mode.profile);
  row.push_back(results.label(m->mode));
  for (const auto& [key, name] : kMdParts) row.push_back(cell(counter("frac_" + key)));
  row.push_back(cell(counter("frac_communication")));
  row.push_back(cell(counter("frac_computation")));
  // The COP columns: projected here from the calls md recorded (cop_projection.h); results
  // written before md recorded them carry the projection as counters.
  std::vector<std::string> parts;
  for (const auto& [key, name] : kMdParts) parts.push_back(key);
  const std::optional<CopProjection> cop = cop_projection(*m, parts);
  for (const auto& [key, name] : kMdParts)
    row.push_back(cell(cop ? std::optional<double>(cop->speedup.at(key)) : counter("cop_speedup_" + key), true));
  row.push_back(cell(cop ? std::optional<double>(cop->frac_total) : counter("cop_frac_total")));
  row.push_back(cell(cop ? std::optional<double>(cop->speedup_total) : counter("projected_cop_speedup"), true));
  std::optional<double> cop_time;
  for (const auto& o : results.medians)
    if (o.benchmark == m->benchmark && o.mode.backend == studied_backend().name && o.run_name == m->run_name && o.nodes == m->nodes &&
        o.tasks == m->tasks && o.mode.profile == m->mode.profile && (!cop_time || o.median_us < *cop_time))
      cop_time = o.median_us;
  row.push_back(cop_time && *cop_time > 0 ? format_ratio(m->median_us / *cop_time) : "—");
  row.push_back(format_number(m->median_us) + (m->ci_met ? "" : " !"));
  return row;
}

}  // namespace

// One row per md point, node count and backend mode: the fractions of time per operation
// averaged over tasks, and the projected COP speedup computed Table V's way (each fraction
// divided by that part's measured ÷ modelled-COP time, cop_projection.h) beside the
// measured one (this run's time ÷ cop's at the same point, nodes and profile).
std::optional<ReportTable> md_table_v(const CampaignResults& results) {
  std::vector<const PointMedian*> md;
  for (const auto& m : results.medians)
    if (traits_of(m).time_breakdown) md.push_back(&m);  // md
  if (md.empty()) return std::nullopt;
  std::sort(md.begin(), md.end(), [](auto* a, auto* b) {
    return std::tie(a->mode.profile, a->run_name, a->nodes, a->tasks, a->mode) <
           std::tie(b->mode.profile, b->run_name, b->nodes, b->tasks, b->mode);
  });
  ReportTable t;
  t.title = "thesis Table V: molecular dynamics time breakdown (md)";
  t.source = "seed 000 (Sankaran 1995) Table V, EGO on 5 hosts, libpvm measured and libcop projected";
  t.description = "Fractions of the run time per operation, averaged over the control and slave tasks (last run of each "
                  "point). COP speedup per part = measured time ÷ modelled COP time of the same calls (ch. VI expressions, "
                  "Hall's timings). Projected = 1 ÷ (computation + Σ fraction ÷ speedup), Table V's way; measured = this "
                  "backend's median run ÷ cop's median run at the same point.";
  t.header = md_header(results);
  t.rows.push_back(md_published_row(results));
  for (const PointMedian* m : md) t.rows.push_back(md_row(results, m));
  t.notes = {"measured COP speedup: — until the cop backend has run the same point (best cop mode).",
             "armci has no multicast: md uses its broadcast there (label multicast_via=broadcast in the raw JSON)."};
  return t;
}

}  // namespace copbench::report
