// lock, shared words and fences: MPI-3 RMA, passive target.
// - Shared words live in one window under a lock_all epoch; reads, writes and
//   fetch-and-add are MPI_Fetch_and_op (NO_OP / SUM) and MPI_Accumulate (REPLACE), which
//   MPI makes atomic with respect to each other. A write completes locally
//   (flush_local); Fence / AllFence are MPI_Win_flush / MPI_Win_flush_all.
// - A lock is an exclusive epoch on a second window. MPI may defer acquiring it until the
//   first operation, so lock() makes one Get and flushes: on return the lock is held.
#include "mpi/mpi_backend.h"

namespace copbench::mpi {

void MpiBackend::setup_rma() {
  MPI_Win_allocate(static_cast<MPI_Aint>(kSharedWords * sizeof(std::int64_t)), sizeof(std::int64_t),
                   MPI_INFO_NULL, comm_, &words_, &words_win_);
  MPI_Win_allocate(static_cast<MPI_Aint>(kLocks * sizeof(std::int64_t)), sizeof(std::int64_t),
                   MPI_INFO_NULL, comm_, &lock_words_, &lock_win_);
  for (int i = 0; i < kSharedWords; ++i) words_[i] = 0;
  for (int i = 0; i < kLocks; ++i) lock_words_[i] = 0;
  MPI_Barrier(comm_);
  MPI_Win_lock_all(0, words_win_);
}

void MpiBackend::free_rma() {
  MPI_Win_unlock_all(words_win_);
  MPI_Barrier(comm_);
  MPI_Win_free(&words_win_);
  MPI_Win_free(&lock_win_);
}

void MpiBackend::lock(int lock_id) {
  const int target = lock_id % size_;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
  std::int64_t probe = 0;
  MPI_Get(&probe, 1, MPI_INT64_T, target, lock_id % kLocks, 1, MPI_INT64_T, lock_win_);
  MPI_Win_flush(target, lock_win_);
}

void MpiBackend::unlock(int lock_id) { MPI_Win_unlock(lock_id % size_, lock_win_); }

std::int64_t MpiBackend::shared_read(int owner, int index) {
  std::int64_t value = 0;
  MPI_Fetch_and_op(nullptr, &value, MPI_INT64_T, owner, index, MPI_NO_OP, words_win_);
  MPI_Win_flush(owner, words_win_);
  return value;
}

void MpiBackend::shared_write(int owner, int index, std::int64_t value) {
  MPI_Accumulate(&value, 1, MPI_INT64_T, owner, index, 1, MPI_INT64_T, MPI_REPLACE, words_win_);
  MPI_Win_flush_local(owner, words_win_);
}

std::int64_t MpiBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  std::int64_t old = 0;
  MPI_Fetch_and_op(&add, &old, MPI_INT64_T, owner, index, MPI_SUM, words_win_);
  MPI_Win_flush(owner, words_win_);
  return old;
}

std::int64_t MpiBackend::shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired) {
  std::int64_t old = 0;
  MPI_Compare_and_swap(&desired, &expected, &old, MPI_INT64_T, owner, index, words_win_);
  MPI_Win_flush(owner, words_win_);
  return old;
}

void MpiBackend::fence(int target) { MPI_Win_flush(target, words_win_); }

void MpiBackend::all_fence() { MPI_Win_flush_all(words_win_); }

}  // namespace copbench::mpi
