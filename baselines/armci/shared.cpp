// lock, shared words and fences: ARMCI_Lock / ARMCI_Unlock on mutexes of rank 0,
// ARMCI_Get / ARMCI_Put / ARMCI_Rmw (fetch-and-add long), ARMCI_Fence / ARMCI_AllFence.
#include "armci/armci_c.h"

#include "armci/armci_backend.h"

namespace copbench::armci {
namespace {

// Open MPI's osc pt2pt serves other ranks' requests on this rank's memory only while this
// rank is inside MPI, and ARMCI-MPI's operations on the caller's own memory do not enter
// the progress engine. A rank spinning on its own words (the ticket lock's owner) would
// starve everyone else; a probe after each such operation keeps requests moving.
void progress_if_local(int owner, int me) {
  if (owner != me) return;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
}

}  // namespace

void ArmciBackend::lock(int lock_id) {
  need_mutexes();
  ARMCI_Lock(lock_id % kLocks, 0);
}

void ArmciBackend::unlock(int lock_id) {
  need_mutexes();
  ARMCI_Unlock(lock_id % kLocks, 0);
}

std::int64_t ArmciBackend::shared_read(int owner, int index) {
  std::int64_t value = 0;
  armci_check(ARMCI_Get(word(owner, index), &value, sizeof value, owner), "ARMCI_Get");
  progress_if_local(owner, rank_);
  return value;
}

void ArmciBackend::shared_write(int owner, int index, std::int64_t value) {
  armci_check(ARMCI_Put(&value, word(owner, index), sizeof value, owner), "ARMCI_Put");
  progress_if_local(owner, rank_);
}

std::int64_t ArmciBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  static_assert(sizeof(long) == sizeof(std::int64_t));
  long old = 0;
  armci_check(ARMCI_Rmw(ARMCI_FETCH_AND_ADD_LONG, &old, word(owner, index), static_cast<int>(add), owner),
              "ARMCI_Rmw");
  progress_if_local(owner, rank_);
  return old;
}

void ArmciBackend::fence(int target) { ARMCI_Fence(target); }

void ArmciBackend::all_fence() { ARMCI_AllFence(); }

}  // namespace copbench::armci
