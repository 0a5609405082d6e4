// What the armci backend offers: ARMCI-MPI's one-sided operations, mutexes and fences,
// and ARMCI's message layer (armci_msg_*) for echo, barrier, reduce and broadcast.
// ARMCI has no multicast, gather, scatter or scan, and its Rmw has no compare-and-swap.
#include "copbench/bench.h"

namespace copbench {

BackendSpec armci_spec() {
  BackendSpec s;
  s.name = "armci";
  s.summary = "ARMCI-MPI (Debian libarmci-mpi-dev): Get/Put/Rmw, ARMCI_Lock, Fence/AllFence, armci_msg_*";
  s.worker = "copbench-worker-armci";
  s.launcher = Launcher::mpirun;
  s.mpirun_args = {"--mca", "osc", "pt2pt"};
  s.offered = {Op::echo,        Op::barrier,      Op::reduce,     Op::broadcast, Op::lock,
               Op::shared_read, Op::shared_write, Op::shared_rmw, Op::fence,     Op::bare_loops};
  return s;
}

}  // namespace copbench
