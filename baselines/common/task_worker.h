// The main of a worker whose backend starts after the command line is read (pvm, cop:
// rank 0 spawns the others, so there is nothing to start before parsing).
#pragma once

#include <exception>
#include <functional>
#include <optional>

#include "copbench/worker.h"

namespace copbench::baselines {

// Parses the suite's worker command line, starts a Backend with the options
// `options_of` makes from it, and runs the point. On an error the rank reports it first
// (so its message reaches the error file before the others are taken down), then ends
// the other ranks (kill_all). Returns the worker's exit code.
template <class Backend, class Options>
int run_task_worker(int argc, char** argv, const std::function<Options(WorkerArgs&)>& options_of) {
  WorkerArgs args;
  std::optional<Backend> backend;
  try {
    args = parse_worker_args(argc, argv);
    const Options options = options_of(args);
    backend.emplace();
    backend->start(options);
    return run_worker(*backend, args);
  } catch (const std::exception& e) {
    report_worker_error(args, e.what());
    if (backend) backend->kill_all();
  }
  return 2;
}

}  // namespace copbench::baselines
