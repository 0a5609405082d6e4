// barrier: cop_barrier on the run's group (BENTRY on one GAS word; tasks of one host meet
// in the channel window first), and its bare loop.
#include <cop/cop.h>

#include "cop/cop_backend.h"
#include "copbench/timing.h"

namespace copbench::cop {

void CopBackend::barrier() { check(cop_barrier(group_.data(), nodes(), kBarrierTag), "cop_barrier"); }

double CopBackend::bare_barrier_loop(int iterations) {
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  const int n = nodes();
  for (double& x : seconds) {
    cop_barrier(group_.data(), n, kSyncBarrierTag);
    double t0 = now_seconds();
    cop_barrier(group_.data(), n, kBarrierTag);
    double t1 = now_seconds();
    x = t1 - t0;
  }
  max_over_ranks(seconds);
  double sum = 0;
  for (double x : seconds) sum += x;
  return sum / iterations;
}

}  // namespace copbench::cop
