// `copbench run BENCH --backend NAME --nodes N ...`: one benchmark on one backend.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/checks.h"
#include "cli/commands.h"
#include "copbench/launch.h"
#include "copbench/results.h"

namespace copbench::cli {
namespace {

struct RunOptions {
  std::string bench;
  std::string backend;
  int nodes = 2;
  std::string tasks_per_node = "1";
  std::string sizes;
  std::vector<std::string> params;
  int reps = 10;
  int max_reps = 0;
  int iters = 30;
  int warmup = 10;
  std::string route;
  std::string encoding;
  std::string hostfile;
  std::string link_profile;
  std::string out;
  int timeout = 600;
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

void add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* run = app.add_subcommand("run", "run one benchmark on one backend");
  run->add_option("bench", opt->bench, "benchmark (see `copbench list`)")->required();
  run->add_option("--backend", opt->backend, "backend: pvm, mpi, armci, cop (copbench list shows what each offers)")->required();
  run->add_option("--nodes", opt->nodes, "nodes; on one machine, emulated by ranks on loopback");
  run->add_option("--tasks-per-node", opt->tasks_per_node,
                  "ranks per node (default 1); ranks k*T .. k*T+T-1 on node k");
  run->add_option("--sizes", opt->sizes, "sizes in bytes, e.g. 0,8,1K,64K");
  run->add_option("--param", opt->params, "KEY=VALUE parameter of an application (repeatable), e.g. steps=256");
  run->add_option("--reps", opt->reps, "repetitions to keep at least")->check(CLI::PositiveNumber);
  run->add_option("--max-reps", opt->max_reps, "give up the 10 % CI target after this many (default 4x reps)");
  run->add_option("--iters", opt->iters, "timed iterations per repetition")->check(CLI::PositiveNumber);
  run->add_option("--warmup", opt->warmup, "warm-up iterations")->check(CLI::NonNegativeNumber);
  run->add_option("--route", opt->route, "route or mode (pvm: normal, direct)");
  run->add_option("--encoding", opt->encoding, "PVM data encoding: default, raw, inplace");
  run->add_option("--hostfile", opt->hostfile, "a cluster's hosts (mpirun hostfile syntax)");
  run->add_option("--link-profile", opt->link_profile, "link profile recorded in the results (default loopback / cluster)");
  run->add_option("--out", opt->out, "write Google Benchmark JSON here (atomically)");
  run->add_option("--timeout", opt->timeout, "seconds before the run is killed")->check(CLI::PositiveNumber);
  run->add_flag("--json", opt->json_only, "print the JSON instead of the table");
  run->callback([opt] {
    const BackendSpec& spec = checked_backend(opt->backend);
    const Benchmark* bench = find_benchmark(opt->bench);
    if (!bench) throw std::invalid_argument(fmt::format("unknown benchmark '{}' (see `copbench list`)", opt->bench));
    if (!opt->sizes.empty()) {
      parse_sizes(opt->sizes);  // throws naming the bad item
      if (bench->default_sizes().empty())
        throw std::invalid_argument(fmt::format("{} takes no sizes", bench->name()));
    }
    RunParams checked;
    if (!opt->sizes.empty()) checked.sizes = parse_sizes(opt->sizes);
    for (const std::string& kv : opt->params) {
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        throw std::invalid_argument(fmt::format("--param '{}': expected KEY=VALUE", kv));
      std::string key = kv.substr(0, eq);
      auto known = bench->option_names();
      if (std::find(known.begin(), known.end(), key) == known.end())
        throw std::invalid_argument(known.empty() ? fmt::format("{} takes no --param (got '{}')", bench->name(), key)
                                                  : fmt::format("unknown --param '{}' for {} (known: {})", key, bench->name(),
                                                                fmt::join(known, ", ")));
      checked.options[key] = kv.substr(eq + 1);
    }
    bench->check_options(checked);
    if (auto missing = missing_ops(*bench, spec); !missing.empty())
      throw std::invalid_argument(fmt::format("{} is not offered by {} (no {})", bench->name(), spec.name, join_ops(missing)));
    check_route(spec, opt->route, opt->encoding);
    const int tasks_per_node = parse_tasks_per_node(opt->tasks_per_node);
    check_nodes(spec, opt->nodes, tasks_per_node, bench->min_ranks(), opt->hostfile);
    if (auto problem = runtime_problem(spec, opt->hostfile)) throw std::runtime_error(spec.name + ": " + *problem);

    LaunchRequest req;
    req.spec = &spec;
    req.nodes = opt->nodes;
    req.tasks_per_node = tasks_per_node;
    req.hostfile = opt->hostfile;
    req.timeout_s = opt->timeout;
    std::string link = !opt->link_profile.empty() ? opt->link_profile : opt->hostfile.empty() ? "loopback" : "cluster";
    req.worker_args = {"--bench", opt->bench, "--reps", std::to_string(opt->reps),
                       "--max-reps", std::to_string(opt->max_reps > 0 ? opt->max_reps : 4 * opt->reps),
                       "--iters", std::to_string(opt->iters), "--warmup", std::to_string(opt->warmup),
                       "--link-profile", link, "--commit", source_commit()};
    if (!opt->sizes.empty()) req.worker_args.insert(req.worker_args.end(), {"--sizes", opt->sizes});
    for (const std::string& kv : opt->params) req.worker_args.insert(req.worker_args.end(), {"--param", kv});
    if (!opt->route.empty()) req.worker_args.insert(req.worker_args.end(), {"--route", opt->route});
    if (!opt->encoding.empty()) req.worker_args.insert(req.worker_args.end(), {"--encoding", opt->encoding});
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
