// The mpi backend: Open MPI, ranks started by mpirun. One file per group of operations.
#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "common/catalog_backend.h"

namespace copbench::mpi {

class MpiBackend final : public baselines::MpirunBackend {
 public:
  // MPI_Init, and the windows and lock server the worker's command line needs.
  MpiBackend(int* argc, char*** argv);
  ~MpiBackend() override;               // frees them, MPI_Finalize

  std::string route() const override { return "default"; }
  // mpi_backend.cpp: the harness's services on MPI_Barrier / MPI_Reduce and MPI_Bcast.
  void sync() override;
  void max_over_ranks(std::span<double> values) override;

  // messaging.cpp: MPI_Send / MPI_Recv.
  void send(int to, std::span<const std::byte> message) override;
  void recv(int from, std::span<std::byte> message) override;
  // barrier.cpp, reduce.cpp: MPI_Barrier, MPI_Reduce, MPI_Scan.
  void barrier() override;
  void reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) override;
  void scan(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op) override;
  // broadcast.cpp: MPI_Bcast (multicast: on a communicator of the members), MPI_Gather,
  // MPI_Scatter.
  void broadcast(std::span<std::byte> buffer, int root) override;
  void multicast(std::span<std::byte> buffer, int root, std::span<const int> members) override;
  void gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) override;
  void scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) override;

  // shared.cpp, lock_server.cpp: MPI-3 RMA (passive target) and the spawned lock server.
  void lock(int lock_id) override;
  void unlock(int lock_id) override;
  std::int64_t shared_read(int owner, int index) override;
  void shared_write(int owner, int index, std::int64_t value) override;
  std::int64_t shared_fetch_add(int owner, int index, std::int64_t add) override;
  std::int64_t shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired) override;
  void fence(int target) override;
  void all_fence() override;
  void all_fence_window(int k) override;
  void server_lock(int lock_id) override;
  void server_unlock(int lock_id) override;

  double bare_echo_loop(int peer, std::size_t bytes, int iterations) override;
  double bare_barrier_loop(int iterations) override;

  // An MCA parameter's value as this process runs with it (MPI_T control variable), e.g.
  // "mpi_yield_when_idle" -> "1": set by --mca, OMPI_MCA_* or ~/.openmpi/mca-params.conf
  // alike. "unknown" where MPI_T does not know it.
  std::string mca_setting(const char* name);

  // Aborts every rank (used when one rank fails, so nobody waits forever).
  void abort(int code);

 private:
  // Opens the shared words' window (and its lock_all epoch) and the locks' window, each
  // only when asked; every rank asks the same.
  void setup_rma(bool words, bool locks);
  // Throws when a shared-word or lock call comes without its window.
  void need_words() const;
  void need_locks() const;
  void free_rma();
  void start_lock_server(int argc, char** argv);
  void stop_lock_server();

  MPI_Comm comm_ = MPI_COMM_NULL;
  // Shared words: one window, kept in a lock_all epoch; every access is an atomic
  // accumulate-family call so concurrent readers and fetch-and-adds are well defined.
  MPI_Win words_win_ = MPI_WIN_NULL;
  std::int64_t* words_ = nullptr;
  // Locks: exclusive passive-target epochs on a second window (lock i lives on rank i % n).
  MPI_Win lock_win_ = MPI_WIN_NULL;
  std::int64_t* lock_words_ = nullptr;
  // Words written at each target since its last fence, one bit per word (windowed fence).
  std::vector<std::uint64_t> written_;
  // The lock server (lock_server.cpp): a process spawned for runs that use it, reached
  // over this intercommunicator; MPI_COMM_NULL otherwise.
  MPI_Comm lock_server_ = MPI_COMM_NULL;
  std::map<std::vector<int>, MPI_Comm> multicast_comms_;
};

// The spawned lock server's main loop (lock_server.cpp); returns its exit code.
int run_lock_server(MPI_Comm parent);

MPI_Datatype mpi_type(Elem elem);
MPI_Op mpi_op(ReduceOp op);

}  // namespace copbench::mpi
