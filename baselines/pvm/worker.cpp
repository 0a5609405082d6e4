// copbench-worker-pvm: rank 0 is started by `copbench run` and enrolls in the running
// virtual machine; it pvm_spawns the other ranks (same program, same arguments) and the
// lock / shared-variable server (--pvm-server=N).
#include <cstdlib>
#include <cstring>

#include "common/task_worker.h"
#include "pvm/pvm_backend.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--pvm-server=", 13) == 0) {  // "--pvm-server=NODES,TIMEOUT"
    const char* comma = std::strchr(argv[1], ',');
    return copbench::pvm::run_server(std::atoi(argv[1] + 13), comma ? std::atoi(comma + 1) : 0);
  }
  using copbench::pvm::PvmOptions;
  return copbench::baselines::run_task_worker<copbench::pvm::PvmBackend, PvmOptions>(
      argc, argv, [](copbench::WorkerArgs& args) {
        PvmOptions options;
        options.route = args.route;
        if (args.encoding.empty()) args.encoding = "default";
        options.encoding = args.encoding;
        options.nodes = args.nodes;
        options.tasks_per_node = args.tasks_per_node;
        options.timeout_s = args.timeout_s;
        options.spawn_args = args.raw;
        return options;
      });
}
