// The worker's command line. The CLI (launch.cpp) builds it; people rarely type it.
#include <CLI/CLI.hpp>

#include "copbench/worker.h"

namespace copbench {

WorkerArgs parse_worker_args(int argc, char** argv) {
  WorkerArgs a;
  for (int i = 1; i < argc; ++i) a.raw.emplace_back(argv[i]);
  CLI::App app{"copbench worker (started by `copbench run`)"};
  std::string sizes;
  std::vector<std::string> options;
  app.add_option("--bench", a.benchmark);
  app.add_flag("--verify", a.verify);
  app.add_option("--sizes", sizes);
  app.add_option("--param", options);
  app.add_option("--warmup", a.params.timing.warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--iters", a.params.timing.iterations)->check(CLI::PositiveNumber);
  app.add_option("--reps", a.params.timing.min_reps)->check(CLI::PositiveNumber);
  app.add_option("--max-reps", a.params.timing.max_reps)->check(CLI::PositiveNumber);
  app.add_option("--route", a.route);
  app.add_option("--encoding", a.encoding);
  app.add_option("--nodes", a.nodes)->check(CLI::PositiveNumber);
  app.add_option("--tasks-per-node", a.tasks_per_node)->check(CLI::PositiveNumber);
  app.add_option("--timeout", a.timeout_s)->check(CLI::NonNegativeNumber);
  app.add_option("--result", a.result_path);
  app.add_option("--error-file", a.error_path);
  app.add_option("--link-profile", a.context.link_profile);
  app.add_option("--commit", a.context.commit);
  app.allow_extras(false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(std::string("worker arguments: ") + e.what());
  }
  if (!sizes.empty()) a.params.sizes = parse_sizes(sizes);
  for (const std::string& kv : options) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument("worker: --param '" + kv + "' is not KEY=VALUE");
    a.params.options[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (a.benchmark.empty() && !a.verify) throw std::invalid_argument("worker: --bench or --verify is required");
  a.params.timing.max_reps = std::max(a.params.timing.max_reps, a.params.timing.min_reps + 1);
  return a;
}

}  // namespace copbench
