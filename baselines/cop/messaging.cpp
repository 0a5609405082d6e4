// echo: COP has no point-to-point operation. A COP program is a PVM program that calls
// libcop for its collectives and shared words and sends its point-to-point messages with
// PVM (seed 000 ch. V); so does this backend: pvm_send / pvm_recv of PvmDataRaw over
// task-to-task links (PvmRouteDirect). The echo, bandwidth and ring benchmarks therefore
// measure PVM on cop (README: "The cop backend"); applications get COP collectives beside
// PVM messages, as the thesis's molecular dynamics program did.
#include <pvm3.h>

#include "cop/cop_backend.h"
#include "copbench/timing.h"

namespace copbench::cop {

void CopBackend::send(int to, std::span<const std::byte> message) {
  pvm_initsend(PvmDataRaw);
  pvm_pkbyte(reinterpret_cast<char*>(const_cast<std::byte*>(message.data())), static_cast<int>(message.size()), 1);
  pvm_send(tids_[static_cast<std::size_t>(to)], kEchoTag);
}

void CopBackend::recv(int from, std::span<std::byte> message) {
  pvm_recv(tids_[static_cast<std::size_t>(from)], kEchoTag);
  pvm_upkbyte(reinterpret_cast<char*>(message.data()), static_cast<int>(message.size()), 1);
}

double CopBackend::bare_echo_loop(int peer, std::size_t bytes, int iterations) {
  std::vector<char> buf(bytes);
  const int n = static_cast<int>(bytes);
  const int peer_tid = tids_[static_cast<std::size_t>(peer)];
  if (rank_ == 0) {
    double t0 = now_seconds();
    for (int i = 0; i < iterations; ++i) {
      pvm_initsend(PvmDataRaw);
      pvm_pkbyte(buf.data(), n, 1);
      pvm_send(peer_tid, kEchoTag);
      pvm_recv(peer_tid, kEchoTag);
      pvm_upkbyte(buf.data(), n, 1);
    }
    double t1 = now_seconds();
    return (t1 - t0) / iterations / 2;
  }
  if (rank_ == peer) {
    for (int i = 0; i < iterations; ++i) {
      pvm_recv(tids_[0], kEchoTag);
      pvm_upkbyte(buf.data(), n, 1);
      pvm_initsend(PvmDataRaw);
      pvm_pkbyte(buf.data(), n, 1);
      pvm_send(tids_[0], kEchoTag);
    }
  }
  return 0.0;
}

}  // namespace copbench::cop
