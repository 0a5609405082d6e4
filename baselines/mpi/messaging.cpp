// echo's calls: blocking MPI_Send / MPI_Recv, and their bare loop.
#include "copbench/aligned_buffer.h"
#include "copbench/timing.h"
#include "mpi/mpi_backend.h"

namespace copbench::mpi {

constexpr int kEchoTag = 1;

void MpiBackend::send(int to, std::span<const std::byte> message) {
  MPI_Send(message.data(), static_cast<int>(message.size()), MPI_BYTE, to, kEchoTag, comm_);
}

void MpiBackend::recv(int from, std::span<std::byte> message) {
  MPI_Recv(message.data(), static_cast<int>(message.size()), MPI_BYTE, from, kEchoTag, comm_, MPI_STATUS_IGNORE);
}

double MpiBackend::bare_echo_loop(int peer, std::size_t bytes, int iterations) {
  // As IMB PingPong and OSU latency: distinct page-aligned send and receive buffers.
  AlignedBuffer sbuf(bytes, 0), rbuf(bytes, 1);
  const int n = static_cast<int>(bytes);
  if (rank_ == 0) {
    double t0 = now_seconds();
    for (int i = 0; i < iterations; ++i) {
      MPI_Send(sbuf.data(), n, MPI_BYTE, peer, kEchoTag, comm_);
      MPI_Recv(rbuf.data(), n, MPI_BYTE, peer, kEchoTag, comm_, MPI_STATUS_IGNORE);
    }
    double t1 = now_seconds();
    return (t1 - t0) / iterations / 2;
  }
  if (rank_ == peer) {
    for (int i = 0; i < iterations; ++i) {
      MPI_Recv(rbuf.data(), n, MPI_BYTE, 0, kEchoTag, comm_, MPI_STATUS_IGNORE);
      MPI_Send(sbuf.data(), n, MPI_BYTE, 0, kEchoTag, comm_);
    }
  }
  return 0.0;
}

}  // namespace copbench::mpi
