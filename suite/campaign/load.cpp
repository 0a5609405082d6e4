// Reading a campaign file: every refusal names the file, the line and the reason, and
// happens before anything runs.
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "copbench/catalog.h"
#include "copbench/campaign.h"
#include "copbench/compare.h"
#include "copbench/launch.h"
#include "copbench/results.h"

namespace copbench::campaign {
namespace fs = std::filesystem;
namespace {

const std::vector<std::string> kTopKeys = {"name", "description", "profiles", "defaults", "compare",
                                           "main_table", "reference", "tolerance", "runs"};
const std::vector<std::string> kRunKeys = {"benchmark", "backends", "routes", "encoding", "nodes",   "tasks_per_node",
                                           "sizes",     "reps",     "max_reps", "iters",   "warmup", "timeout", "params",
                                           "per_controller", "profiles", "env", "methods"};
const std::vector<std::string> kTimingKeys = {"reps", "max_reps", "iters", "warmup", "timeout", "methods"};

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads the YAML nodes of one campaign file; every refusal throws CampaignError
// naming the file and the node's line.
struct Reader {
  std::string file;

  [[noreturn]] void throw_refusal(const YAML::Node& at, const std::string& why) const {
    throw CampaignError(fmt::format("{}:{}: {}", file, at.Mark().line + 1, why));
  }
  [[noreturn]] void throw_refusal_at_line(int line, const std::string& why) const {
    throw CampaignError(fmt::format("{}:{}: {}", file, line, why));
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& known, const std::string& what) const {
    if (!map.IsMap()) throw_refusal(map, what + " must be a mapping of keys");
    for (const auto& kv : map) {
      std::string key = kv.first.as<std::string>();
      if (!contains(known, key)) throw_refusal(kv.first, fmt::format("unknown key '{}' in {} (known: {})", key, what, joined(known)));
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) throw_refusal(n, fmt::format("'{}' must be a single value", key));
    return n.as<std::string>();
  }

  int integer(const YAML::Node& n, const std::string& key, int min) const {
    std::string s = scalar(n, key);
    char* end = nullptr;
    long v = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0') throw_refusal(n, fmt::format("'{}' must be a whole number, got '{}'", key, s));
    if (v < min) throw_refusal(n, fmt::format("'{}' must be at least {}, got {}", key, min, v));
    if (v > INT_MAX) throw_refusal(n, fmt::format("'{}' is too large, got {}", key, s));
    return static_cast<int>(v);
  }

  // A scalar or a list of scalars.
  std::vector<std::pair<std::string, YAML::Node>> list(const YAML::Node& n, const std::string& key) const {
    std::vector<std::pair<std::string, YAML::Node>> out;
    if (n.IsScalar()) {
      out.emplace_back(n.as<std::string>(), n);
    } else if (n.IsSequence()) {
      for (const auto& item : n) out.emplace_back(scalar(item, key), item);
    } else {
      throw_refusal(n, fmt::format("'{}' must be a value or a list", key));
    }
    if (out.empty()) throw_refusal(n, fmt::format("'{}' is empty", key));
    return out;
  }

  // Node counts: 4, [1, 2, 4] or "1-4".
  std::vector<int> nodes(const YAML::Node& n) const {
    std::vector<int> out;
    for (const auto& [s, at] : list(n, "nodes")) {
      auto dash = s.find('-');
      if (dash != std::string::npos && dash > 0) {
        YAML::Node lo(s.substr(0, dash)), hi(s.substr(dash + 1));
        char* e1 = nullptr;
        char* e2 = nullptr;
        long a = std::strtol(lo.as<std::string>().c_str(), &e1, 10), b = std::strtol(hi.as<std::string>().c_str(), &e2, 10);
        if (*e1 || *e2 || a < 1 || b < a) throw_refusal(at, fmt::format("bad node range '{}' (write e.g. 1-4)", s));
        for (long i = a; i <= b; ++i) out.push_back(static_cast<int>(i));
      } else {
        out.push_back(integer(at, "nodes", 1));
      }
    }
    return out;
  }

  void timing(const YAML::Node& map, Timing& t) const {
    if (map["reps"]) t.reps = integer(map["reps"], "reps", 1);
    if (map["max_reps"]) t.max_reps = integer(map["max_reps"], "max_reps", 1);
    if (map["iters"]) t.iters = integer(map["iters"], "iters", 1);
    if (map["warmup"]) t.warmup = integer(map["warmup"], "warmup", 0);
    if (map["timeout"]) t.timeout = integer(map["timeout"], "timeout", 1);
    if (map["methods"]) t.methods = methods(map["methods"]);
  }

  // `methods:` window, [window, sync], ...: parse_methods's (timing.h) text of them.
  std::string methods(const YAML::Node& n) const {
    std::string text;
    for (const auto& [m, at] : list(n, "methods")) text += (text.empty() ? "" : ",") + m;
    try {
      return methods_text(parse_methods(text));
    } catch (const std::invalid_argument& e) {
      throw_refusal(n, std::string("methods: ") + e.what());
    }
  }
};

std::string point_id(const Point& p) {
  std::string mode = p.backend;
  if (!p.route.empty()) mode += "-" + p.route;
  if (!p.encoding.empty()) mode += "-" + p.encoding;
  // One task per node keeps the ids campaigns always had, so old directories resume.
  std::string tasks = p.tasks_per_node > 1 ? fmt::format(".t{}", p.tasks_per_node) : "";
  if (p.per_controller > 0) tasks += fmt::format(".k{}", p.per_controller);
  for (const auto& [name, value] : p.env) tasks += fmt::format(".{}={}", name, value);
  return fmt::format("{}.{}.n{}.{}{}", p.benchmark, mode, p.nodes, p.profile, tasks);
}

}  // namespace

const std::vector<std::string>& campaign_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& s : all_backend_specs()) v.push_back(s.name);
    return v;
  }();
  return names;
}

namespace {

YAML::Node load_yaml(const fs::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw CampaignError(fmt::format("{}: cannot read the campaign file", file.string()));
  } catch (const YAML::Exception& e) {
    throw CampaignError(fmt::format("{}:{}: not valid YAML: {}", file.string(), e.mark.line + 1, e.msg));
  }
  if (!root || root.IsNull()) throw CampaignError(fmt::format("{}:1: the campaign file is empty", file.string()));
  return root;
}

void read_name(const Reader& r, const YAML::Node& root, Campaign& c) {
  if (!root["name"]) r.throw_refusal_at_line(1, "missing key 'name'");
  c.name = r.scalar(root["name"], "name");
  for (char ch : c.name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
      r.throw_refusal(root["name"], fmt::format("name '{}' may hold only letters, digits, - and _", c.name));
  if (root["description"]) c.description = r.scalar(root["description"], "description");
}

void read_profiles(const Reader& r, const YAML::Node& root, Campaign& c) {
  if (!root["profiles"]) {
    c.profiles = {"native"};
    return;
  }
  const std::vector<std::string> known = known_profiles();
  for (const auto& [p, at] : r.list(root["profiles"], "profiles")) {
    const std::string platform = simulated_platform(p);  // simulated:NAME: its platform file must exist
    if (!platform.empty() && !fs::exists(platform_file(platform)))
      r.throw_refusal(at, fmt::format("{}: no platform file {}", p, platform_file(platform)));
    if (platform.empty() && !contains(known, p))
      r.throw_refusal(at, fmt::format("unknown link profile '{}' (known: {}, simulated:NAME)", p, joined(known)));
    c.profiles.push_back(p);
  }
}

// `compare:` (seed tables in reference_dir) and `main_table:`.
void read_tables(const Reader& r, const YAML::Node& root, const fs::path& reference_dir, Campaign& c) {
  if (root["compare"]) {
    for (const auto& [t, at] : r.list(root["compare"], "compare")) {
      if (!fs::exists(reference_dir / (t + ".csv"))) {
        std::vector<std::string> have;
        if (fs::is_directory(reference_dir))
          for (const auto& e : fs::directory_iterator(reference_dir))
            if (e.path().extension() == ".csv") have.push_back(e.path().stem().string());
        std::sort(have.begin(), have.end());
        r.throw_refusal(at, fmt::format("unknown seed table '{}' (known: {})", t, have.empty() ? "none" : joined(have)));
      }
      c.compare.push_back(t);
    }
  }
  if (root["main_table"]) {
    c.main_table = r.scalar(root["main_table"], "main_table");
    // md-table5: thesis Table V, built by the report from the md application's points.
    if (c.main_table != "summary" && c.main_table != "md-table5" && !contains(c.compare, c.main_table))
      r.throw_refusal(root["main_table"], fmt::format("main_table '{}' is neither 'summary', 'md-table5' nor one of compare", c.main_table));
  }
}

// `reference:` (a previous results directory to judge every point against, copbench
// compare's verdicts) and its `tolerance:`.
void read_reference(const Reader& r, const YAML::Node& root, const fs::path& file, Campaign& c) {
  if (root["reference"]) {
    const std::string ref = r.scalar(root["reference"], "reference");
    fs::path p = ref;
    if (p.is_relative()) p = fs::absolute(file).parent_path() / p;
    p = p.lexically_normal();
    if (!p.has_filename()) p = p.parent_path();  // "dir/." -> "dir"
    if (ref.empty() || !fs::exists(p))
      r.throw_refusal(root["reference"], fmt::format("reference directory '{}' does not exist ({})", ref, p.string()));
    if (!fs::is_directory(p) || !fs::exists(p / kManifest))
      r.throw_refusal(root["reference"], fmt::format("reference '{}' is not a campaign results directory (no {} in {})", ref, kManifest, p.string()));
    c.reference = p;
  }
  if (root["tolerance"]) {
    if (!root["reference"]) r.throw_refusal(root["tolerance"], "'tolerance' needs 'reference' (the results directory the verdicts compare with)");
    c.tolerance = r.scalar(root["tolerance"], "tolerance");
    try {
      compare::parse_tolerance(c.tolerance);
    } catch (const std::invalid_argument& e) {
      r.throw_refusal(root["tolerance"], e.what());
    }
  }
}

// One entry of `runs:`, checked; expand_run makes its points.
struct RunEntry {
  YAML::Node node;
  std::string bench_name;
  const Benchmark* bench = nullptr;
  std::vector<std::pair<std::string, YAML::Node>> backends;
  std::vector<std::string> routes;
  std::string encoding;
  std::vector<int> node_counts;
  std::vector<std::pair<int, YAML::Node>> tasks;  // tasks per node, each a point of its own
  std::string sizes;
  Timing timing;
  std::map<std::string, std::string> params;
  int per_controller = 0;
  std::vector<std::map<std::string, std::string>> envs = {{}};  // `env:`, a point each
  std::vector<std::string> profiles;  // a subset of the campaign's; empty: all of them
};

const Benchmark& read_benchmark(const Reader& r, const YAML::Node& run, std::string& name) {
  if (!run["benchmark"]) r.throw_refusal(run, "a run needs 'benchmark'");
  name = r.scalar(run["benchmark"], "benchmark");
  const Benchmark* bench = find_benchmark(name);
  if (!bench) {
    std::vector<std::string> names;
    for (const Benchmark* b : all_benchmarks()) names.emplace_back(b->name());
    r.throw_refusal(run["benchmark"], fmt::format("unknown benchmark '{}' (known: {})", name, joined(names)));
  }
  return *bench;
}

// `backends:`, `routes:` and `encoding:`, each checked against what any backend knows.
void read_modes(const Reader& r, RunEntry& e) {
  const YAML::Node& run = e.node;
  if (!run["backends"]) r.throw_refusal(run, fmt::format("run of {} needs 'backends'", e.bench_name));
  e.backends = r.list(run["backends"], "backends");
  const auto& backends_known = campaign_backend_names();
  for (const auto& [b, at] : e.backends)
    if (!contains(backends_known, b)) r.throw_refusal(at, fmt::format("unknown backend '{}' (known: {})", b, joined(backends_known)));
  if (run["routes"]) {
    std::vector<std::string> all_routes;  // every backend's (backends.json "routes")
    for (const auto& s : all_backend_specs())
      for (const auto& rt : s.routes)
        if (!contains(all_routes, rt)) all_routes.push_back(rt);
    for (const auto& [rt, at] : r.list(run["routes"], "routes")) {
      if (!contains(all_routes, rt)) r.throw_refusal(at, fmt::format("unknown route '{}' (known: {})", rt, joined(all_routes)));
      e.routes.push_back(rt);
    }
  }
  if (run["encoding"]) {
    e.encoding = r.scalar(run["encoding"], "encoding");
    std::vector<std::string> encs;
    for (const auto& s : all_backend_specs())
      for (const auto& enc : s.encodings)
        if (!contains(encs, enc)) encs.push_back(enc);
    if (!contains(encs, e.encoding)) r.throw_refusal(run["encoding"], fmt::format("unknown encoding '{}' (known: {})", e.encoding, joined(encs)));
  }
}

// `nodes:` and `tasks_per_node:`: every count within what the cluster offers.
void read_placement(const Reader& r, const Cluster& cluster, RunEntry& e) {
  const YAML::Node& run = e.node;
  if (!run["nodes"]) r.throw_refusal(run, fmt::format("run of {} needs 'nodes'", e.bench_name));
  e.node_counts = r.nodes(run["nodes"]);
  const bool simulated_only = std::all_of(e.backends.begin(), e.backends.end(), [](const auto& b) {
    const BackendSpec* spec = find_backend_spec(b.first);
    return spec && worker_launcher(*spec).simulated();
  });  // simulated nodes are the platform's hosts, not the cluster's
  for (int n : e.node_counts)
    if (n > (simulated_only ? kPlatformHosts : cluster.size))
      r.throw_refusal(run["nodes"], fmt::format("{} nodes is more than the cluster offers ({} has {})", n, cluster.name, cluster.size));
  e.tasks = {{1, run["nodes"]}};
  if (run["tasks_per_node"]) {
    e.tasks.clear();
    for (const auto& [s, at] : r.list(run["tasks_per_node"], "tasks_per_node"))
      e.tasks.emplace_back(r.integer(at, "tasks_per_node", 1), at);
  }
  const int min_ranks = e.bench->min_ranks();
  for (int n : e.node_counts)
    for (const auto& [t, at] : e.tasks) {  // t: tasks per node
      const long long ranks = static_cast<long long>(n) * t;
      if (t == 1) {
        if (n < min_ranks)
          r.throw_refusal(run["nodes"], fmt::format("{} needs at least {} nodes, got {}", e.bench_name, min_ranks, n));
        continue;
      }
      if (ranks < min_ranks)
        r.throw_refusal(at, fmt::format("{} needs at least {} ranks, got {} nodes x {} tasks per node", e.bench_name, min_ranks, n, t));
      // On one machine every rank is a process on loopback (max_local_nodes()); on a cluster
      // a node is a host, which is one machine for its T ranks.
      if (cluster.name == "local" && ranks > cluster.size)
        r.throw_refusal(at, fmt::format("{} nodes x {} tasks per node = {} ranks is more than the cluster offers ({} has at most {} ranks "
                                        "on this machine)",
                                        n, t, ranks, cluster.name, cluster.size));
      if (cluster.name != "local" && t > max_local_nodes())
        r.throw_refusal(at, fmt::format("{} tasks per node is more than a host offers (at most {} ranks on one machine)", t,
                                        max_local_nodes()));
    }
}

void read_sizes(const Reader& r, RunEntry& e) {
  const YAML::Node& run = e.node;
  if (run["sizes"]) {
    if (e.bench->default_sizes().empty()) r.throw_refusal(run["sizes"], fmt::format("{} takes no sizes", e.bench_name));
    for (const auto& [s, at] : r.list(run["sizes"], "sizes")) {
      try {
        parse_sizes(s);
      } catch (const std::exception& ex) {
        r.throw_refusal(at, ex.what());
      }
      e.sizes += (e.sizes.empty() ? "" : ",") + s;
    }
  }
}

// `params:`: an application's options, checked by the benchmark.
void read_params(const Reader& r, RunEntry& e) {
  const YAML::Node& run = e.node;
  if (!run["params"]) return;
  if (!run["params"].IsMap()) r.throw_refusal(run["params"], "'params' must be a mapping of worker options");
  auto known = e.bench->option_names();
  RunParams checked;
  if (!e.sizes.empty()) checked.sizes = parse_sizes(e.sizes);
  for (const auto& kv : run["params"]) {
    std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end())
      r.throw_refusal(kv.first, known.empty() ? fmt::format("{} takes no params (got '{}')", e.bench_name, key)
                                              : fmt::format("unknown param '{}' for {} (known: {})", key, e.bench_name, joined(known)));
    e.params[key] = r.scalar(kv.second, key);
    checked.options[key] = e.params[key];
  }
  try {
    e.bench->check_options(checked);
  } catch (const std::invalid_argument& ex) {
    r.throw_refusal(run["params"], ex.what());
  }
}

// `env:`: a mapping NAME: value, or a list of them (a point each; {}: the runner's own
// environment). A value names the point (.NAME=VALUE in its id): letters, digits, _, -.
void read_env(const Reader& r, RunEntry& e) {
  const YAML::Node& n = e.node["env"];
  if (!n) return;
  e.envs.clear();
  for (const YAML::Node& m : n.IsSequence() ? std::vector<YAML::Node>(n.begin(), n.end()) : std::vector<YAML::Node>{n}) {
    if (!m.IsMap()) r.throw_refusal(m, "'env' must be a mapping NAME: value, or a list of them");
    for (const auto& kv : m) {
      const std::string name = kv.first.as<std::string>(), value = r.scalar(kv.second, name);
      if (!std::regex_match(name, std::regex("[A-Z_][A-Z0-9_]*")) || name == "COP_PER_CONTROLLER" || name == "PVM_EXPORT")
        r.throw_refusal(kv.first, fmt::format("env: '{}' is not a variable a run may set (A-Z, 0-9 and _; not "
                                              "COP_PER_CONTROLLER or PVM_EXPORT, the runner's own)", name));
      if (!std::regex_match(value, std::regex("[A-Za-z0-9_-]+")))
        r.throw_refusal(kv.second, fmt::format("env: {}'s value '{}' must be letters, digits, _ or - (it names the point)",
                                               name, value));
    }
    e.envs.push_back(m.as<std::map<std::string, std::string>>());
  }
  if (e.envs.empty()) r.throw_refusal(n, "'env' is empty");
}

// `profiles:` of a run: the campaign's profiles it runs under (a simulated backend whose
// times do not depend on the platform need not run on each).
std::vector<std::string> read_run_profiles(const Reader& r, const YAML::Node& run, const Campaign& c) {
  std::vector<std::string> out;
  if (!run["profiles"]) return out;
  for (const auto& [p, at] : r.list(run["profiles"], "profiles")) {
    if (!contains(c.profiles, p))
      r.throw_refusal(at, fmt::format("profile '{}' is not one of the campaign's profiles ({})", p, joined(c.profiles)));
    out.push_back(p);
  }
  return out;
}

RunEntry read_run(const Reader& r, const YAML::Node& run, const Timing& defaults, const Cluster& cluster,
                  const Campaign& c) {
  r.check_keys(run, kRunKeys, "a run");
  RunEntry e;
  e.profiles = read_run_profiles(r, run, c);
  e.node = run;
  e.bench = &read_benchmark(r, run, e.bench_name);
  read_modes(r, e);
  read_placement(r, cluster, e);
  read_sizes(r, e);
  e.timing = defaults;
  r.timing(run, e.timing);
  read_params(r, e);
  read_env(r, e);
  if (run["per_controller"] && (e.per_controller = r.integer(run["per_controller"], "per_controller", 1)) > 64)
    r.throw_refusal(run["per_controller"], "per_controller must be 1..64 (channels of one controller)");
  for (const auto& [backend, at] : e.backends)  // cop's two levels: K channels per level-1 controller
    if (e.per_controller > 0 && backend != "cop") r.throw_refusal(at, fmt::format("per_controller is cop's, not {}'s", backend));
  return e;
}

// The routes a point of `backend` runs: a backend not built yet takes the routes as
// written; a built one only its own, its default named so every point says how it ran.
std::vector<std::string> point_routes(const BackendSpec* spec, const std::vector<std::string>& routes) {
  std::vector<std::string> out;
  if (!spec) return routes.empty() ? std::vector<std::string>{""} : routes;
  for (const auto& rt : routes)
    if (contains(spec->routes, rt)) out.push_back(rt);
  if (out.empty()) out = {""};
  if (!spec->routes.empty())
    for (auto& rt : out)
      if (rt.empty()) rt = spec->routes.front();
  return out;
}

// The run's points: profile x backend x route x node count x tasks per node.
void expand_run(const Reader& r, const RunEntry& e, Campaign& c, std::set<std::string>& ids) {
  const std::vector<std::string> profiles = e.profiles.empty() ? c.profiles : e.profiles;
  for (const auto& profile : profiles)
    for (const auto& [backend, at] : e.backends) {
      const BackendSpec* spec = find_backend_spec(backend);
      if ((spec && worker_launcher(*spec).simulated()) != !simulated_platform(profile).empty()) continue;
      std::string encoding = (spec && contains(spec->encodings, e.encoding)) ? e.encoding : "";
      if (spec && !spec->encodings.empty() && encoding.empty()) encoding = spec->encodings.front();
      for (const auto& rt : point_routes(spec, e.routes))
        for (int n : e.node_counts)
          for (const auto& task_count : e.tasks)
            for (const auto& env : e.envs) {
              Point p;
              p.benchmark = e.bench_name;
              p.backend = backend;
              p.route = rt;
              p.encoding = encoding;
              p.nodes = n;
              p.tasks_per_node = task_count.first;
              p.sizes = e.sizes;
              p.profile = profile;
              p.timing = e.timing;
              p.params = e.params;
              p.per_controller = e.per_controller;
              p.env = env;
              p.line = e.node.Mark().line + 1;
              p.id = point_id(p);
              if (!ids.insert(p.id).second) r.throw_refusal(e.node, fmt::format("point {} appears twice in the campaign", p.id));
              c.points.push_back(std::move(p));
            }
    }
}

}  // namespace

Campaign load_campaign(const fs::path& file, const Cluster& cluster, const fs::path& reference_dir) {
  const Reader r{file.string()};
  const YAML::Node root = load_yaml(file);
  r.check_keys(root, kTopKeys, "the campaign");
  Campaign c;
  c.file = file;
  read_name(r, root, c);
  read_profiles(r, root, c);
  read_tables(r, root, reference_dir, c);
  read_reference(r, root, file, c);
  Timing defaults;
  if (root["defaults"]) {
    r.check_keys(root["defaults"], kTimingKeys, "defaults");
    r.timing(root["defaults"], defaults);
  }
  const YAML::Node runs = root["runs"];
  if (!runs) r.throw_refusal_at_line(1, "missing key 'runs' (the list of benchmarks to run)");
  if (!runs.IsSequence() || runs.size() == 0) r.throw_refusal(runs, "'runs' must be a non-empty list");
  std::set<std::string> ids;
  for (const auto& run : runs) expand_run(r, read_run(r, run, defaults, cluster, c), c, ids);
  return c;
}

}  // namespace copbench::campaign
