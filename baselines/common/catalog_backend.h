// What every backend of baselines/ does alike: its name and offered operations come from
// the catalog (baselines/backends.json), and it numbers its ranks the same way (nodes x
// tasks per node, rank r on node r / tasks_per_node).
#pragma once

#include <string>
#include <string_view>

#include "copbench/backend.h"
#include "copbench/catalog.h"

namespace copbench::baselines {

// Not copyable: a backend owns its system's state (MPI windows, PVM group membership).
class CatalogBackend : public Backend {
 public:
  CatalogBackend(const CatalogBackend&) = delete;
  CatalogBackend& operator=(const CatalogBackend&) = delete;
  std::string name() const override { return spec_->name; }
  int rank() const override { return rank_; }
  int tasks_per_node() const override { return tasks_per_node_; }
  bool offers(Op op) const override { return spec_->offers(op); }

 protected:
  // Throws std::logic_error when the catalog has no backend `name`.
  explicit CatalogBackend(std::string_view name);

  int rank_ = 0;
  int tasks_per_node_ = 1;

 private:
  const BackendSpec* spec_;
};

// Ranks started by mpirun (mpi, armci): mpirun started nodes x t ranks, t per node in
// blocks (suite/launch).
class MpirunBackend : public CatalogBackend {
 public:
  int ranks() const override { return size_; }
  // Throws unless the rank count is a multiple of t.
  void set_tasks_per_node(int t);

 protected:
  using CatalogBackend::CatalogBackend;
  int size_ = 1;
};

}  // namespace copbench::baselines
