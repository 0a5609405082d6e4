// `copbench report DIR`: tables, plots and an index from a campaign directory.
//
// Every number printed comes from raw/*.json (our measurements, the COP modelled time
// where the JSON has `modelled_us`) or reference/*.csv (the seeds' published numbers);
// every row, column and curve is sorted, and nothing depends on the clock, so running
// the report again on the same directory writes the same tables.
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "copbench/campaign.h"
#include "copbench/results.h"
#include "report/report_parts.h"
#include "report/validation.h"
#include "report/what_if.h"

namespace copbench::report {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json load_manifest(const fs::path& dir) {
  fs::path manifest = dir / campaign::kManifest;
  if (!fs::exists(manifest))
    throw std::runtime_error(fmt::format("{}: no {} (not a campaign directory)", dir.string(), campaign::kManifest));
  try {
    return json::parse(read_text(manifest));
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{} is not valid JSON", manifest.string()));
  }
}

// The seed table `stem`: the campaign directory's copy, else the one in `reference_dir`.
fs::path seed_table_file(const ReportOptions& o, const std::string& stem) {
  fs::path copy = o.dir / campaign::kReferenceCopy / (stem + ".csv");
  return fs::exists(copy) ? copy : o.reference_dir / (stem + ".csv");
}

// The published in-network latencies (the reference rows of the what-if table): the
// campaign directory's copy, else the one in `reference_dir`; none where neither exists.
std::vector<InNetworkRow> in_network_rows(const ReportOptions& o) {
  const fs::path file = seed_table_file(o, fs::path(kInNetworkFile).stem().string());
  return fs::exists(file) ? load_in_network_rows(file) : std::vector<InNetworkRow>{};
}

using NamedTables = std::vector<std::pair<std::string, ReportTable>>;  // file stem, table

NamedTables build_tables(const ReportOptions& o, const json& manifest, const CampaignResults& results,
                         const CampaignResults& measured, const std::string& name, const fs::path& out,
                         ReportOutput& result) {
  NamedTables tables;
  tables.emplace_back("summary", summary_table(results, name));
  if (auto md = md_table_v(results)) tables.emplace_back(std::string("md-table5"), std::move(*md));
  for (const auto& t : manifest.value("compare", std::vector<std::string>{}))
    tables.emplace_back(t, seed_table(results, t, load_seed_cells(seed_table_file(o, t))));
  // After the seeds' tables: a campaign that compares with one keeps it as its default main table.
  if (auto m = methods_table(o.dir)) tables.emplace_back(std::string("methods"), std::move(*m));
  if (auto e = emulation_table(results)) tables.emplace_back(std::string("emulation"), std::move(*e));
  if (auto v = validation_table(results, measured)) tables.emplace_back("simulation", std::move(*v));
  if (auto w = what_if_table(results, in_network_rows(o))) {
    tables.emplace_back("what-if", std::move(*w));
    tables.emplace_back("what-if-crossover", std::move(*what_if_crossover_table(results)));
  }
  if (auto ref = reference_campaign_table(manifest, o.dir, result)) {
    tables.emplace_back(std::string(kReferenceTable), std::move(*ref));
  } else {
    // No comparison this time: a table left by an earlier report would be stale.
    std::error_code ec;
    for (const char* ext : {".md", ".csv"}) fs::remove(out / "tables" / (std::string(kReferenceTable) + ext), ec);
  }
  return tables;
}

void write_tables(const NamedTables& tables, const std::string& name, const std::string& main, const fs::path& out,
                  ReportOutput& result) {
  for (const auto& [stem, table] : tables) {
    fs::path md = out / "tables" / (stem + ".md"), csv = out / "tables" / (stem + ".csv");
    write_file_atomically(md, "# " + name + ": " + table.title + "\n\n" + table.markdown().substr(3 + table.title.size() + 2));
    write_file_atomically(csv, table.csv());
    if (!table.pairing_header.empty())
      write_file_atomically(out / "tables" / (stem + ".pairing.csv"), ReportTable::csv_of(table.pairing_header, table.pairing));
    result.tables.push_back(md);
    if (stem == main) {
      result.main_title = table.title;
      result.main_table = table.markdown();
    }
  }
}

// The campaign: its manifest's description and facts, and links to its own files.
std::string index_head(const IndexInputs& in) {
  const json& m = in.manifest;
  std::string s = "# Campaign " + in.name + "\n\n";
  if (!m.value("description", std::string()).empty()) s += m["description"].get<std::string>() + "\n\n";
  auto get = [&](const json& j, const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string("?"); };
  s += "| | |\n|---|---|\n";
  s += "| created | " + get(m, "created") + " |\n";
  s += "| commit | " + get(m, "commit") + " |\n";
  if (m.contains("machine"))
    s += fmt::format("| machine | {} ({}, {} CPUs, {}) |\n", get(m["machine"], "host"), get(m["machine"], "os"),
                     m["machine"].value("cpus", 0), get(m["machine"], "memory"));
  if (m.contains("cluster")) {
    const int size = m["cluster"].value("size", 0);
    const HostsOnCores& machine = in.results.machine;
    s += fmt::format("| cluster | {} ({} nodes{}) |\n", get(m["cluster"], "name"), size,
                     machine.crowded(size) ? "; " + machine.text(size) + " — " + HostsOnCores::kNote : "");
  }
  s += "| profiles | " + in.results.profile_text() + " |\n";
  s += fmt::format("| points | {} measured, {} not run |\n", in.results.count_done(), in.results.statuses.size());
  s += collective_method_row(in.options.collective_method, in.results);
  s += whole_runs_row(in.results);
  // The campaign's own files stay in its directory: links are relative to where index.md is.
  auto in_campaign = [&](const std::string& file) {
    return fs::weakly_canonical(in.options.dir / file).lexically_relative(fs::weakly_canonical(in.out)).generic_string();
  };
  s += fmt::format(
      "\nManifest (machine, commit, cluster, profile, package versions): [manifest.json]({}); "
      "campaign file: [campaign.yml]({}); log: [campaign.log]({}); raw Google Benchmark JSON: {}/.\n\n",
      in_campaign(campaign::kManifest), in_campaign(campaign::kCampaignCopy), in_campaign(campaign::kLog),
      in_campaign(campaign::kRawDir));
  return s;
}

}  // namespace

std::string index_markdown(const IndexInputs& in, const ReportOutput& result) {
  std::string s = index_head(in);
  s += "## Tables\n\n";
  for (const auto& [stem, t] : in.tables)
    s += fmt::format("- [{}](tables/{}.md) ([CSV](tables/{}.csv){}){}\n", t.title, stem, stem,
                     t.pairing_header.empty() ? "" : fmt::format(", [points read](tables/{}.pairing.csv)", stem),
                     stem == in.main ? " — main table" : "");
  if (!result.reference_summary.empty() || !result.reference_problem.empty()) {
    s += "\n## Against the reference campaign\n\n";
    if (!result.reference_summary.empty())
      s += fmt::format("Every point {}: [table](tables/{}.md) ([CSV](tables/{}.csv)).\n", result.reference_summary,
                       kReferenceTable, kReferenceTable);
    else
      s += result.reference_problem + "\n";
  }
  s += "\n## Plots\n\n";
  if (!result.plot_problem.empty()) s += result.plot_problem + "\n\n";
  for (const auto& [stem, title] : in.plots)
    s += fmt::format("### {}\n\n![{}](plots/{}.png)\n\n[SVG](plots/{}.svg) · [data](plots/{}.dat) · [gnuplot](plots/{}.gp)\n\n",
                     title, stem, stem, stem, stem, stem);
  if (!in.results.statuses.empty()) {
    s += "## Points that did not run\n\n| point | status | reason |\n|---|---|---|\n";
    for (const auto& st : in.results.statuses) s += fmt::format("| {} | {} | {} |\n", st.point, st.status, st.reason);
  }
  return s;
}

std::string collective_method_row(const std::string& method, const CampaignResults& results) {
  long calls = 0, invalid = 0;
  int points = 0, others = 0;
  std::set<std::string> shown;  // the other methods shown in its place
  double bound = 0;
  for (const PointMedian& m : results.medians) {
    if (m.method.empty()) continue;
    (m.method == method ? points : others) += 1;
    if (m.method != method) shown.insert(m.method);
    calls += m.timed_calls;
    invalid += m.invalid_calls;
    bound = std::max(bound, m.clock_bound_us);
  }
  std::string s = "| collectives | ";
  if (method == "loop") s += "loop method (IMB, OSU): the calls back to back, loop time / n, maximum over ranks";
  if (method == "sync") s += "sync method (thesis ch. VI): a sync before each timed call, per-call maximum over ranks";
  if (method == "window")
    s += fmt::format("window method (ReproMPI, MPIX_Harmonize): every rank starts each call at one instant of a common "
                     "clock, per call the last rank's end minus that instant; {} of {} calls invalid (a rank late for "
                     "its instant: left out); largest common-clock error bound {:.3g} us",
                     invalid, calls, bound);
  if (others > 0)
    s += fmt::format("; {} collective point(s) have no {} twin (a result from before the window method, or a run "
                     "whose methods: left it out) and show the {} method",
                     others, method, fmt::join(shown, " or "));
  return s + " |\n";
}

std::string whole_runs_row(const CampaignResults& results) {
  long runs = 0, invalid = 0;
  int points = 0;
  for (const PointMedian& m : results.medians) {
    if (!m.method.empty() || m.timed_calls == 0) continue;  // a collective's, or not by the window method
    ++points;
    runs += m.timed_calls;
    invalid += m.invalid_calls;
  }
  if (points == 0) return "";
  return fmt::format("| whole runs | window method ({} point(s): the applications'): every rank starts each run at "
                     "one instant of a common clock, a run's time is the last rank's end minus that instant; {} of {} "
                     "runs invalid (a rank late for its instant: left out) |\n",
                     points, invalid, runs);
}

ReportOutput make_report(const ReportOptions& o) {
  if (!fs::is_directory(o.dir)) throw std::runtime_error(fmt::format("{}: no such directory", o.dir.string()));
  const fs::path out = o.out.empty() ? o.dir : o.out;
  const json manifest = load_manifest(o.dir);
  const std::string name = manifest.value("campaign", "campaign");
  if (o.collective_method != "window" && o.collective_method != "sync" && o.collective_method != "loop")
    throw std::runtime_error("collective method '" + o.collective_method + "' is none of window, sync, loop");
  const CampaignResults results = load_results(o.dir, o.collective_method);

  ReportOutput result;
  fs::create_directories(out / "tables");
  // The measured points the simulated ones are set beside: another directory's, or these.
  const CampaignResults measured = o.measured.empty() ? results : load_results(o.measured, o.collective_method);
  const NamedTables tables = build_tables(o, manifest, results, measured, name, out, result);
  std::string main = manifest.value("main_table", "");
  // The first table after the summary, never the reference campaign's (always the last).
  if (main.empty()) main = tables.size() > 1 && tables[1].first != kReferenceTable ? tables[1].first : "summary";
  write_tables(tables, name, main, out, result);
  std::vector<std::pair<std::string, std::string>> plots;  // stem, title
  if (o.plots) {
    std::vector<PlotSpec> specs = plan_plots(results, name);
    for (PlotSpec& p : validation_plots(results, measured, name)) specs.push_back(std::move(p));
    for (PlotSpec& p : emulation_plots(results, name)) specs.push_back(std::move(p));
    for (PlotSpec& p : what_if_plots(results, name)) specs.push_back(std::move(p));
    plots = draw_plots(specs, out, result);
  }
  result.index = out / "index.md";
  write_file_atomically(result.index, index_markdown(IndexInputs{manifest, results, o, out, name, main, tables, plots}, result));
  return result;
}

}  // namespace copbench::report
