// broadcast: MPI_Bcast. multicast: MPI has none, and its idiom is MPI_Bcast on a
// communicator of the root and the members, made once per member set (MPI_Comm_split,
// during warm-up) and kept.
#include <algorithm>

#include "mpi/mpi_backend.h"

namespace copbench::mpi {
namespace {

// SimGrid 3.32's Open MPI broadcast (bcast__ompi_pipeline, chosen by coll-selector ompi)
// divides by its segment count, which is 0 for 0 bytes: SIGFPE. A 0-byte broadcast moves
// nothing, so the smpi build (baselines/smpi) does not make the call.
bool nothing_to_send([[maybe_unused]] std::span<std::byte> buffer) {
#ifdef COPBENCH_SMPI
  return buffer.empty();
#else
  return false;
#endif
}

}  // namespace

void MpiBackend::broadcast(std::span<std::byte> buffer, int root) {
  if (nothing_to_send(buffer)) return;
  MPI_Bcast(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, root, comm_);
}

void MpiBackend::multicast(std::span<std::byte> buffer, int root, std::span<const int> members) {
  if (nothing_to_send(buffer)) return;
  std::vector<int> key{root};
  key.insert(key.end(), members.begin(), members.end());
  auto it = multicast_comms_.find(key);
  if (it == multicast_comms_.end()) {
    bool in = rank_ == root || std::find(members.begin(), members.end(), rank_) != members.end();
    MPI_Comm sub = MPI_COMM_NULL;
    // Root first (sub-rank 0), members after in rank order.
    MPI_Comm_split(comm_, in ? 0 : MPI_UNDEFINED, rank_ == root ? -1 : rank_, &sub);
    it = multicast_comms_.emplace(key, sub).first;
  }
  if (it->second != MPI_COMM_NULL)
    MPI_Bcast(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, 0, it->second);
}

void MpiBackend::gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) {
  const int n = static_cast<int>(mine.size());
  MPI_Gather(mine.data(), n, MPI_BYTE, all.data(), n, MPI_BYTE, root, comm_);
}

void MpiBackend::scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) {
  const int n = static_cast<int>(mine.size());
  MPI_Scatter(all.data(), n, MPI_BYTE, mine.data(), n, MPI_BYTE, root, comm_);
}

}  // namespace copbench::mpi
