// barrier: ARMCI_Barrier (in ARMCI-MPI an AllFence and an MPI barrier), and its bare loop.
#include "armci/armci_c.h"

#include "armci/armci_backend.h"
#include "copbench/timing.h"

namespace copbench::armci {

void ArmciBackend::barrier() { ARMCI_Barrier(); }

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
