// echo's calls: ARMCI's message layer, armci_msg_snd / armci_msg_rcv, and their bare loop.

#include "armci/armci_backend.h"
#include "armci/armci_c.h"
#include "copbench/aligned_buffer.h"
#include "copbench/timing.h"

namespace copbench::armci {

constexpr int kEchoTag = 1;

void ArmciBackend::send(int to, std::span<const std::byte> message) {
  armci_msg_snd(kEchoTag, const_cast<std::byte*>(message.data()), static_cast<int>(message.size()), to);
}

void ArmciBackend::recv(int from, std::span<std::byte> message) {
  int got = 0;
  armci_msg_rcv(kEchoTag, message.data(), static_cast<int>(message.size()), &got, from);
}

double ArmciBackend::bare_echo_loop(int peer, std::size_t bytes, int iterations) {
  // As IMB PingPong and OSU latency: distinct page-aligned send and receive buffers.
  AlignedBuffer sbuf(bytes, 0), rbuf(bytes, 1);
  const int n = static_cast<int>(bytes);
  int got = 0;
  if (rank_ == 0) {
    double t0 = now_seconds();
    for (int i = 0; i < iterations; ++i) {
      armci_msg_snd(kEchoTag, sbuf.data(), n, peer);
      armci_msg_rcv(kEchoTag, rbuf.data(), n, &got, peer);
    }
    double t1 = now_seconds();
    return (t1 - t0) / iterations / 2;
  }
  if (rank_ == peer) {
    for (int i = 0; i < iterations; ++i) {
      armci_msg_rcv(kEchoTag, rbuf.data(), n, &got, 0);
      armci_msg_snd(kEchoTag, sbuf.data(), n, 0);
    }
  }
  return 0.0;
}

}  // namespace copbench::armci
