// copbench-worker-cop: rank 0 is started by `copbench run` (its cop_master launcher
// starts a private pvmd and COP stack unless told to use running ones) and enrolls in PVM; it pvm_spawns
// the other ranks with the same arguments plus --cop-driver=DIR, the channel driver of
// that rank's emulated node.
#include <cstring>
#include <string>
#include <vector>

#include "common/task_worker.h"
#include "cop/cop_backend.h"

int main(int argc, char** argv) {
  // Our own argument first; the rest is the suite's worker command line.
  std::string driver;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--cop-driver=", 13) == 0)
      driver = argv[i] + 13;
    else
      rest.push_back(argv[i]);
  }
  using copbench::cop::CopOptions;
  return copbench::baselines::run_task_worker<copbench::cop::CopBackend, CopOptions>(
      static_cast<int>(rest.size()), rest.data(), [&](copbench::WorkerArgs& args) {
        CopOptions options;
        options.route = args.route.empty() ? "direct" : args.route;
        options.nodes = args.nodes;
        options.tasks_per_node = args.tasks_per_node;
        options.timeout_s = args.timeout_s;
        options.driver = driver;
        options.spawn_args = args.raw;
        return options;
      });
}
