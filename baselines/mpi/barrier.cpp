// barrier: MPI_Barrier, and its bare loop (barrier, then a timed barrier, per iteration).
#include "copbench/timing.h"
#include "mpi/mpi_backend.h"

namespace copbench::mpi {

void MpiBackend::barrier() { MPI_Barrier(comm_); }

double MpiBackend::bare_barrier_loop(int iterations) {
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  for (double& x : seconds) {
    MPI_Barrier(comm_);
    double t0 = now_seconds();
    MPI_Barrier(comm_);
    double t1 = now_seconds();
    x = t1 - t0;
  }
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), iterations, MPI_DOUBLE, MPI_MAX, comm_);
  double sum = 0;
  for (double x : seconds) sum += x;
  return sum / iterations;
}

}  // namespace copbench::mpi
