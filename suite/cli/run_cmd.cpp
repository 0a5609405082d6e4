// `copbench run BENCH --backend NAME --nodes N ...`: one benchmark on one backend.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/checks.h"
#include "cli/commands.h"
#include "copbench/launch.h"
#include "copbench/number_options.h"
#include "copbench/results.h"
#include "copbench/worker.h"

namespace copbench::cli {
namespace {

struct RunOptions {
  std::string bench;
  Placement where;
  std::string sizes;
  std::vector<std::string> params;
  // 0 (-1 for warmup): not given, the defaults below for a measured or simulated run.
  int reps = 0;
  int max_reps = 0;  // 0: default_max_reps(reps), or 1 simulated
  int iters = 0;
  int warmup = -1;
  std::optional<std::string> methods;  // --methods: unset, every method
  std::string link_profile;
  std::string out;
  bool json_only = false;
};

std::string known_backends() {
  std::string s;
  for (const auto& b : all_backend_specs()) s += (s.empty() ? "" : ", ") + b.name;
  return s;
}

std::string join_ops(const std::vector<Op>& ops) {
  std::string s;
  for (Op op : ops) s += (s.empty() ? "" : ", ") + std::string(op_name(op));
  return s;
}

// The benchmark's --param values, each a parameter the benchmark takes.
std::map<std::string, std::string> checked_params(const Benchmark& bench, const std::vector<std::string>& given) {
  std::map<std::string, std::string> out;
  const auto known = bench.option_names();
  for (const std::string& kv : given) {
    auto [key, value] = parse_param(kv);
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw std::invalid_argument(known.empty() ? fmt::format("{} takes no --param (got '{}')", bench.name(), key)
                                                : fmt::format("unknown --param '{}' for {} (known: {})", key, bench.name(),
                                                              fmt::join(known, ", ")));
    out[key] = value;
  }
  return out;
}

// Everything `copbench run` checks before it starts a worker; the request to start it.
LaunchRequest run_request(const RunOptions& o) {
  const BackendSpec& spec = checked_backend(o.where.backend);
  const Benchmark* bench = find_benchmark(o.bench);
  if (!bench) throw std::invalid_argument(fmt::format("unknown benchmark '{}' (see `copbench list`)", o.bench));
  WorkerArgs w;
  w.benchmark = o.bench;
  if (!o.sizes.empty()) {
    w.params.sizes = parse_sizes(o.sizes);  // throws naming the bad item
    if (bench->default_sizes().empty()) throw std::invalid_argument(fmt::format("{} takes no sizes", bench->name()));
  }
  w.params.options = checked_params(*bench, o.params);
  bench->check_options(w.params);
  if (auto missing = missing_ops(*bench, spec); !missing.empty())
    throw std::invalid_argument(fmt::format("{} is not offered by {} (no {})", bench->name(), spec.name, join_ops(missing)));
  LaunchRequest req = checked_request(spec, o.where, bench->min_ranks());
  w.route = req.worker.route;
  w.encoding = req.worker.encoding;
  w.platform = req.worker.platform;
  // A simulation is deterministic (smpi and sim-cop, the backends --platform is for):
  // every repetition and iteration gives the same time, so one kept repetition of 3
  // iterations after 1 warm-up says what 10 of 30 would, at a 4096-node point in a minute
  // instead of a quarter of an hour (the timing of suite/campaigns/simulate.yml).
  const bool simulated = !w.platform.empty();
  w.params.timing.min_reps = o.reps > 0 ? o.reps : simulated ? 1 : 10;
  w.params.timing.max_reps = o.max_reps > 0 ? o.max_reps : simulated && o.reps <= 0 ? 1 : 0;
  w.params.timing.iterations = o.iters > 0 ? o.iters : simulated ? 3 : 30;
  w.params.timing.warmup = o.warmup >= 0 ? o.warmup : simulated ? 1 : 10;
  if (o.methods) {
    try {
      w.params.timing.methods = parse_methods(*o.methods);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--methods '") + *o.methods + "': " + e.what());
    }
  }
  // A simulated run's links are its platform's, not this machine's loopback (no space:
  // smpirun, a shell script, splits its arguments again at spaces).
  w.context.link_profile = !o.link_profile.empty()      ? o.link_profile
                           : !w.platform.empty()        ? "simulated:" + w.platform
                           : o.where.hostfile.empty()   ? "loopback"
                                                        : "cluster";
  w.context.commit = source_commit();
  req.worker = std::move(w);
  return req;
}

}  // namespace

const BackendSpec& checked_backend(const std::string& name) {
  const BackendSpec* spec = find_backend_spec(name);
  if (!spec) throw std::invalid_argument(fmt::format("unknown backend '{}' (known: {})", name, known_backends()));
  return *spec;
}

int parse_tasks_per_node(const std::string& text) {
  int t = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || t < 1)
    throw std::invalid_argument(fmt::format("--tasks-per-node '{}': expected a whole number of tasks, at least 1", text));
  return t;
}

void check_nodes(const BackendSpec& spec, int nodes, int tasks_per_node, int min_ranks, const std::string& hostfile) {
  const long long ranks = static_cast<long long>(nodes) * tasks_per_node;
  // With one task per node a rank is a node, and the messages say so.
  const std::string what = tasks_per_node == 1
                               ? fmt::format("--nodes {}", nodes)
                               : fmt::format("--nodes {} x --tasks-per-node {} = {} ranks", nodes, tasks_per_node, ranks);
  if (nodes < 1) throw std::invalid_argument(fmt::format("--nodes {}: needs at least 1", nodes));
  if (ranks < min_ranks) throw std::invalid_argument(fmt::format("{}: needs at least {}", what, min_ranks));
  if (!hostfile.empty() && tasks_per_node > 1) {
    // mpirun maps tasks_per_node ranks to each host (--map-by ppr:T:node): nodes are hosts.
    int hosts = cluster_hosts(hostfile);
    if (nodes > hosts)
      throw std::invalid_argument(
          fmt::format("--nodes {}: the cluster in {} names {} host{}", nodes, hostfile, hosts, hosts == 1 ? "" : "s"));
    return;
  }
  int available = available_nodes(spec, hostfile);
  if (ranks > available)
    throw std::invalid_argument(
        hostfile.empty()
            ? fmt::format("{}: this machine offers at most {} {}; give --hostfile for a cluster", what, available,
                          tasks_per_node == 1 ? "nodes (ranks on loopback)" : "ranks on loopback")
            : fmt::format("--nodes {}: the cluster in {} has {} slots", nodes, hostfile, available));
}

void check_route(const BackendSpec& spec, const std::string& route, const std::string& encoding) {
  auto contains = [](const std::vector<std::string>& v, const std::string& x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (!route.empty() && !contains(spec.routes, route))
    throw std::invalid_argument(fmt::format("unknown route '{}' for {} (known: {})", route, spec.name,
                                            spec.routes.empty() ? "none" : fmt::format("{}", fmt::join(spec.routes, ", "))));
  if (!encoding.empty() && !contains(spec.encodings, encoding))
    throw std::invalid_argument(fmt::format("unknown encoding '{}' for {} (known: {})", encoding, spec.name,
                                            spec.encodings.empty() ? "none" : fmt::format("{}", fmt::join(spec.encodings, ", "))));
}

void check_platform(const BackendSpec& spec, const std::string& platform) {
  if (!worker_launcher(spec).simulated()) {
    if (!platform.empty())
      throw std::invalid_argument(
          fmt::format("--platform {}: {} runs on real nodes (only smpi and sim-cop are simulated)", platform, spec.name));
    return;
  }
  if (platform.empty()) throw std::invalid_argument(fmt::format("{} needs --platform NAME (e.g. thesis, present)", spec.name));
  const std::string file = platform_file(platform);
  if (platform.find('/') != std::string::npos || !std::filesystem::exists(file))
    throw std::invalid_argument(fmt::format("--platform {}: no platform file {}", platform, file));
}

LaunchRequest checked_request(const BackendSpec& spec, const Placement& where, int min_ranks) {
  check_route(spec, where.route, where.encoding);
  check_platform(spec, where.platform);
  const int tasks_per_node = parse_tasks_per_node(where.tasks_per_node);
  check_nodes(spec, where.nodes, tasks_per_node, min_ranks, where.hostfile);
  if (auto problem = runtime_problem(spec, where.hostfile)) throw std::runtime_error(spec.name + ": " + *problem);
  LaunchRequest req;
  req.spec = &spec;
  req.nodes = where.nodes;
  req.tasks_per_node = tasks_per_node;
  req.hostfile = where.hostfile;
  req.timeout_s = where.timeout;
  req.worker.route = where.route;
  req.worker.encoding = where.encoding;
  req.worker.platform = where.platform;
  return req;
}

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "run one benchmark on one backend");
  run->add_option("bench", opt->bench, "benchmark (see `copbench list`)")->required();
  run->add_option("--backend", opt->where.backend, "backend: pvm, mpi, smpi, armci, cop, sim-cop (copbench list shows what each offers)")->required();
  run->add_option("--nodes", opt->where.nodes, "nodes; on one machine, emulated by ranks on loopback")
      ->check(whole_number(1));
  run->add_option("--tasks-per-node", opt->where.tasks_per_node,
                  "ranks per node (default 1); ranks k*T .. k*T+T-1 on node k");
  run->add_option("--sizes", opt->sizes, "sizes in bytes, e.g. 0,8,1K,64K");
  run->add_option("--param", opt->params, "KEY=VALUE parameter of an application (repeatable), e.g. steps=256");
  run->add_option("--reps", opt->reps, "repetitions to keep at least (default 10; 1 simulated: --platform)")
      ->check(whole_number(1));
  run->add_option("--max-reps", opt->max_reps, "give up the 10 % CI target after this many (default 4x reps; 1 simulated)")
      ->check(whole_number(1));
  run->add_option("--iters", opt->iters, "timed iterations per repetition (default 30; 3 simulated)")
      ->check(whole_number(1));
  run->add_option("--warmup", opt->warmup, "warm-up iterations (default 10; 1 simulated)")->check(whole_number(0));
  run->add_option("--methods", opt->methods,
                  "how a collective is timed, a point each: window, sync, loop, e.g. window or window,sync (default all "
                  "three); an application's runs: window, or sync where only it is named");
  run->add_option("--route", opt->where.route, "route or mode (pvm: normal, direct)");
  run->add_option("--encoding", opt->where.encoding, "PVM data encoding: default, raw, inplace");
  run->add_option("--hostfile", opt->where.hostfile, "a cluster's hosts (mpirun hostfile syntax)");
  run->add_option("--platform", opt->where.platform, "smpi, sim-cop: the simulated platform, results/platforms/NAME.xml");
  run->add_option("--link-profile", opt->link_profile, "link profile recorded in the results (default loopback / cluster)");
  run->add_option("--out", opt->out, "write Google Benchmark JSON here (atomically)");
  run->add_option("--timeout", opt->where.timeout, "seconds before the run is killed")->check(whole_number(1));
  run->add_flag("--json", opt->json_only, "print the JSON instead of the table");
  run->callback([opt] {
    LaunchRequest req = run_request(*opt);
    cancel_launches_on_signals();
    LaunchOutcome outcome = launch(req);
    if (outcome.exit_code != 0) throw std::runtime_error(outcome.error);

    nlohmann::json result = nlohmann::json::parse(outcome.result);
    if (opt->json_only)
      std::fputs((result.dump(2) + "\n").c_str(), stdout);
    else
      std::fputs(render_table(result).c_str(), stdout);
    if (!opt->out.empty()) write_file_atomically(opt->out, result.dump(2) + "\n");
  });
}

}  // namespace copbench::cli
