// What the mpi backend offers (the CLI reads this without linking MPI).
#include "copbench/bench.h"

namespace copbench {

BackendSpec mpi_spec() {
  BackendSpec s;
  s.name = "mpi";
  s.summary = "Open MPI: MPI_Send/Recv, collectives, MPI-3 RMA (passive target) for lock and shared words";
  s.worker = "copbench-worker-mpi";
  s.launcher = Launcher::mpirun;
  // osc/rdma fails over the TCP BTL and Debian disables pt2pt (CLUSTER-NOTES.md).
  s.mpirun_args = {"--mca", "osc", "pt2pt"};
  s.offered = {Op::echo,      Op::barrier,     Op::reduce,       Op::broadcast,  Op::multicast,
               Op::gather,    Op::scatter,     Op::scan,         Op::lock,       Op::shared_read,
               Op::shared_write, Op::shared_rmw, Op::shared_cas, Op::fence,      Op::fence_window,
               Op::server_lock,  Op::bare_loops};
  // Not offered: fence_barrier. Seed 004's combined fence + barrier counts, at each target,
  // the writes applied there; passive-target RMA gives the target no such count, and
  // MPI_Win_fence (which is that algorithm) needs an active-target epoch the shared words
  // cannot be in (shared.cpp).
  return s;
}

}  // namespace copbench
