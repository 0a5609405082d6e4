// The backends copbench knows, in the order `copbench list` shows them. Each spec is
// defined beside its backend (baselines/<name>/spec.cpp); cop adds its own when libcop lands.
#include "copbench/bench.h"

namespace copbench {

BackendSpec mpi_spec();
BackendSpec armci_spec();
BackendSpec pvm_spec();

const std::vector<BackendSpec>& all_backend_specs() {
  static const std::vector<BackendSpec> specs = {pvm_spec(), mpi_spec(), armci_spec()};
  return specs;
}

}  // namespace copbench
