// barrier: pvm_barrier on the run's frozen group (through the group server pvmgs), and
// its bare loop.
#include <pvm3.h>

#include "copbench/timing.h"
#include "pvm/pvm_backend.h"

namespace copbench::pvm {

// PvmAutoErr is off (tasks.cpp), so a failed barrier only says so in its return code: a
// barrier that did not happen must fail the point, not be timed.
void PvmBackend::barrier() { pvm_check(pvm_barrier(group_.data(), ranks()), "pvm_barrier"); }

double PvmBackend::bare_barrier_loop(int iterations) {
  std::vector<double> seconds(static_cast<std::size_t>(iterations));
  const int n = ranks();
  for (double& x : seconds) {
    pvm_check(pvm_barrier(group_.data(), n), "pvm_barrier");
    double t0 = now_seconds();
    pvm_check(pvm_barrier(group_.data(), n), "pvm_barrier");
    double t1 = now_seconds();
    x = t1 - t0;
  }
  max_over_ranks(seconds);
  double sum = 0;
  for (double x : seconds) sum += x;
  return sum / iterations;
}

}  // namespace copbench::pvm
