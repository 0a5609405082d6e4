// Loading a campaign directory's results: the median of every point (raw/*.json, Google
// Benchmark JSON) and the points that did not run (status/*.json). Files are read in name
// order, so the tables built from them do not depend on the directory's order.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "copbench/campaign.h"
#include "report/report_parts.h"

namespace copbench::report {
namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string BackendMode::label(bool with_profile) const {
  std::string s = backend;
  if (!route.empty()) s += "/" + route;
  if (!encoding.empty()) s += "/" + encoding;
  if (with_profile) s += " " + profile;
  return s;
}

int BackendMode::rank() const {
  const BackendSpec* spec = find_backend_spec(backend);
  return spec ? spec->report_order : BackendSpec::kAfterTheOrdered;
}

std::string workload_of(const PointMedian& m) {
  return m.benchmark.empty() ? m.run_name.substr(0, m.run_name.find('/')) : m.benchmark;
}

ReportTraits traits_of(const PointMedian& m) {
  const Benchmark* b = find_benchmark(workload_of(m));
  return b ? b->report_traits() : ReportTraits{};
}

int placement_rank(const std::string& placement) {
  if (placement == "on-host") return 0;
  if (placement == "inter-host") return 1;
  return 2;
}

namespace {

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

const std::set<std::string> kStandardKeys = {"real_time", "cpu_time", "iterations", "threads", "repetitions",
                                             "repetition_index", "family_index", "per_family_instance_index",
                                             "discarded_reps", "ci95_half_us", "timer_overhead_us", "modelled_us",
                                             "timed_calls", "invalid_calls", "window_us",
                                             "late_tolerance_us", "window_widenings", "clock_bound_us",
                                             "clock_offset_us", "clock_offset_bound_us",
                                             "clock_injected_error_us"};

// A collective point's method from its name ("method:M/" part, removed from `name`) or,
// for a plain name, its label (method=window; a plain point labelled otherwise, or not at
// all, is from before the window method: the sync method). "" for a point that is not a
// collective's (no method label and no part).
std::string method_of(std::string& name, const std::string& label) {
  for (const char* m : {"sync", "loop", "window"}) {
    const std::string part = std::string("method:") + m + "/";
    if (auto at = name.find(part); at != std::string::npos) {
      name.erase(at, part.size());
      return m;
    }
  }
  const std::string labelled = label_value(label, "method");
  if (labelled.empty()) return "";
  return labelled == "window" ? "window" : "sync";
}

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The fields of one median entry `b` of a result file; `run_name` is already without its loop part.
PointMedian median_of(const json& b, std::string run_name, const PointMedian& file_part) {
  PointMedian m = file_part;
  m.run_name = std::move(run_name);
  m.family = family_of(m.run_name);
  m.placement = label_value(b.value("label", ""), "placement");
  m.plot_family = m.family;
  const std::string placed = "/" + m.placement;
  if (!m.placement.empty() && m.family.size() > placed.size() &&
      m.family.compare(m.family.size() - placed.size(), placed.size(), placed) == 0)
    m.plot_family = m.family.substr(0, m.family.size() - placed.size());
  m.median_us = b.value("real_time", 0.0);
  m.timed_calls = b.value("timed_calls", 0L);
  m.invalid_calls = b.value("invalid_calls", 0L);
  m.clock_bound_us = b.value("clock_bound_us", 0.0);
  m.window_us = b.value("window_us", 0.0);
  m.clock_basis = b.value("clock_basis", "");
  m.clock_offset_us = b.value("clock_offset_us", 0.0);
  m.clock_offset_bound_us = b.value("clock_offset_bound_us", 0.0);
  // A zero modelled time means the operation did not touch the modelled hardware (cop's
  // echo goes through PVM): there is no modelled value to show.
  if (b.contains("modelled_us") && b["modelled_us"].get<double>() > 0) m.modelled_us = b["modelled_us"].get<double>();
  m.ci_met = b.value("ci_met", true);
  for (const auto& [k, val] : b.items())
    if (val.is_number() && !kStandardKeys.count(k)) m.counters[k] = val.get<double>();
  if (m.counters.count("bytes")) m.bytes = m.counters["bytes"];
  return m;
}

// A point's variant is a mode of its own: a backend on a private stack (backends.json: cop)
// at two levels (campaign `per_controller:`, seed 000 ch. IV), one curve over the node
// counts whatever K each took ("cop/direct+2level/raw"), and a run's `env:`
// ("cop/direct+COPBENCH_COP_GROUPS=ask").
void add_variant(BackendMode& mode, bool two_level, std::string env) {
  const BackendSpec* spec = find_backend_spec(mode.backend);
  if (spec && spec->private_stack && two_level) mode.route += "+2level";
  std::replace(env.begin(), env.end(), ' ', '+');
  if (!env.empty()) mode.route += (mode.route.empty() ? "" : "+") + env;
}

// What every point of one result file shares: its context.
PointMedian file_part_of(const json& j, const fs::path& f) {
  const json& ctx = j.at("context");
  PointMedian m;
  m.mode = BackendMode{ctx.value("backend", ""), ctx.value("route", ""), ctx.value("encoding", ""),
                       ctx.value("link_profile", "")};
  // A backend with a single way of working names it in `route`; only listed routes
  // (backends.json "routes") are modes.
  const BackendSpec* spec = find_backend_spec(m.mode.backend);
  if (!spec || spec->routes.empty()) m.mode.route.clear();
  add_variant(m.mode, ctx.contains("cop_per_controller"), ctx.value("campaign_env", ""));
  m.benchmark = ctx.value("copbench_benchmark", "");
  m.nodes = std::atoi(ctx.value("nodes", "0").c_str());
  m.tasks = tasks_of(ctx);
  m.source = f.stem().string();
  for (const char* key : kEmulationSettings)
    if (ctx.contains(key) && ctx[key].is_string()) m.settings[key] = ctx[key].get<std::string>();
  for (const char* key : kCopHardwareSettings)
    if (ctx.contains(key) && ctx[key].is_string()) m.settings[key] = ctx[key].get<std::string>();
  return m;
}

}  // namespace

namespace {

// Of the twins of every collective point keeps the one measured by `method`, else the
// plainly named one (report_parts.h, load_medians).
void keep_method(std::vector<PointMedian>& all, std::vector<bool>& plain, const std::string& method) {
  using Key = std::tuple<std::string, std::string, int, int, std::string>;  // file, name, nodes, tasks, benchmark
  auto key = [](const PointMedian& m) { return Key{m.source, m.run_name, m.nodes, m.tasks, m.benchmark}; };
  // A plain point with no method label whose twin names one is a collective's from
  // before the labels: the sync method's.
  std::set<Key> labelled;
  for (const auto& m : all)
    if (!m.method.empty()) labelled.insert(key(m));
  for (auto& m : all)
    if (m.method.empty() && labelled.count(key(m))) m.method = "sync";
  std::set<Key> wanted, plainly_named;
  // A point whose run left `method` and the plain name out (`methods: [sync, loop]`,
  // copbench/timing.h) shows the sync twin, else the loop one.
  std::map<Key, std::string> fallback;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const PointMedian& m = all[i];
    if (m.method == method) wanted.insert(key(m));
    if (plain[i]) plainly_named.insert(key(m));
    if (!plain[i] && !m.method.empty() && fallback[key(m)] != kMethodSync) fallback[key(m)] = m.method;
  }
  std::vector<PointMedian> kept;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const PointMedian& m = all[i];
    const Key k = key(m);
    const bool stands_in = !wanted.count(k) && (plain[i] || (!plainly_named.count(k) && fallback[k] == m.method));
    if (m.method.empty() || m.method == method || stands_in) kept.push_back(m);
  }
  all = std::move(kept);
}

}  // namespace

std::vector<PointMedian> load_medians(const fs::path& raw_dir, const std::string& method) {
  std::vector<PointMedian> out;
  std::vector<bool> plain;  // named without a method part
  for (const auto& f : json_files(raw_dir)) {
    json j;
    try {
      j = json::parse(read_text(f));
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("{} is not valid JSON", f.string()));
    }
    const PointMedian file_part = file_part_of(j, f);
    for (const auto& b : j.at("benchmarks")) {
      if (b.value("run_type", "") != "aggregate" || b.value("aggregate_name", "") != "median") continue;
      std::string run_name = b.value("run_name", "");
      const std::size_t length = run_name.size();
      const std::string m = method_of(run_name, b.value("label", ""));
      plain.push_back(run_name.size() == length);
      out.push_back(median_of(b, std::move(run_name), file_part));
      out.back().method = m;
      out.back().loop = m == "loop";
    }
  }
  keep_method(out, plain, method);
  return out;
}

std::vector<PointStatus> load_statuses(const fs::path& status_dir) {
  std::vector<PointStatus> out;
  for (const auto& f : json_files(status_dir)) {
    json j = json::parse(read_text(f));
    PointStatus s;
    s.point = j.value("point", "");
    s.benchmark = j.value("benchmark", "");
    s.status = j.value("status", "");
    s.reason = j.value("reason", "");
    s.mode = BackendMode{j.value("backend", ""), j.value("route", ""), j.value("encoding", ""), j.value("profile", "")};
    std::string env;
    for (const auto& [name, value] : j.value("env", json::object()).items())
      env += (env.empty() ? "" : " ") + name + "=" + value.get<std::string>();
    add_variant(s.mode, j.value("per_controller", 0) > 0, env);
    s.nodes = j.value("nodes", 0);
    s.tasks = std::max(1, j.value("tasks_per_node", 1));
    out.push_back(std::move(s));
  }
  return out;
}

std::string HostsOnCores::per_core(int nodes) const {
  if (!crowded(nodes)) return "";
  return fmt::format("{:g}", static_cast<double>(nodes) / cpus);
}

std::string HostsOnCores::text(int nodes) const {
  if (!crowded(nodes)) return "";
  return fmt::format("{} emulated hosts on {} cores: {} per core", nodes, cpus, per_core(nodes));
}

HostsOnCores hosts_on_cores(const json& manifest) {
  HostsOnCores h;
  if (manifest.contains("machine") && manifest["machine"].is_object()) h.cpus = manifest["machine"].value("cpus", 0);
  if (manifest.contains("cluster") && manifest["cluster"].is_object()) {
    const json& e = manifest["cluster"].value("emulated", json());
    h.emulated = e.is_boolean() && e.get<bool>();
  }
  // A campaign whose every profile is simulated ran no host: its nodes are simulated
  // actors, however many share the machine's cores.
  const json& profiles = manifest.value("profiles", json::array());
  if (profiles.is_array() && !profiles.empty() &&
      std::all_of(profiles.begin(), profiles.end(),
                  [](const json& p) { return p.is_string() && !campaign::simulated_platform(p.get<std::string>()).empty(); }))
    h.emulated = false;
  return h;
}

CampaignResults load_results(const fs::path& campaign_dir, const std::string& method) {
  CampaignResults r;
  const fs::path manifest = campaign_dir / campaign::kManifest;
  if (fs::exists(manifest)) {
    try {
      r.machine = hosts_on_cores(json::parse(read_text(manifest)));
    } catch (const json::exception&) {
      // make_report names a manifest that is not JSON; here it only lacks the machine.
    }
  }
  r.medians = load_medians(campaign_dir / campaign::kRawDir, method);
  r.statuses = load_statuses(campaign_dir / campaign::kStatusDir);
  r.index_modes();
  return r;
}

void CampaignResults::index_modes() {
  for (const auto& m : medians) modes.insert(m.mode);
  for (const auto& s : statuses) modes.insert(s.mode);
  for (const auto& v : modes) profiles.insert(v.profile);
  multi_profile = profiles.size() > 1;
  std::map<std::string, std::set<std::string>> encodings;
  for (const auto& v : modes) encodings[v.backend].insert(v.encoding);
  for (const auto& [b, e] : encodings)
    if (e.size() > 1) multi_encoding.insert(b);
  for (const auto& m : medians) multi_tasks = multi_tasks || m.tasks > 1;
  for (const auto& st : statuses) multi_tasks = multi_tasks || st.tasks > 1;
}

std::string CampaignResults::label(BackendMode mode, bool with_profile) const {
  if (!multi_encoding.count(mode.backend)) mode.encoding.clear();
  return mode.label(with_profile);
}

const PointMedian* CampaignResults::find(const BackendMode& mode, const std::string& run_name, int nodes,
                                         int tasks) const {
  for (const auto& m : medians)
    if (m.mode == mode && m.run_name == run_name && m.nodes == nodes && m.tasks == tasks) return &m;
  return nullptr;
}

std::string CampaignResults::missing_cell(const BackendMode& mode, const std::string& benchmark, int nodes,
                                          int tasks) const {
  for (const auto& s : statuses)
    if (s.mode == mode && s.benchmark == benchmark && s.nodes == nodes && s.tasks == tasks) return s.status;
  return "—";
}

std::vector<BackendMode> CampaignResults::column_modes() const {
  std::vector<BackendMode> columns;
  for (const auto& v : modes) {
    BackendMode w = v;
    w.profile.clear();
    if (std::find(columns.begin(), columns.end(), w) == columns.end()) columns.push_back(w);
  }
  std::sort(columns.begin(), columns.end());
  return columns;
}

std::string CampaignResults::profile_text() const {
  std::vector<std::string> p(profiles.begin(), profiles.end());
  return fmt::format("{}", fmt::join(p, "+"));
}

std::size_t CampaignResults::count_done() const {
  std::set<std::tuple<BackendMode, std::string, int, int>> pts;
  for (const auto& m : medians) pts.insert({m.mode, m.benchmark, m.nodes, m.tasks});
  return pts.size();
}

}  // namespace copbench::report
