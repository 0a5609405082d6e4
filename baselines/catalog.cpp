// The backends copbench knows, in the order `copbench list` shows them. Each spec is
// defined beside its backend (baselines/<name>/spec.cpp).
#include "copbench/bench.h"

namespace copbench {

BackendSpec mpi_spec();
BackendSpec armci_spec();
BackendSpec pvm_spec();
BackendSpec cop_spec();

const std::vector<BackendSpec>& all_backend_specs() {
  static const std::vector<BackendSpec> specs = {cop_spec(), pvm_spec(), mpi_spec(), armci_spec()};
  return specs;
}

}  // namespace copbench
