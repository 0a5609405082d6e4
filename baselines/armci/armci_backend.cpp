// Bringing ARMCI up and down, the harness services, and what is offered.
#include "armci/armci_backend.h"

#include <stdexcept>
#include <string>

#include "armci/armci_c.h"

#include "copbench/bench.h"

namespace copbench::armci {

ArmciBackend::ArmciBackend(int* argc, char*** argv) : MpirunBackend("armci") {
  MPI_Init(argc, argv);
  armci_check(ARMCI_Init(), "ARMCI_Init");
  rank_ = armci_msg_me();
  size_ = armci_msg_nproc();
  // Only what the run uses is set up (the worker's command line says): echo and the
  // collectives run with no ARMCI_Malloc'd memory and no mutexes.
  const std::vector<Op> used = ops_of_worker_command(*argc, *argv);
  if (uses_any(used, {Op::shared_read, Op::shared_write, Op::shared_rmw, Op::shared_cas, Op::fence,
                      Op::fence_window, Op::fence_barrier})) {
    bases_.resize(static_cast<std::size_t>(size_));
    armci_check(ARMCI_Malloc(bases_.data(), static_cast<armci_size_t>(kSharedWords * sizeof(std::int64_t))),
                "ARMCI_Malloc");
    // ARMCI-MPI memory is only touched locally inside an access epoch.
    ARMCI_Access_begin(bases_[static_cast<std::size_t>(rank_)]);
    for (int i = 0; i < kSharedWords; ++i) *word(rank_, i) = 0;
    ARMCI_Access_end(bases_[static_cast<std::size_t>(rank_)]);
  }
  if (uses_any(used, {Op::lock})) {
    armci_check(ARMCI_Create_mutexes(kLocks), "ARMCI_Create_mutexes");
    mutexes_ = true;
  }
  ARMCI_Barrier();
}

ArmciBackend::~ArmciBackend() {
  ARMCI_Barrier();
  if (mutexes_) ARMCI_Destroy_mutexes();
  if (!bases_.empty()) ARMCI_Free(bases_[static_cast<std::size_t>(rank_)]);
  ARMCI_Finalize();
  MPI_Finalize();
}

std::int64_t* ArmciBackend::word(int owner, int index) const {
  if (bases_.empty())
    throw std::logic_error("armci: a shared word or fence was used by a run that did not declare it "
                           "(the benchmark's needs() or optional_ops()), so none was allocated");
  return static_cast<std::int64_t*>(bases_[static_cast<std::size_t>(owner)]) + index;
}

void ArmciBackend::need_mutexes() const {
  if (!mutexes_) throw std::logic_error("armci: lock was used by a run that did not declare it, so no mutexes exist");
}

void ArmciBackend::sync() { armci_msg_barrier(); }

void ArmciBackend::max_over_ranks(std::span<double> values) {
  armci_msg_dgop(values.data(), static_cast<int>(values.size()), const_cast<char*>("max"));
}

void ArmciBackend::abort(int code) { armci_msg_abort(code); }

}  // namespace copbench::armci
