// The catalog lookup and mpirun's rank numbering shared by the backends (catalog_backend.h).
#include "common/catalog_backend.h"

#include <stdexcept>

namespace copbench::baselines {

CatalogBackend::CatalogBackend(std::string_view name) : spec_(find_backend_spec(name)) {
  if (spec_ == nullptr)
    throw std::logic_error("backend '" + std::string(name) + "' is missing from baselines/backends.json");
}

void MpirunBackend::set_tasks_per_node(int t) {
  if (t < 1 || size_ % t != 0)
    throw std::invalid_argument(std::to_string(size_) + " ranks do not make whole nodes of " + std::to_string(t) +
                                " tasks");
  tasks_per_node_ = t;
}

}  // namespace copbench::baselines
