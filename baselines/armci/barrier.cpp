// barrier: ARMCI_Barrier (in ARMCI-MPI an AllFence and an MPI barrier), the same call as the
// combined fence + barrier, the plain MPI_Barrier of seed 004's baseline, and the bare loop.
#include "armci/armci_c.h"

#include "armci/armci_backend.h"
#include "copbench/timing.h"

namespace copbench::armci {

void ArmciBackend::barrier() { ARMCI_Barrier(); }

// ARMCI's own fence + barrier call. In ARMCI-MPI 0.3.1 (Debian's) it is not seed 004's
// counting algorithm but the pair itself: MPI_Win_flush_all on every allocation (what
// ARMCI_AllFence does), MPI_Barrier, then MPI_Win_sync on every allocation.
void ArmciBackend::fence_barrier() { ARMCI_Barrier(); }

// Seed 004's baseline barrier: a plain MPI_Barrier, without the AllFence inside ARMCI_Barrier.
void ArmciBackend::message_barrier() { MPI_Barrier(MPI_COMM_WORLD); }

double ArmciBackend::bare_barrier_loop(int iterations) {
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  for (double& x : seconds) {
    armci_msg_barrier();
    double t0 = now_seconds();
    ARMCI_Barrier();
    double t1 = now_seconds();
    x = t1 - t0;
  }
  armci_msg_dgop(seconds.data(), iterations, const_cast<char*>("max"));
  double sum = 0;
  for (double x : seconds) sum += x;
  return sum / iterations;
}

}  // namespace copbench::armci
