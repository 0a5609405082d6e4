// copbench-worker-pvm: rank 0 is started by `copbench run` and enrolls in the running
// virtual machine; it pvm_spawns the other ranks (same program, same arguments) and the
// lock / shared-variable server (--pvm-server=N).
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>

#include "copbench/worker.h"
#include "pvm/pvm_backend.h"

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--pvm-server=", 13) == 0) {  // "--pvm-server=NODES,TIMEOUT"
    const char* comma = std::strchr(argv[1], ',');
    return copbench::pvm::run_server(std::atoi(argv[1] + 13), comma ? std::atoi(comma + 1) : 0);
  }

  copbench::WorkerArgs args;
  std::optional<copbench::pvm::PvmBackend> backend;
  try {
    args = copbench::parse_worker_args(argc, argv);
    copbench::pvm::PvmOptions options;
    options.route = args.route;
    options.encoding = args.encoding.empty() ? "default" : args.encoding;
    if (args.encoding.empty()) args.encoding = "default";
    options.nodes = args.nodes;
    options.tasks_per_node = args.tasks_per_node;
    options.timeout_s = args.timeout_s;
    options.spawn_args = args.raw;
    backend.emplace();
    backend->start(options);
    return copbench::run_worker(*backend, args);
  } catch (const std::exception& e) {
    copbench::report_worker_error(args, e.what());
    if (backend) backend->kill_all();
  }
  return 2;
}
