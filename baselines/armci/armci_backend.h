// The armci backend: ARMCI-MPI (Debian libarmci-mpi-dev), ranks started by mpirun with
// `--mca osc pt2pt`. One file per group of operations.
#pragma once

#include <cstdint>
#include <vector>

#include "common/catalog_backend.h"

namespace copbench::armci {

class ArmciBackend final : public baselines::MpirunBackend {
 public:
  ArmciBackend(int* argc, char*** argv);  // MPI_Init, ARMCI_Init; shared words, mutexes if used
  ~ArmciBackend() override;

  std::string route() const override { return "ARMCI-MPI over MPI RMA (osc pt2pt)"; }
  // armci_backend.cpp: the harness's services on armci_msg_*.
  void sync() override;
  void max_over_ranks(std::span<double> values) override;

  // messaging.cpp, barrier.cpp, reduce.cpp, broadcast.cpp: ARMCI's message layer.
  void send(int to, std::span<const std::byte> message) override;
  void recv(int from, std::span<std::byte> message) override;
  void barrier() override;
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) override;
  void broadcast(std::span<std::byte> buffer, int root) override;

  // shared.cpp: ARMCI_Lock, ARMCI_Get/Put/Rmw, ARMCI_Fence/AllFence/Barrier.
  void lock(int lock_id) override;
  void unlock(int lock_id) override;
  std::int64_t shared_read(int owner, int index) override;
  void shared_write(int owner, int index, std::int64_t value) override;
  std::int64_t shared_fetch_add(int owner, int index, std::int64_t add) override;
  void fence(int target) override;
  void all_fence() override;
  void fence_barrier() override;
  void message_barrier() override;

  double bare_echo_loop(int peer, std::size_t bytes, int iterations) override;
  double bare_barrier_loop(int iterations) override;

  void abort(int code);

 private:
  // The shared words of `owner`; throws when the run did not declare shared words (so
  // none were allocated).
  std::int64_t* word(int owner, int index) const;
  void need_mutexes() const;

  std::vector<void*> bases_;  // ARMCI_Malloc'd shared words of every rank; empty when unused
  bool mutexes_ = false;      // ARMCI_Create_mutexes was called (only for runs that lock)
};

}  // namespace copbench::armci
