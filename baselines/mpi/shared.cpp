// lock, shared words and fences: MPI-3 RMA, passive target.
// - The windows are opened only for a run that uses them (MpiBackend's constructor reads
//   the worker's command line): echo and the collectives are measured with no window and
//   no lock_all epoch open. A call without its window is a clear error, never a guess.
// - Shared words live in one window under a lock_all epoch; reads, writes and
//   fetch-and-add are MPI_Fetch_and_op (NO_OP / SUM) and MPI_Accumulate (REPLACE), which
//   MPI makes atomic with respect to each other. A write completes locally
//   (flush_local); Fence / AllFence are MPI_Win_flush / MPI_Win_flush_all.
// - The windowed AllFence (seed 004 3.1.2) needs a fence that does not block, and
//   MPI_Win_flush does. MPI orders accumulate-family operations from one origin to the
//   same target location (the default accumulate_ordering, rar,raw,war,waw; MPI-3.1
//   11.7.2), so an MPI_Rget_accumulate(MPI_NO_OP) over the words written at a target
//   completes only after those writes were applied there: a non-blocking per-target fence.
//   shared_write records the written words per target (a 64-bit mask: kSharedWords = 64);
//   the window issues one such read per target for k targets, waits for all k, goes on.
// - No combined fence + barrier (seed 004 ch. 4): its count exchange needs each target to
//   know how many writes it received, and a passive-target window tells the target nothing.
//   MPI_Win_fence is that algorithm (osc pt2pt: a reduce-scatter of per-target operation
//   counts, then waiting for that many), but only for an active-target epoch, which the
//   shared words (a lock_all epoch, needed by fetch-and-add, compare-and-swap and the
//   locks) cannot be in.
// - A lock is an exclusive epoch on a second window. MPI may defer acquiring it until the
//   first operation, so lock() makes one Get and flushes: on return the lock is held.
#include "mpi/mpi_backend.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace copbench::mpi {

void MpiBackend::setup_rma(bool words, bool locks) {
  written_.assign(static_cast<std::size_t>(size_), 0);
  if (words) {
    MPI_Win_allocate(static_cast<MPI_Aint>(kSharedWords * sizeof(std::int64_t)), sizeof(std::int64_t),
                     MPI_INFO_NULL, comm_, &words_, &words_win_);
    for (int i = 0; i < kSharedWords; ++i) words_[i] = 0;
  }
  if (locks) {
    MPI_Win_allocate(static_cast<MPI_Aint>(kLocks * sizeof(std::int64_t)), sizeof(std::int64_t),
                     MPI_INFO_NULL, comm_, &lock_words_, &lock_win_);
    for (int i = 0; i < kLocks; ++i) lock_words_[i] = 0;
  }
  if (!words && !locks) return;
  MPI_Barrier(comm_);
  if (words) MPI_Win_lock_all(0, words_win_);
}

void MpiBackend::free_rma() {
  if (words_win_ != MPI_WIN_NULL) MPI_Win_unlock_all(words_win_);
  if (words_win_ == MPI_WIN_NULL && lock_win_ == MPI_WIN_NULL) return;
  MPI_Barrier(comm_);
  if (words_win_ != MPI_WIN_NULL) MPI_Win_free(&words_win_);
  if (lock_win_ != MPI_WIN_NULL) MPI_Win_free(&lock_win_);
}

void MpiBackend::need_words() const {
  if (words_win_ == MPI_WIN_NULL)
    throw std::logic_error("mpi: a shared word or fence was used by a run that did not declare it "
                           "(the benchmark's needs() or optional_ops()), so no window was opened");
}

void MpiBackend::need_locks() const {
  if (lock_win_ == MPI_WIN_NULL)
    throw std::logic_error("mpi: lock was used by a run that did not declare it, so no lock window was opened");
}

void MpiBackend::lock(int lock_id) {
  need_locks();
  const int target = lock_id % size_;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, lock_win_);
  std::int64_t probe = 0;
  MPI_Get(&probe, 1, MPI_INT64_T, target, lock_id % kLocks, 1, MPI_INT64_T, lock_win_);
  MPI_Win_flush(target, lock_win_);
}

void MpiBackend::unlock(int lock_id) {
  need_locks();
  MPI_Win_unlock(lock_id % size_, lock_win_);
}

std::int64_t MpiBackend::shared_read(int owner, int index) {
  need_words();
  std::int64_t value = 0;
  MPI_Fetch_and_op(nullptr, &value, MPI_INT64_T, owner, index, MPI_NO_OP, words_win_);
  MPI_Win_flush(owner, words_win_);
  return value;
}

void MpiBackend::shared_write(int owner, int index, std::int64_t value) {
  need_words();
  MPI_Accumulate(&value, 1, MPI_INT64_T, owner, index, 1, MPI_INT64_T, MPI_REPLACE, words_win_);
  MPI_Win_flush_local(owner, words_win_);
  written_[static_cast<std::size_t>(owner)] |= std::uint64_t{1} << index;
}

std::int64_t MpiBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  need_words();
  std::int64_t old = 0;
  MPI_Fetch_and_op(&add, &old, MPI_INT64_T, owner, index, MPI_SUM, words_win_);
  MPI_Win_flush(owner, words_win_);
  return old;
}

std::int64_t MpiBackend::shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired) {
  need_words();
  std::int64_t old = 0;
  MPI_Compare_and_swap(&desired, &expected, &old, MPI_INT64_T, owner, index, words_win_);
  MPI_Win_flush(owner, words_win_);
  return old;
}

void MpiBackend::fence(int target) {
  need_words();
  MPI_Win_flush(target, words_win_);
  written_[static_cast<std::size_t>(target)] = 0;
}

void MpiBackend::all_fence() {
  need_words();
  MPI_Win_flush_all(words_win_);
  std::fill(written_.begin(), written_.end(), 0);
}

void MpiBackend::all_fence_window(int k) {
  need_words();
  static_assert(kSharedWords == 64, "one bit per shared word");
  k = std::max(k, 1);
  // Targets in the order rank+1, rank+2, ...: when every rank fences every other, each
  // step of the window sends every target exactly one request (seed 004 randomizes the
  // order for the same purpose: no target is asked by everyone at once).
  std::vector<int> targets;
  for (int i = 1; i <= size_; ++i) {
    const int t = (rank_ + i) % size_;
    if (written_[static_cast<std::size_t>(t)] != 0) targets.push_back(t);
  }
  std::vector<std::int64_t> scratch(static_cast<std::size_t>(k) * kSharedWords);
  std::vector<MPI_Request> requests;
  for (std::size_t first = 0; first < targets.size(); first += static_cast<std::size_t>(k)) {
    requests.clear();
    const std::size_t last = std::min(targets.size(), first + static_cast<std::size_t>(k));
    for (std::size_t i = first; i < last; ++i) {
      const int t = targets[i];
      const std::uint64_t mask = written_[static_cast<std::size_t>(t)];
      const int lo = std::countr_zero(mask);
      const int count = kSharedWords - std::countl_zero(mask) - lo;  // lo .. highest written
      MPI_Request r;
      MPI_Rget_accumulate(nullptr, 0, MPI_INT64_T, scratch.data() + (i - first) * kSharedWords, count,
                          MPI_INT64_T, t, lo, count, MPI_INT64_T, MPI_NO_OP, words_win_, &r);
      requests.push_back(r);
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    for (std::size_t i = first; i < last; ++i) written_[static_cast<std::size_t>(targets[i])] = 0;
  }
}

}  // namespace copbench::mpi
