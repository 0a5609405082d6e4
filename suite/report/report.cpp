// `copbench report DIR`: tables, plots and an index from a campaign directory.
//
// Every number printed comes from raw/*.json (our measurements, the COP modelled time
// where the JSON has `modelled_us`) or reference/*.csv (the seeds' published numbers);
// every row, column and curve is sorted, and nothing depends on the clock, so running
// the report again on the same directory writes the same tables.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fnmatch.h>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "copbench/bench.h"
#include "copbench/campaign.h"
#include "copbench/compare.h"
#include "copbench/report.h"
#include "copbench/results.h"

namespace copbench::report {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

// ------------------------------------------------------------------ inputs

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// One backend in one mode: a column of the tables, a curve of the plots.
struct Variant {
  std::string backend, route, encoding, profile;
  std::string label(bool with_profile) const {
    std::string s = backend;
    if (!route.empty()) s += "/" + route;
    if (!encoding.empty()) s += "/" + encoding;
    if (with_profile) s += " " + profile;
    return s;
  }
  // cop first (the system under study), then the baselines in the order the thesis names them.
  int rank() const {
    static const std::vector<std::string> order = {"cop", "pvm", "mpi", "armci"};
    auto it = std::find(order.begin(), order.end(), backend);
    return static_cast<int>(it - order.begin());
  }
  auto key() const { return std::make_tuple(profile, rank(), backend, route, encoding); }
  bool operator<(const Variant& o) const { return key() < o.key(); }
  bool operator==(const Variant& o) const { return key() == o.key(); }
};

// The median aggregate of one point of one result file.
struct Measure {
  std::string benchmark, run_name, family;
  // The family without its placement ("echo/on-host" -> "echo"): on-host and inter-host
  // echo are curves of one plot, like the thesis's Figure 15.
  std::string plot_family;
  std::string placement;  // the point's label placement=on-host|inter-host (echo), else ""
  Variant variant;
  int nodes = 0;
  int tasks = 1;  // tasks per node: a point with several is never mixed with one without
  std::optional<double> bytes;
  double median_us = 0;
  std::optional<double> modelled_us;
  bool ci_met = true;
  std::map<std::string, double> counters;
  std::string source;  // the raw file's stem
  bool loop = false;   // measured by the loop method (its name had method:loop/)
};

struct Status {
  std::string point, benchmark, status, reason;
  Variant variant;
  int nodes = 0;
  int tasks = 1;
};

// The family a run name belongs to: its name without the trailing size or node count.
std::string family_of(const std::string& run_name) {
  auto slash = run_name.rfind('/');
  if (slash == std::string::npos) return run_name;
  std::string last = run_name.substr(slash + 1);
  if (last.rfind("size:", 0) == 0 || last.rfind("nodes:", 0) == 0) return run_name.substr(0, slash);
  return run_name;
}

// A result's tasks per node: the context writes it as a string; results from before
// --tasks-per-node have none (one task per node).
int tasks_of(const json& ctx) {
  if (!ctx.contains("tasks_per_node")) return 1;
  const json& t = ctx["tasks_per_node"];
  int v = t.is_number() ? t.get<int>() : t.is_string() ? std::atoi(t.get<std::string>().c_str()) : 1;
  return v > 1 ? v : 1;
}

// One key of a Google Benchmark label ("placement=on-host other=x").
std::string label_value(const std::string& label, const std::string& key) {
  std::stringstream ss(label);
  std::string item;
  while (ss >> item)
    if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
  return "";
}

// Sorts on-host before inter-host before unplaced points of one variant.
int placement_rank(const std::string& placement) {
  if (placement == "on-host") return 0;
  if (placement == "inter-host") return 1;
  return 2;
}

const std::set<std::string> kStandardKeys = {"real_time", "cpu_time", "iterations", "threads", "repetitions",
                                             "repetition_index", "family_index", "per_family_instance_index",
                                             "discarded_reps", "ci95_half_us", "timer_overhead_us", "modelled_us"};

// A collective's points come both ways (suite/bench/common.h, measure_collective): the
// thesis's sync method under the plain name, the loop method of IMB and OSU with
// "method:loop/" before the last part. A report shows one: `method` "sync" drops the loop
// points; "loop" drops the sync points that have a loop twin and gives the loop points the
// plain name, so tables and the seeds' reference rows pair the same way for either.
constexpr const char* kLoopPart = "method:loop/";

std::vector<Measure> load_measures(const fs::path& raw_dir, const std::string& method) {
  std::vector<Measure> out;
  std::set<std::tuple<std::string, std::string, int, int, std::string>> loop_twins;  // file stem, run name, ...
  if (!fs::is_directory(raw_dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(raw_dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    json j;
    try {
      j = json::parse(read_file(f));
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("{} is not valid JSON", f.string()));
    }
    const json& ctx = j.at("context");
    Variant v{ctx.value("backend", ""), ctx.value("route", ""), ctx.value("encoding", ""), ctx.value("link_profile", "")};
    // A backend with a single way of working names it in `route`; only listed routes are modes.
    if (v.backend != "pvm" && v.backend != "cop") v.route.clear();
    std::string bench = ctx.value("copbench_benchmark", "");
    int nodes = std::atoi(ctx.value("nodes", "0").c_str());
    int tasks = tasks_of(ctx);
    for (const auto& b : j.at("benchmarks")) {
      if (b.value("run_type", "") != "aggregate" || b.value("aggregate_name", "") != "median") continue;
      Measure m;
      m.benchmark = bench;
      m.run_name = b.value("run_name", "");
      if (auto at = m.run_name.find(kLoopPart); at != std::string::npos) {
        if (method != "loop") continue;
        m.run_name.erase(at, std::string(kLoopPart).size());
        loop_twins.insert({f.stem().string(), m.run_name, nodes, tasks, bench});
      }
      m.family = family_of(m.run_name);
      m.source = f.stem().string();
      m.placement = label_value(b.value("label", ""), "placement");
      m.plot_family = m.family;
      const std::string placed = "/" + m.placement;
      if (!m.placement.empty() && m.family.size() > placed.size() &&
          m.family.compare(m.family.size() - placed.size(), placed.size(), placed) == 0)
        m.plot_family = m.family.substr(0, m.family.size() - placed.size());
      m.variant = v;
      m.nodes = nodes;
      m.tasks = tasks;
      m.median_us = b.value("real_time", 0.0);
      m.loop = b.value("run_name", std::string()).find(kLoopPart) != std::string::npos;
      // A zero modelled time means the operation did not touch the modelled hardware (cop's
      // echo goes through PVM): there is no modelled value to show.
      if (b.contains("modelled_us") && b["modelled_us"].get<double>() > 0) m.modelled_us = b["modelled_us"].get<double>();
      m.ci_met = b.value("ci_met", true);
      for (const auto& [k, val] : b.items())
        if (val.is_number() && !kStandardKeys.count(k)) m.counters[k] = val.get<double>();
      if (m.counters.count("bytes")) m.bytes = m.counters["bytes"];
      out.push_back(std::move(m));
    }
  }
  if (method == "loop")
    std::erase_if(out, [&](const Measure& m) {
      return !m.loop && loop_twins.count({m.source, m.run_name, m.nodes, m.tasks, m.benchmark}) > 0;
    });
  return out;
}

std::vector<Status> load_status(const fs::path& dir) {
  std::vector<Status> out;
  if (!fs::is_directory(dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    json j = json::parse(read_file(f));
    Status s;
    s.point = j.value("point", "");
    s.benchmark = j.value("benchmark", "");
    s.status = j.value("status", "");
    s.reason = j.value("reason", "");
    s.variant = Variant{j.value("backend", ""), j.value("route", ""), j.value("encoding", ""), j.value("profile", "")};
    s.nodes = j.value("nodes", 0);
    s.tasks = std::max(1, j.value("tasks_per_node", 1));
    out.push_back(std::move(s));
  }
  return out;
}

// A seed table as data: one published cell per line. The optional columns say what a
// row needs beyond its benchmarks (`needs`: operation names, as `copbench list` prints
// them), which benchmark writes the point a ratio divides by (`over_benchmark`, default
// `benchmark`), where our points are not the seed's method (`note`), and the spread the
// seed states for its number (`tolerance`, in the row's unit: "X" for value ± X, "-A+B"
// for value - A to value + B).
struct RefCell {
  std::string source, table, row, column, unit, benchmark, point, metric, backend;
  double value = 0;
  std::optional<int> nodes;
  std::string over_benchmark, note;
  std::vector<Op> needs;
  std::optional<std::pair<double, double>> spread;  // below, above the value
};

// "X" -> (X, X); "-A+B" -> (A, B); nullopt with `why` set on anything else.
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

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (ch == '"') quoted = false;
      else cur += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<RefCell> load_reference(const fs::path& file) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error(fmt::format("cannot read seed table {}", file.string()));
  std::string line;
  std::getline(f, line);
  std::vector<std::string> header = split_csv_line(line);
  auto col = [&](const std::string& name) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw std::runtime_error(fmt::format("{}: no column '{}'", file.string(), name));
    return static_cast<std::size_t>(it - header.begin());
  };
  std::size_t c_source = col("source"), c_table = col("table"), c_row = col("row"), c_column = col("column"),
              c_value = col("value"), c_unit = col("unit"), c_bench = col("benchmark"), c_point = col("point"),
              c_nodes = col("nodes"), c_metric = col("metric"), c_backend = col("backend");
  // Optional columns: tables copied into older campaign directories have none of them.
  auto optional_col = [&](const std::string& name) -> std::optional<std::size_t> {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) return std::nullopt;
    return static_cast<std::size_t>(it - header.begin());
  };
  std::optional<std::size_t> c_needs = optional_col("needs"), c_over = optional_col("over_benchmark"),
                             c_note = optional_col("note"), c_tolerance = optional_col("tolerance");
  std::vector<RefCell> out;
  int lineno = 1;
  while (std::getline(f, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> v = split_csv_line(line);
    if (v.size() != header.size())
      throw std::runtime_error(fmt::format("{}:{}: {} fields, the header has {}", file.string(), lineno, v.size(), header.size()));
    RefCell c{v[c_source], v[c_table], v[c_row], v[c_column], v[c_unit], v[c_bench], v[c_point], v[c_metric], v[c_backend], 0, {}, {}, {}, {}, {}};
    char* end = nullptr;
    c.value = std::strtod(v[c_value].c_str(), &end);
    if (v[c_value].empty() || *end) throw std::runtime_error(fmt::format("{}:{}: value '{}' is not a number", file.string(), lineno, v[c_value]));
    if (!v[c_nodes].empty()) c.nodes = std::atoi(v[c_nodes].c_str());
    if (c.metric.empty()) c.metric = "median";
    if (c_over) c.over_benchmark = v[*c_over];
    if (c_note) c.note = v[*c_note];
    if (c_tolerance && !v[*c_tolerance].empty()) {
      std::string why;
      c.spread = parse_spread(v[*c_tolerance], why);
      if (!c.spread) throw std::runtime_error(fmt::format("{}:{}: {}", file.string(), lineno, why));
    }
    if (c_needs) {
      std::stringstream ss(v[*c_needs]);
      std::string name;
      while (ss >> name) {
        auto op = std::find_if(std::begin(kAllOps), std::end(kAllOps), [&](Op o) { return op_name(o) == name; });
        if (op == std::end(kAllOps))
          throw std::runtime_error(fmt::format("{}:{}: unknown operation '{}' in needs", file.string(), lineno, name));
        c.needs.push_back(*op);
      }
    }
    for (const std::string* name : {&c.benchmark, &c.over_benchmark})
      if (!name->empty() && !find_benchmark(*name))
        throw std::runtime_error(fmt::format("{}:{}: unknown benchmark '{}'", file.string(), lineno, *name));
    if (c.metric.rfind("ratio:", 0) == 0 && c.metric.size() == 6)
      throw std::runtime_error(fmt::format("{}:{}: metric 'ratio:' names no point", file.string(), lineno));
    out.push_back(std::move(c));
  }
  return out;
}

// ------------------------------------------------------------------ formatting

std::string num(double v) {
  double a = std::fabs(v);
  if (a == 0) return "0";
  if (a < 0.1) return fmt::format("{:.4f}", v);
  if (a < 100) return fmt::format("{:.2f}", v);
  if (a < 1000) return fmt::format("{:.1f}", v);
  return fmt::format("{:.0f}", v);
}

std::string ratio(double v) {
  if (v < 1) return fmt::format("{:.3g}x", v);
  if (v >= 100) return fmt::format("{:.0f}x", v);
  if (v >= 10) return fmt::format("{:.1f}x", v);
  return fmt::format("{:.2f}x", v);
}

std::string size_text(double bytes) { return format_size(static_cast<std::size_t>(bytes)); }

struct Table {
  std::string title, source, description;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  // A seed table's pairing: for each row and variant, the point(s) it read or divided.
  std::vector<std::string> pairing_header;
  std::vector<std::vector<std::string>> pairing;

  std::string markdown() const {
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
  // Drops the columns named `prefix...` that hold nothing ("—") in every row.
  void drop_empty_columns(const std::string& prefix) {
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
  std::string csv() const { return csv_of(header, rows); }
  static std::string csv_of(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
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
};

// ------------------------------------------------------------------ the report

class Report {
 public:
  Report(const ReportOptions& o) : o_(o) {
    out_ = o.out.empty() ? o.dir : o.out;
    fs::path manifest = o.dir / campaign::kManifest;
    if (!fs::exists(manifest))
      throw std::runtime_error(fmt::format("{}: no {} (not a campaign directory)", o.dir.string(), campaign::kManifest));
    try {
      manifest_ = json::parse(read_file(manifest));
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("{} is not valid JSON", manifest.string()));
    }
    name_ = manifest_.value("campaign", "campaign");
    if (o.collective_method != "sync" && o.collective_method != "loop")
      throw std::runtime_error("collective method '" + o.collective_method + "' is neither sync nor loop");
    measures_ = load_measures(o.dir / campaign::kRawDir, o.collective_method);
    status_ = load_status(o.dir / campaign::kStatusDir);
    for (const auto& m : measures_) variants_.insert(m.variant);
    for (const auto& s : status_) variants_.insert(s.variant);
    for (const auto& v : variants_) profiles_.insert(v.profile);
    multi_profile_ = profiles_.size() > 1;
    std::map<std::string, std::set<std::string>> encodings;
    for (const auto& v : variants_) encodings[v.backend].insert(v.encoding);
    for (const auto& [b, e] : encodings)
      if (e.size() > 1) multi_encoding_.insert(b);
    for (const auto& m : measures_) multi_tasks_ = multi_tasks_ || m.tasks > 1;
    for (const auto& st : status_) multi_tasks_ = multi_tasks_ || st.tasks > 1;
  }

  ReportOutput run() {
    ReportOutput result;
    fs::create_directories(out_ / "tables");
    std::vector<std::pair<std::string, Table>> tables;
    tables.emplace_back("summary", summary_table());
    if (auto md = md_table_v()) tables.emplace_back(std::string("md-table5"), std::move(*md));
    for (const auto& t : manifest_.value("compare", std::vector<std::string>{})) tables.emplace_back(t, seed_table(t));
    std::string main = manifest_.value("main_table", "");
    if (main.empty()) main = tables.size() > 1 ? tables[1].first : "summary";
    if (auto ref = reference_table(result)) {
      tables.emplace_back(std::string(kReferenceTable), std::move(*ref));
    } else {
      // No comparison this time: a table left by an earlier report would be stale.
      std::error_code ec;
      for (const char* ext : {".md", ".csv"}) fs::remove(out_ / "tables" / (std::string(kReferenceTable) + ext), ec);
    }
    for (const auto& [stem, table] : tables) {
      fs::path md = out_ / "tables" / (stem + ".md"), csv = out_ / "tables" / (stem + ".csv");
      write_file_atomically(md, "# " + name_ + ": " + table.title + "\n\n" + table.markdown().substr(3 + table.title.size() + 2));
      write_file_atomically(csv, table.csv());
      if (!table.pairing_header.empty())
        write_file_atomically(out_ / "tables" / (stem + ".pairing.csv"), Table::csv_of(table.pairing_header, table.pairing));
      result.tables.push_back(md);
      if (stem == main) {
        result.main_title = table.title;
        result.main_table = table.markdown();
      }
    }
    std::vector<std::pair<std::string, std::string>> plots;  // stem, title
    if (o_.plots) plots = draw_plots(result);
    result.index = out_ / "index.md";
    write_file_atomically(result.index, index(tables, main, plots, result.plot_problem, result));
    return result;
  }

  // ---------------------------------------------------------------- reference campaign

  static constexpr const char* kReferenceTable = "reference-campaign";

  // The campaign's `reference:` and `tolerance:`: from the manifest (a run writes the
  // resolved directory there), else from the campaign file's copy, a relative directory
  // resolved against where the campaign file was (the manifest's `file`).
  std::optional<std::pair<fs::path, std::string>> reference_of(std::string& problem) const {
    const json& m = manifest_;
    if (m.contains(campaign::kManifestReference) && m[campaign::kManifestReference].is_string()) {
      fs::path p = m[campaign::kManifestReference].get<std::string>();
      std::string tol = m.contains(campaign::kManifestTolerance) && m[campaign::kManifestTolerance].is_string()
                            ? m[campaign::kManifestTolerance].get<std::string>()
                            : "10%";
      return std::make_pair(p.is_relative() ? o_.dir / p : p, tol);
    }
    fs::path copy = o_.dir / campaign::kCampaignCopy;
    if (!fs::exists(copy)) return std::nullopt;
    try {
      YAML::Node root = YAML::LoadFile(copy.string());
      if (!root.IsMap() || !root["reference"]) return std::nullopt;
      fs::path p = root["reference"].as<std::string>();
      std::string tol = root["tolerance"] ? root["tolerance"].as<std::string>() : "10%";
      if (p.is_relative()) {
        fs::path base = m.contains("file") && m["file"].is_string() ? fs::path(m["file"].get<std::string>()).parent_path() : o_.dir;
        p = base / p;
      }
      return std::make_pair(p, tol);
    } catch (const YAML::Exception& e) {
      problem = fmt::format("{}: {}: no comparison with a reference campaign", copy.string(), e.what());
      return std::nullopt;
    }
  }

  // Every point of this campaign against the reference campaign's, with copbench compare's
  // verdicts. The report is not a gate: `copbench compare REF DIR` is (its exit code).
  std::optional<Table> reference_table(ReportOutput& result) const {
    std::string problem;
    auto ref = reference_of(problem);
    if (!ref) {
      result.reference_problem = problem;
      return std::nullopt;
    }
    const fs::path dir = ref->first.lexically_normal();
    // Shown relative to this campaign directory, so a report does not depend on where the two live.
    const std::string shown = fs::weakly_canonical(dir).lexically_proximate(fs::weakly_canonical(o_.dir)).generic_string();
    std::vector<compare::Row> rows;
    double tolerance = 0;
    try {
      tolerance = compare::parse_tolerance(ref->second);
      if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + ": no such directory");
      rows = compare::compare(compare::load_medians(dir), compare::load_medians(o_.dir), tolerance);
    } catch (const std::exception& e) {
      result.reference_problem = fmt::format("reference campaign {}: {}: no comparison table", shown, e.what());
      return std::nullopt;
    }
    std::string ref_name;
    try {
      ref_name = json::parse(read_file(dir / campaign::kManifest)).value("campaign", "");
    } catch (const std::exception&) {
    }
    Table t;
    t.title = "every point against the reference campaign" + (ref_name.empty() ? "" : " " + ref_name);
    t.source = "reference campaign directory " + shown + " (relative to this campaign directory)";
    const std::string tol = fmt::format("{:g} %", tolerance * 100);
    t.description = fmt::format(
        "Each point's median µs in the reference campaign and in this one, this ÷ reference, and a verdict with a "
        "tolerance of {}: slower or faster beyond the tolerance, same within it, or missing on one side (in old: not in "
        "the reference; in new: not in this campaign). The report is not a gate; `copbench compare {} . --tolerance {}`, "
        "run in this campaign directory, is: it exits 3 when a point got slower beyond the tolerance.",
        tol, shown, ref->second);
    t.header = {"point", "reference µs", "this campaign µs", "this ÷ reference", "verdict"};
    for (const auto& r : rows)
      t.rows.push_back({r.point, r.old_us ? num(*r.old_us) : "—", r.new_us ? num(*r.new_us) : "—",
                        r.ratio > 0 ? fmt::format("{:.3f}", r.ratio) : "—", compare::verdict_name(r.verdict)});
    t.notes = {compare::summary(rows) + fmt::format(" (tolerance {}).", tol)};
    result.reference_summary = fmt::format("against the reference campaign {} (tolerance {}): {}", shown, tol, compare::summary(rows));
    return t;
  }

 private:
  std::string variant_label(const Variant& v) const { return label(v, multi_profile_); }
  // A backend measured with one encoding throughout is named without it.
  std::string label(Variant v, bool with_profile) const {
    if (!multi_encoding_.count(v.backend)) v.encoding.clear();
    return v.label(with_profile);
  }

  const Measure* find(const Variant& v, const std::string& run_name, int nodes, int tasks) const {
    for (const auto& m : measures_)
      if (m.variant == v && m.run_name == run_name && m.nodes == nodes && m.tasks == tasks) return &m;
    return nullptr;
  }

  // "not offered" / "skipped" / "failed" when the point of this cell did not run.
  std::string missing_cell(const Variant& v, const std::string& benchmark, int nodes, int tasks) const {
    for (const auto& s : status_)
      if (s.variant == v && s.benchmark == benchmark && s.nodes == nodes && s.tasks == tasks) return s.status;
    return "—";
  }

  // The best (smallest) value of a backend over its modes, and the cop modelled value.
  static std::optional<double> best_of(const std::map<Variant, double>& values, const std::string& backend, const std::string& profile) {
    std::optional<double> best;
    for (const auto& [v, x] : values)
      if (v.backend == backend && v.profile == profile && (!best || x < *best)) best = x;
    return best;
  }

  std::vector<std::string> ratio_header() const { return {"cop modelled µs", "pvm ÷ cop", "mpi ÷ cop", "armci ÷ cop"}; }

  // The cop modelled time and the three ratios for one row, by profile of the row.
  std::vector<std::string> ratio_cells(const std::map<Variant, double>& values, const std::map<Variant, double>& modelled,
                                       const std::string& profile) const {
    std::optional<double> cop = best_of(modelled, "cop", profile);
    std::vector<std::string> cells = {cop ? num(*cop) : "—"};
    for (const char* b : {"pvm", "mpi", "armci"}) {
      std::optional<double> x = best_of(values, b, profile);
      cells.push_back(cop && x && *cop > 0 ? ratio(*x / *cop) : "—");
    }
    return cells;
  }

  Table summary_table() const {
    Table t;
    t.title = "all points (median µs per operation)";
    t.description = fmt::format("Every point of campaign {}: the median of the kept repetitions, in µs, for each backend and mode. "
                                "`!` marks a point whose 95 % confidence interval missed 10 % of the mean.",
                                name_);
    t.header = {"benchmark", "point", "nodes"};
    // Only a campaign with several tasks per node somewhere has the column, so older tables stay as they were.
    if (multi_tasks_) t.header.push_back("tasks per node");
    if (multi_profile_) t.header.push_back("profile");
    std::vector<Variant> cols;
    for (const auto& v : variants_) cols.push_back(v);
    // One row per profile: columns are the variants of that profile.
    std::map<std::string, std::vector<Variant>> by_profile;
    for (const auto& v : cols) by_profile[v.profile].push_back(v);
    std::vector<Variant> header_variants;
    for (const auto& v : cols) {
      Variant w = v;
      w.profile.clear();
      if (std::find(header_variants.begin(), header_variants.end(), w) == header_variants.end()) header_variants.push_back(w);
    }
    std::sort(header_variants.begin(), header_variants.end());
    for (const auto& v : header_variants) t.header.push_back(label(v, false) + " µs");
    for (const auto& h : ratio_header()) t.header.push_back(h);

    // On-host and inter-host echo of one size sit together (their plot family is the same).
    struct RowKey {
      std::string profile;
      int bench_rank;
      std::string family;
      double bytes;
      int nodes, tasks, placement;
      std::string run_name, benchmark;
      bool operator<(const RowKey& o) const {
        return std::tie(profile, bench_rank, family, bytes, nodes, tasks, placement, run_name) <
               std::tie(o.profile, o.bench_rank, o.family, o.bytes, o.nodes, o.tasks, o.placement, o.run_name);
      }
    };
    std::set<RowKey> keys;
    for (const auto& m : measures_) {
      int rank = 0;
      const auto& all = all_benchmarks();
      for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i]->name() == m.benchmark) rank = static_cast<int>(i);
      keys.insert(RowKey{m.variant.profile, rank, m.plot_family, m.bytes.value_or(-1), m.nodes, m.tasks,
                         placement_rank(m.placement), m.run_name, m.benchmark});
    }
    for (const auto& k : keys) {
      std::vector<std::string> row = {k.benchmark, k.run_name, std::to_string(k.nodes)};
      if (multi_tasks_) row.push_back(std::to_string(k.tasks));
      if (multi_profile_) row.push_back(k.profile);
      std::map<Variant, double> values, modelled;
      for (Variant v : header_variants) {
        v.profile = k.profile;
        const Measure* m = find(v, k.run_name, k.nodes, k.tasks);
        if (m) {
          values[v] = m->median_us;
          if (m->modelled_us) modelled[v] = *m->modelled_us;
          row.push_back(num(m->median_us) + (m->ci_met ? "" : " !"));
        } else {
          row.push_back(missing_cell(v, k.benchmark, k.nodes, k.tasks));
        }
      }
      for (const auto& c : ratio_cells(values, modelled, k.profile)) row.push_back(c);
      t.rows.push_back(std::move(row));
    }
    t.notes = {"X ÷ cop: the best mode of backend X divided by the cop modelled-hardware time (the thesis's comparison of "
               "measured libpvm with modelled libcop); — where either is missing.",
               "not offered: the backend lacks an operation the benchmark needs (or is not built yet); see index.md for reasons."};
    if (multi_tasks_)
      t.notes.push_back("tasks per node T: nodes x T ranks, T on each node; echo with T > 1 measures rank 0 with rank 1 on its own "
                        "node (on-host) and with the first rank of the last node (inter-host); echo/size:N (T = 1) is inter-host.");
    return t;
  }

  // Thesis Table V from the md application (apps/md): one row per md point, node count
  // and backend/mode, the fractions of time per operation averaged over tasks, and the
  // projected COP speedup computed Table V's way (each fraction divided by that part's
  // measured ÷ modelled-COP time) beside the measured one (this run's time ÷ cop's at the
  // same point, nodes and profile). The published row is the thesis's (pvm, 5 hosts).
  std::optional<Table> md_table_v() const {
    std::vector<const Measure*> md;
    for (const auto& m : measures_)
      if (m.benchmark == "md") md.push_back(&m);
    if (md.empty()) return std::nullopt;
    std::sort(md.begin(), md.end(), [](auto* a, auto* b) {
      return std::tie(a->variant.profile, a->run_name, a->nodes, a->tasks, a->variant) <
             std::tie(b->variant.profile, b->run_name, b->nodes, b->tasks, b->variant);
    });
    Table t;
    t.title = "thesis Table V: molecular dynamics time breakdown (md)";
    t.source = "seed 000 (Sankaran 1995) Table V, EGO on 5 hosts, libpvm measured and libcop projected";
    t.description = "Fractions of the run time per operation, averaged over the control and slave tasks (last run of each "
                    "point). COP speedup per part = measured time ÷ modelled COP time of the same calls (ch. VI expressions, "
                    "Hall's timings). Projected = 1 ÷ (computation + Σ fraction ÷ speedup), Table V's way; measured = this "
                    "backend's median run ÷ cop's median run at the same point.";
    t.header = {"point", "nodes"};
    if (multi_tasks_) t.header.push_back("tasks per node");
    if (multi_profile_) t.header.push_back("profile");
    const std::vector<std::pair<std::string, std::string>> parts = {
        {"multicast", "multicast"}, {"reduction", "reduction"}, {"barrier", "barrier"}, {"point_to_point", "point-to-point"}};
    t.header.push_back("backend");
    for (const auto& [key, name] : parts) t.header.push_back(name);
    t.header.insert(t.header.end(), {"communication", "computation"});
    for (const auto& [key, name] : parts) t.header.push_back("COP speedup " + name);
    t.header.insert(t.header.end(), {"COP normalized total", "projected COP speedup", "measured COP speedup", "median run µs"});

    std::vector<std::string> published = {"EGO alanin 66 atoms x 256 steps", "5"};
    if (multi_tasks_) published.push_back("—");
    if (multi_profile_) published.push_back("(thesis)");
    published.insert(published.end(), {"published libpvm", "0.16", "0.14", "0.04", "0.06", "0.40", "0.60", "24x", "4.00x",
                                       "1000x", "30.0x", "0.644", "1.55x", "—", "—"});
    t.rows.push_back(published);
    auto counter = [](const Measure* m, const std::string& k) -> std::optional<double> {
      auto it = m->counters.find(k);
      if (it == m->counters.end()) return std::nullopt;
      return it->second;
    };
    auto cell = [](std::optional<double> v, bool as_ratio = false) { return v ? (as_ratio ? ratio(*v) : num(*v)) : "—"; };
    for (const Measure* m : md) {
      std::vector<std::string> row = {m->run_name, std::to_string(m->nodes)};
      if (multi_tasks_) row.push_back(std::to_string(m->tasks));
      if (multi_profile_) row.push_back(m->variant.profile);
      row.push_back(variant_label(m->variant));
      for (const auto& [key, name] : parts) row.push_back(cell(counter(m, "frac_" + key)));
      row.push_back(cell(counter(m, "frac_communication")));
      row.push_back(cell(counter(m, "frac_computation")));
      for (const auto& [key, name] : parts) row.push_back(cell(counter(m, "cop_speedup_" + key), true));
      row.push_back(cell(counter(m, "cop_frac_total")));
      row.push_back(cell(counter(m, "projected_cop_speedup"), true));
      std::optional<double> cop_time;
      for (const auto& o : measures_)
        if (o.benchmark == "md" && o.variant.backend == "cop" && o.run_name == m->run_name && o.nodes == m->nodes &&
            o.tasks == m->tasks && o.variant.profile == m->variant.profile && (!cop_time || o.median_us < *cop_time))
          cop_time = o.median_us;
      row.push_back(cop_time && *cop_time > 0 ? ratio(m->median_us / *cop_time) : "—");
      row.push_back(num(m->median_us) + (m->ci_met ? "" : " !"));
      t.rows.push_back(std::move(row));
    }
    t.notes = {"measured COP speedup: — until the cop backend has run the same point (best cop mode).",
               "armci has no multicast: md uses its broadcast there (label multicast_via=broadcast in the raw JSON)."};
    return t;
  }

  static std::string at_nodes(std::string point, int nodes) {
    if (auto p = point.find("{nodes}"); p != std::string::npos) point.replace(p, 7, std::to_string(nodes));
    return point;
  }

  // Whether a backend offers everything a row needs: both sides' benchmarks and the row's
  // `needs` (a point a benchmark writes only where an optional operation is offered).
  static bool offered(const Variant& v, const RefCell& c) {
    const BackendSpec* spec = find_backend_spec(v.backend);
    if (!spec) return true;  // a backend this build does not know: its points speak for it
    for (const std::string* name : {&c.benchmark, &c.over_benchmark})
      if (const Benchmark* b = name->empty() ? nullptr : find_benchmark(*name); b && !missing_ops(*b, *spec).empty()) return false;
    for (Op op : c.needs)
      if (!spec->offers(op)) return false;
    return true;
  }

  // One row of a seed table for one variant: the point(s) it reads, our value or why there
  // is none. The seeds ran one task per host: only points with one task per node stand
  // beside them. A ratio divides two points of the same backend, mode, profile and node
  // count, never anything else.
  struct RowCell {
    std::string point, over;            // the point read (numerator) and the point divided by
    std::optional<double> value, modelled;
    std::string missing;                // why there is no value ("not offered", "failed", "—")
  };

  RowCell resolve(const RefCell& c, const Variant& v, int nodes) const {
    RowCell out;
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
    if (!offered(v, c)) {
      out.missing = "not offered";
      return out;
    }
    const Measure* m = find(v, out.point, nodes, 1);
    if (!m) {
      // Not run: the status of the numerator's point, else of the denominator's.
      out.missing = missing_cell(v, c.benchmark, nodes, 1);
      if (is_ratio && out.missing == "—") out.missing = missing_cell(v, over_bench, nodes, 1);
      return out;
    }
    if (c.metric == "median") {
      out.value = m->median_us;
      if (m->modelled_us) out.modelled = *m->modelled_us;
      return out;
    }
    if (!is_ratio) {
      auto it = m->counters.find(c.metric);
      if (it == m->counters.end()) out.missing = "—";
      else out.value = it->second;
      return out;
    }
    // The denominator: the named point, or for min(PATTERN) the point with the smallest
    // median among those whose name matches PATTERN (`*` = any characters), e.g. the best
    // window K of a windowed AllFence.
    const Measure* d = nullptr;
    if (over_min) {
      for (const auto& o : measures_)
        if (o.variant == v && o.nodes == nodes && o.tasks == 1 && fnmatch(over.c_str(), o.run_name.c_str(), 0) == 0 &&
            (!d || o.median_us < d->median_us || (o.median_us == d->median_us && o.run_name < d->run_name)))
          d = &o;
    } else {
      d = find(v, over, nodes, 1);
    }
    if (!d) {
      out.missing = missing_cell(v, over_bench, nodes, 1);
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

  // The node count we compare a seed row at: the seed's if we measured it, else the nearest.
  std::optional<int> nodes_for(const RefCell& c) const {
    std::set<int> have;
    for (const auto& m : measures_) {
      std::string point = c.point;
      if (auto p = point.find("{nodes}"); p != std::string::npos) point.replace(p, 7, std::to_string(m.nodes));
      if (m.benchmark == c.benchmark && m.run_name == point && m.tasks == 1) have.insert(m.nodes);
    }
    if (have.empty()) return std::nullopt;
    if (!c.nodes) return *have.rbegin();
    int best = *have.begin();
    for (int n : have)
      if (std::abs(n - *c.nodes) < std::abs(best - *c.nodes) || (std::abs(n - *c.nodes) == std::abs(best - *c.nodes) && n > best)) best = n;
    return best;
  }

  fs::path reference_file(const std::string& stem) const {
    fs::path copy = o_.dir / campaign::kReferenceCopy / (stem + ".csv");
    return fs::exists(copy) ? copy : o_.reference_dir / (stem + ".csv");
  }

  Table seed_table(const std::string& stem) const {
    std::vector<RefCell> cells = load_reference(reference_file(stem));
    Table t;
    t.title = stem;
    std::vector<std::string> rows, columns;
    for (const auto& c : cells) {
      if (std::find(rows.begin(), rows.end(), c.row) == rows.end()) rows.push_back(c.row);
      if (std::find(columns.begin(), columns.end(), c.column) == columns.end()) columns.push_back(c.column);
      if (t.source.empty()) t.source = c.source;
    }
    t.description = "Published: the seed's numbers as printed. Ours: the median (or the named counter) of this campaign's "
                    "point matching the row (benchmark, size, node count), per backend and mode; a ratio row divides two "
                    "points of the same backend, mode and node count. tables/" + stem + ".pairing.csv names the points "
                    "each cell read.";
    // One block of our columns per profile of the campaign.
    std::vector<std::string> profiles(profiles_.begin(), profiles_.end());
    std::vector<Variant> header_variants;
    for (const auto& v : variants_) {
      Variant w = v;
      w.profile.clear();
      if (std::find(header_variants.begin(), header_variants.end(), w) == header_variants.end()) header_variants.push_back(w);
    }
    std::sort(header_variants.begin(), header_variants.end());
    // Seed columns that stand for one of our backends get an "ours ÷ published" column. Each
    // row compares the backend its own cell names; a column whose rows name different
    // backends says so in every cell ("mpi: 0.70x").
    std::vector<std::pair<std::string, std::string>> mapped;  // column, backend ("" = per row)
    for (const auto& col : columns) {
      std::set<std::string> backends;
      for (const auto& c : cells)
        if (c.column == col && !c.backend.empty()) backends.insert(c.backend);
      if (!backends.empty()) mapped.emplace_back(col, backends.size() == 1 ? *backends.begin() : "");
    }
    // Seed columns with a stated spread in some row get a verdict column: ours within the
    // seed's spread or not. A table without tolerances has none (its layout stays as it was).
    std::vector<std::string> judged;
    for (const auto& col : columns)
      if (std::any_of(cells.begin(), cells.end(), [&](const RefCell& c) { return c.column == col && c.spread; }))
        judged.push_back(col);
    auto column_backend_of = [&](const std::string& col) {
      for (const auto& [c, b] : mapped)
        if (c == col) return b;
      return std::string();
    };

    t.header = {"row"};
    for (const auto& col : columns) t.header.push_back("published " + col);
    for (const auto& p : profiles) {
      std::string suffix = multi_profile_ ? " " + p : "";
      for (const auto& v : header_variants) t.header.push_back("ours " + label(v, false) + suffix);
      for (const auto& h : ratio_header()) t.header.push_back(h + suffix);
      for (const auto& [col, backend] : mapped)
        t.header.push_back(fmt::format("{} ÷ published {}{}", backend.empty() ? "ours" : backend, col, suffix));
      for (const auto& col : judged) t.header.push_back(fmt::format("verdict published {}{}", col, suffix));
    }
    t.header.push_back("unit");
    t.header.push_back("note");
    t.pairing_header = {"row", "profile", "backend", "nodes", "metric", "point", "divided by", "value"};

    for (const auto& row : rows) {
      std::vector<std::string> r = {row};
      const RefCell* key = nullptr;
      std::string unit;
      std::map<std::string, const RefCell*> by_column;
      for (const auto& c : cells)
        if (c.row == row) {
          by_column[c.column] = &c;
          if (!key && !c.benchmark.empty()) key = &c;
          if (unit.empty()) unit = c.unit;
        }
      for (const auto& col : columns) r.push_back(by_column.count(col) ? num(by_column[col]->value) : "");
      std::optional<int> nodes = key ? nodes_for(*key) : std::nullopt;
      const int at = nodes.value_or(0);
      std::vector<std::string> notes;
      if (!key) notes.push_back("no matching benchmark");
      else if (!nodes) notes.push_back("not measured in this campaign");
      else if (key->nodes && at != *key->nodes) notes.push_back(fmt::format("ours at {} nodes (seed: {})", at, *key->nodes));
      // The row's notes: its cells' notes, each once (a cell with a tolerance says where the seed states it).
      if (key && !key->note.empty()) notes.push_back(key->note);
      if (key)
        for (const auto& c : cells)
          if (c.row == row && !c.note.empty() && std::find(notes.begin(), notes.end(), c.note) == notes.end())
            notes.push_back(c.note);
      for (const auto& p : profiles) {
        std::map<Variant, double> values, modelled;
        for (Variant v : header_variants) {
          v.profile = p;
          RowCell cell;
          if (key && nodes) cell = resolve(*key, v, at);
          else cell.missing = "—";
          if (cell.value) {
            values[v] = *cell.value;
            if (cell.modelled) modelled[v] = *cell.modelled;
            r.push_back(num(*cell.value));
          } else {
            r.push_back(cell.missing);
          }
          if (key)
            t.pairing.push_back({row, p, label(v, false), nodes ? std::to_string(at) : "—", key->metric, cell.point,
                                 cell.over, cell.value ? num(*cell.value) : cell.missing});
        }
        if (key && key->metric == "median") {
          for (const auto& c : ratio_cells(values, modelled, p)) r.push_back(c);
        } else {
          for (std::size_t i = 0; i < ratio_header().size(); ++i) r.push_back("—");
        }
        for (const auto& [col, column_backend] : mapped) {
          const RefCell* pub = by_column.count(col) ? by_column[col] : nullptr;
          const std::string backend = pub && !pub->backend.empty() ? pub->backend : column_backend;
          if (!pub || backend.empty()) {
            r.push_back("—");
            continue;
          }
          std::optional<double> ours = best_of(backend == "cop" ? (modelled.empty() ? values : modelled) : values, backend, p);
          std::string text = ours && pub->value != 0 ? ratio(*ours / pub->value) : "—";
          r.push_back(column_backend.empty() ? backend + ": " + text : text);
        }
        for (const auto& col : judged) {
          const RefCell* pub = by_column.count(col) ? by_column[col] : nullptr;
          if (!pub || !pub->spread) {
            r.push_back("—");  // the seed states no spread for this number: no verdict
            continue;
          }
          const std::string backend = !pub->backend.empty() ? pub->backend : column_backend_of(col);
          if (!backend.empty()) {
            std::optional<double> ours = best_of(backend == "cop" ? (modelled.empty() ? values : modelled) : values, backend, p);
            r.push_back(ours ? verdict_text(*ours, *pub) : "—");
            continue;
          }
          // A seed column that stands for none of our backends: a verdict for each backend and mode.
          std::vector<std::string> each;
          for (Variant v : header_variants) {
            v.profile = p;
            auto m = modelled.find(v);
            auto x = values.find(v);
            if (v.backend == "cop" && m != modelled.end()) each.push_back(label(v, false) + ": " + verdict_text(m->second, *pub));
            else if (x != values.end()) each.push_back(label(v, false) + ": " + verdict_text(x->second, *pub));
          }
          r.push_back(each.empty() ? "—" : fmt::format("{}", fmt::join(each, "; ")));
        }
      }
      r.push_back(unit);
      r.push_back(fmt::format("{}", fmt::join(notes, "; ")));
      t.rows.push_back(std::move(r));
    }
    t.drop_empty_columns("ours ");
    t.notes = {"X ÷ cop: the best mode of backend X divided by the cop modelled-hardware time; X ÷ published C: our best mode "
               "of X divided by the seed's column C (for cop, its modelled time).",
               "The seeds' numbers are data in results/reference/" + stem + ".csv (copied into this campaign directory)."};
    if (!judged.empty())
      t.notes.push_back("verdict published C: ours (the best mode of the backend column C stands for; for cop its modelled "
                        "time; where C stands for none of ours, each backend and mode) against the spread the seed states "
                        "for its number (column tolerance of the CSV; the row's note says where the seed states it): within "
                        "the seed's spread, or outside with ours ÷ the seed's value; — where the seed states no spread.");
    return t;
  }

  // Ours against one published number with a stated spread.
  static std::string verdict_text(double ours, const RefCell& pub) {
    const double lo = pub.value - pub.spread->first, hi = pub.value + pub.spread->second;
    const double eps = 1e-9 * std::max({std::fabs(lo), std::fabs(hi), 1.0});  // the CSV's decimals, not a tolerance
    if (ours >= lo - eps && ours <= hi + eps) return "within the seed's spread";
    if (pub.value == 0) return "outside";
    return "outside (ours " + ratio(ours / pub.value) + " the seed)";
  }

  // ---------------------------------------------------------------- plots

  struct Plot {
    std::string stem, title, xlabel, ylabel;
    bool log_x = false;
    std::map<std::string, std::vector<std::pair<double, double>>> curves;  // label -> (x, y)
    std::vector<std::string> curve_order;
    std::string note;
  };

  std::string profile_text() const {
    std::vector<std::string> p(profiles_.begin(), profiles_.end());
    return fmt::format("{}", fmt::join(p, "+"));
  }

  static std::string sanitize(std::string s) {
    for (char& ch : s)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '-';
    return s;
  }

  static std::string what_of(const std::string& family) {
    if (family.rfind("lock", 0) == 0) return family + " (acquire + release)";
    if (family == "echo") return "echo latency (round trip / 2)";
    return family;
  }

  void add_point(Plot& p, const std::string& label, double x, double y) const {
    if (!p.curves.count(label)) p.curve_order.push_back(label);
    p.curves[label].emplace_back(x, y);
  }

  // A curve's name. In a plot where some point ran with several tasks per node every
  // curve says its placement and T ("mpi on-host T=2", "mpi inter-host T=1"), so points
  // with T > 1 are never drawn on a curve of T = 1 points; other plots are as they were.
  std::string curve_label(const Measure& m, bool tagged) const {
    std::string s = variant_label(m.variant);
    if (!tagged) return s;
    if (!m.placement.empty()) s += " " + m.placement;
    return s + " T=" + std::to_string(m.tasks);
  }
  static bool any_tasks(const std::vector<const Measure*>& ms) {
    return std::any_of(ms.begin(), ms.end(), [](const Measure* m) { return m->tasks > 1; });
  }
  static auto curve_key(const Measure* m) { return std::make_tuple(m->variant, m->tasks, placement_rank(m->placement)); }

  std::vector<Plot> plan_plots() const {
    std::vector<Plot> plots;
    std::set<std::string> families;
    for (const auto& m : measures_) families.insert(m.plot_family);
    for (const auto& fam : families) {
      std::vector<const Measure*> ms;
      for (const auto& m : measures_)
        if (m.plot_family == fam) ms.push_back(&m);
      std::set<double> sizes;
      std::set<int> nodes;
      for (auto* m : ms) {
        if (m->bytes) sizes.insert(*m->bytes);
        nodes.insert(m->nodes);
      }
      bool is_lock = fam.rfind("lock", 0) == 0;
      // vs size, one plot per node count.
      if (sizes.size() > 1)
        for (int n : nodes) {
          Plot p;
          p.stem = sanitize(fam) + "-vs-size-n" + std::to_string(n);
          p.title = fmt::format("{} vs message size, {} nodes — campaign {}, profile {}", what_of(fam), n, name_, profile_text());
          p.xlabel = "message size [bytes]";
          p.ylabel = "time per operation [µs]";
          p.log_x = true;
          std::vector<const Measure*> sorted;
          for (auto* m : ms)
            if (m->nodes == n && m->bytes) sorted.push_back(m);
          std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
            return std::make_tuple(curve_key(a), *a->bytes) < std::make_tuple(curve_key(b), *b->bytes);
          });
          const bool tagged = any_tasks(sorted);
          bool dropped_zero = false;
          for (auto* m : sorted) {
            if (*m->bytes <= 0) {
              dropped_zero = true;
              continue;
            }
            add_point(p, curve_label(*m, tagged), *m->bytes, m->median_us);
          }
          for (auto* m : sorted)
            if (m->modelled_us && *m->bytes > 0) add_point(p, curve_label(*m, tagged) + " modelled", *m->bytes, *m->modelled_us);
          if (dropped_zero) p.note = "0-byte points are in the tables, not on the logarithmic size axis";
          if (!p.curves.empty()) plots.push_back(std::move(p));
        }
      // vs nodes, one plot per size (the smallest and the largest when there are many).
      if (nodes.size() > 1) {
        std::vector<std::optional<double>> at;
        if (sizes.empty()) at.push_back(std::nullopt);
        else {
          at.push_back(*sizes.begin());
          if (sizes.size() > 1) at.push_back(*sizes.rbegin());
        }
        for (const auto& s : at) {
          Plot p;
          p.stem = sanitize(fam) + "-vs-nodes" + (s ? "-" + sanitize(size_text(*s)) : "");
          p.title = fmt::format("{} vs {}{} — campaign {}, profile {}", what_of(fam), is_lock ? "contending nodes" : "nodes",
                                s ? ", " + size_text(*s) + "B" : "", name_, profile_text());
          p.xlabel = is_lock ? "contending nodes" : "nodes";
          p.ylabel = "time per operation [µs]";
          std::vector<const Measure*> sorted;
          for (auto* m : ms)
            if (!s || (m->bytes && *m->bytes == *s)) sorted.push_back(m);
          std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
            return std::make_tuple(curve_key(a), a->nodes) < std::make_tuple(curve_key(b), b->nodes);
          });
          const bool tagged = any_tasks(sorted);
          for (auto* m : sorted) add_point(p, curve_label(*m, tagged), m->nodes, m->median_us);
          for (auto* m : sorted)
            if (m->modelled_us) add_point(p, curve_label(*m, tagged) + " modelled", m->nodes, *m->modelled_us);
          if (!p.curves.empty()) plots.push_back(std::move(p));
        }
      }
    }
    return plots;
  }

  static std::string gp_quote(const std::string& s) {
    std::string e;
    for (char ch : s) e += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
    return "\"" + e + "\"";
  }

  std::vector<std::pair<std::string, std::string>> draw_plots(ReportOutput& result) const {
    std::vector<std::pair<std::string, std::string>> drawn;
    std::vector<Plot> plots = plan_plots();
    fs::path dir = out_ / "plots";
    fs::create_directories(dir);
    if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
      result.plot_problem = "gnuplot not found (install gnuplot-nox): plots not drawn";
      return drawn;
    }
    for (const auto& p : plots) {
      std::string dat;
      double ymin = 1e300, ymax = 0;
      for (const auto& label : p.curve_order) {
        dat += "# " + label + "\n";
        for (const auto& [x, y] : p.curves.at(label)) {
          dat += fmt::format("{} {}\n", x, y);
          if (y > 0) ymin = std::min(ymin, y), ymax = std::max(ymax, y);
        }
        dat += "\n\n";
      }
      write_file_atomically(dir / (p.stem + ".dat"), dat);
      std::string gp;
      gp += "# " + p.title + " (generated by copbench report)\n";
      gp += "set encoding utf8\n";
      gp += "set title " + gp_quote(p.title) + " noenhanced\n";
      gp += "set xlabel " + gp_quote(p.xlabel) + " noenhanced\n";
      gp += "set ylabel " + gp_quote(p.ylabel) + " noenhanced\n";
      gp += "set grid\nset key outside right top noenhanced\n";
      if (p.log_x) gp += "set logscale x 2\nset format x \"%.0b %BB\"\n";
      else gp += "set xtics 1\nset offsets 0.2, 0.2, 0, 0\n";
      if (ymax > 0 && ymax / ymin > 20) gp += "set logscale y 10\nset format y \"%g\"\n";
      else gp += "set yrange [0:*]\n";
      std::string plot = "plot ";
      for (std::size_t i = 0; i < p.curve_order.size(); ++i) {
        bool modelled = p.curve_order[i].find(" modelled") != std::string::npos;
        plot += fmt::format("{}'{}.dat' index {} using 1:2 with linespoints lw 2 pt {} {}title {}", i ? ", \\\n     " : "", p.stem, i,
                            static_cast<int>(i % 12) + 1, modelled ? "dt 2 " : "", gp_quote(p.curve_order[i]));
      }
      gp += "set terminal pngcairo size 1000,600 font \"DejaVu Sans,10\"\n";
      gp += "set output '" + p.stem + ".png'\n" + plot + "\n";
      gp += "set terminal svg size 1000,600 font \"DejaVu Sans,10\"\n";
      gp += "set output '" + p.stem + ".svg'\nreplot\nunset output\n";
      write_file_atomically(dir / (p.stem + ".gp"), gp);
      std::string cmd = fmt::format("cd '{}' && gnuplot '{}.gp' 2>'{}.err'", dir.string(), p.stem, p.stem);
      if (std::system(cmd.c_str()) != 0) {
        result.plot_problem = fmt::format("gnuplot failed on {} (see {}.err)", (dir / (p.stem + ".gp")).string(), p.stem);
        continue;
      }
      std::error_code ec;
      fs::remove(dir / (p.stem + ".err"), ec);
      result.plots.push_back(dir / (p.stem + ".png"));
      drawn.emplace_back(p.stem, p.title + (p.note.empty() ? "" : " (" + p.note + ")"));
    }
    return drawn;
  }

  // ---------------------------------------------------------------- index

  std::string index(const std::vector<std::pair<std::string, Table>>& tables, const std::string& main,
                    const std::vector<std::pair<std::string, std::string>>& plots, const std::string& plot_problem,
                    const ReportOutput& result) const {
    std::string s = "# Campaign " + name_ + "\n\n";
    if (!manifest_.value("description", std::string()).empty()) s += manifest_["description"].get<std::string>() + "\n\n";
    const json& m = manifest_;
    auto get = [&](const json& j, const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string("?"); };
    s += "| | |\n|---|---|\n";
    s += "| created | " + get(m, "created") + " |\n";
    s += "| commit | " + get(m, "commit") + " |\n";
    if (m.contains("machine"))
      s += fmt::format("| machine | {} ({}, {} CPUs, {}) |\n", get(m["machine"], "host"), get(m["machine"], "os"),
                       m["machine"].value("cpus", 0), get(m["machine"], "memory"));
    if (m.contains("cluster"))
      s += fmt::format("| cluster | {} ({} nodes) |\n", get(m["cluster"], "name"), m["cluster"].value("size", 0));
    s += "| profiles | " + profile_text() + " |\n";
    s += fmt::format("| points | {} measured, {} not run |\n", count_done(), status_.size());
    s += o_.collective_method == "loop"
             ? "| collectives | loop method (IMB, OSU): the calls back to back, loop time / n, maximum over ranks |\n"
             : "| collectives | sync method (thesis ch. VI): a sync before each timed call, per-call maximum over ranks |\n";
    // The campaign's own files stay in its directory: links are relative to where index.md is.
    auto in_campaign = [&](const std::string& file) {
      return fs::weakly_canonical(o_.dir / file).lexically_relative(fs::weakly_canonical(out_)).generic_string();
    };
    s += fmt::format(
        "\nManifest (machine, commit, cluster, profile, package versions): [manifest.json]({}); "
        "campaign file: [campaign.yml]({}); log: [campaign.log]({}); raw Google Benchmark JSON: {}/.\n\n",
        in_campaign(campaign::kManifest), in_campaign(campaign::kCampaignCopy), in_campaign(campaign::kLog),
        in_campaign(campaign::kRawDir));
    s += "## Tables\n\n";
    for (const auto& [stem, t] : tables)
      s += fmt::format("- [{}](tables/{}.md) ([CSV](tables/{}.csv){}){}\n", t.title, stem, stem,
                       t.pairing_header.empty() ? "" : fmt::format(", [points read](tables/{}.pairing.csv)", stem),
                       stem == main ? " — main table" : "");
    if (!result.reference_summary.empty() || !result.reference_problem.empty()) {
      s += "\n## Against the reference campaign\n\n";
      if (!result.reference_summary.empty())
        s += fmt::format("Every point {}: [table](tables/{}.md) ([CSV](tables/{}.csv)).\n", result.reference_summary,
                         kReferenceTable, kReferenceTable);
      else
        s += result.reference_problem + "\n";
    }
    s += "\n## Plots\n\n";
    if (!plot_problem.empty()) s += plot_problem + "\n\n";
    for (const auto& [stem, title] : plots)
      s += fmt::format("### {}\n\n![{}](plots/{}.png)\n\n[SVG](plots/{}.svg) · [data](plots/{}.dat) · [gnuplot](plots/{}.gp)\n\n",
                       title, stem, stem, stem, stem, stem);
    if (!status_.empty()) {
      s += "## Points that did not run\n\n| point | status | reason |\n|---|---|---|\n";
      for (const auto& st : status_) s += fmt::format("| {} | {} | {} |\n", st.point, st.status, st.reason);
    }
    return s;
  }

  std::size_t count_done() const {
    std::set<std::tuple<Variant, std::string, int, int>> pts;
    for (const auto& m : measures_) pts.insert({m.variant, m.benchmark, m.nodes, m.tasks});
    return pts.size();
  }

  const ReportOptions& o_;
  fs::path out_;
  json manifest_;
  std::string name_;
  std::vector<Measure> measures_;
  std::vector<Status> status_;
  std::set<Variant> variants_;
  std::set<std::string> profiles_;
  bool multi_profile_ = false;
  bool multi_tasks_ = false;  // some point ran with several tasks per node
  std::set<std::string> multi_encoding_;
};

}  // namespace

ReportOutput make_report(const ReportOptions& options) {
  if (!fs::is_directory(options.dir)) throw std::runtime_error(fmt::format("{}: no such directory", options.dir.string()));
  Report r(options);
  return r.run();
}

}  // namespace copbench::report
