// `copbench verify --backend NAME --nodes N`: checks every offered operation of a backend
// against a local computation (what CI runs on 1..4 nodes).
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/checks.h"
#include "cli/commands.h"
#include "copbench/launch.h"
#include "copbench/number_options.h"

namespace copbench::cli {

void add_verify_command(CLI::App& app) {
  auto opt = std::make_shared<Placement>();
  opt->timeout = 300;
  CLI::App* verify = app.add_subcommand("verify", "check a backend's operations give correct results");
  verify->add_option("--backend", opt->backend, "backend")->required();
  verify->add_option("--nodes", opt->nodes, "nodes")->check(whole_number(1));
  verify->add_option("--tasks-per-node", opt->tasks_per_node, "ranks per node (default 1), in blocks");
  verify->add_option("--route", opt->route, "route or mode");
  verify->add_option("--encoding", opt->encoding, "PVM data encoding");
  verify->add_option("--hostfile", opt->hostfile, "a cluster's hosts");
  verify->add_option("--platform", opt->platform, "smpi, sim-cop: the simulated platform, results/platforms/NAME.xml");
  verify->add_option("--timeout", opt->timeout, "seconds before the run is killed")->check(whole_number(1));
  verify->callback([opt] {
    LaunchRequest req = checked_request(checked_backend(opt->backend), *opt, 1);
    req.worker.verify = true;
    cancel_launches_on_signals();
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
