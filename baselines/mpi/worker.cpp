// copbench-worker-mpi: started by `copbench run` through mpirun.
#include <exception>

#include "copbench/worker.h"
#include "mpi/mpi_backend.h"

int main(int argc, char** argv) {
  copbench::mpi::MpiBackend backend(&argc, &argv);
  copbench::WorkerArgs args;
  try {
    args = copbench::parse_worker_args(argc, argv);
    backend.set_tasks_per_node(args.tasks_per_node);
    // Whether waiting ranks yield the core changes every time measured here: say which.
    args.context.settings["mpi_yield_when_idle"] = backend.mca_setting("mpi_yield_when_idle");
    return copbench::run_worker(backend, args);  // every rank agrees on a failed verification
  } catch (const std::exception& e) {
    // Only the failing rank knows; abort the job so the others do not wait forever.
    copbench::report_worker_error(args, e.what());
    backend.abort(2);
  }
  return 2;
}
