// What the armci backend offers: ARMCI-MPI's one-sided operations, mutexes and fences,
// and ARMCI's message layer (armci_msg_*) for echo, barrier, reduce and broadcast.
// ARMCI has no multicast, gather, scatter or scan, and its Rmw has no compare-and-swap.
// Seed 004's items, from ARMCI-MPI 0.3.1's code (Debian's libarmci-mpi-dev):
// - fence_barrier is ARMCI_Barrier, ARMCI's fence + barrier call; there it is
//   MPI_Win_flush_all per allocation + MPI_Barrier + MPI_Win_sync, so it should measure
//   like the AllFence + MPI_Barrier baseline (seed 004's "current" method).
// - No fence_window: ARMCI_Fence is MPI_Win_flush (ARMCI_Put is MPI_Put/Accumulate +
//   flush_local), a blocking call, and ARMCI has no non-blocking fence, so no fence
//   request can be in flight while another is issued.
// - No server_lock: ARMCI-MPI has no server process or thread; ARMCI_Lock is an MPI-RMA
//   queue mutex (ARMCIX mutexes: MPI_Win_lock + Put/Get + MPI_Recv of the hand-over).
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
               Op::shared_read, Op::shared_write, Op::shared_rmw, Op::fence,     Op::fence_barrier,
               Op::bare_loops};
  return s;
}

}  // namespace copbench
