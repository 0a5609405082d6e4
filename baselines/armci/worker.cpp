// copbench-worker-armci: started by `copbench run` through mpirun --mca osc pt2pt.
#include <exception>

#include "armci/armci_backend.h"
#include "copbench/worker.h"

int main(int argc, char** argv) {
  copbench::armci::ArmciBackend backend(&argc, &argv);
  copbench::WorkerArgs args;
  try {
    args = copbench::parse_worker_args(argc, argv);
    backend.set_tasks_per_node(args.tasks_per_node);
    return copbench::run_worker(backend, args);
  } catch (const std::exception& e) {
    copbench::report_worker_error(args, e.what());
    backend.abort(2);
  }
  return 2;
}
