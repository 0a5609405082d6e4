// `copbench verify --backend NAME --nodes N`: checks every offered operation of a backend
// against a local computation (what CI runs on 1..4 nodes).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/checks.h"
#include "cli/commands.h"
#include "copbench/launch.h"

namespace copbench::cli {

void add_verify_command(CLI::App& app) {
  struct Options {
    std::string backend;
    int nodes = 2;
    std::string tasks_per_node = "1";
    std::string route, encoding, hostfile;
    int timeout = 300;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* verify = app.add_subcommand("verify", "check a backend's operations give correct results");
  verify->add_option("--backend", opt->backend, "backend")->required();
  verify->add_option("--nodes", opt->nodes, "nodes");
  verify->add_option("--tasks-per-node", opt->tasks_per_node, "ranks per node (default 1), in blocks");
  verify->add_option("--route", opt->route, "route or mode");
  verify->add_option("--encoding", opt->encoding, "PVM data encoding");
  verify->add_option("--hostfile", opt->hostfile, "a cluster's hosts");
  verify->add_option("--timeout", opt->timeout, "seconds before the run is killed");
  verify->callback([opt] {
    const BackendSpec& spec = checked_backend(opt->backend);
    check_route(spec, opt->route, opt->encoding);
    const int tasks_per_node = parse_tasks_per_node(opt->tasks_per_node);
    check_nodes(spec, opt->nodes, tasks_per_node, 1, opt->hostfile);
    if (auto problem = runtime_problem(spec, opt->hostfile)) throw std::runtime_error(spec.name + ": " + *problem);
    LaunchRequest req;
    req.spec = &spec;
    req.nodes = opt->nodes;
    req.tasks_per_node = tasks_per_node;
    req.hostfile = opt->hostfile;
    req.timeout_s = opt->timeout;
    req.worker_args = {"--verify"};
    if (!opt->route.empty()) req.worker_args.insert(req.worker_args.end(), {"--route", opt->route});
    if (!opt->encoding.empty()) req.worker_args.insert(req.worker_args.end(), {"--encoding", opt->encoding});
    LaunchOutcome outcome = launch(req);
    if (!outcome.result.empty()) {
      nlohmann::json j = nlohmann::json::parse(outcome.result);
      std::printf("%s (route %s) on %d nodes x %d tasks:\n", j.value("backend", "").c_str(),
                  j.value("route", "").c_str(), j.value("nodes", 0), j.value("tasks_per_node", 1));
      for (const auto& line : j["checks"]) std::printf("  %s\n", line.get<std::string>().c_str());
    }
    if (outcome.exit_code != 0) throw std::runtime_error(outcome.error);
  });
}

}  // namespace copbench::cli
