// echo's calls: pvm_initsend (the chosen encoding), pvm_pkbyte, pvm_send; pvm_recv,
// pvm_upkbyte; and their bare loop.
#include <pvm3.h>

#include "copbench/timing.h"
#include "pvm/pvm_backend.h"

namespace copbench::pvm {

void PvmBackend::send(int to, std::span<const std::byte> message) {
  pvm_check(pvm_initsend(encoding_), "pvm_initsend");
  char* data = reinterpret_cast<char*>(const_cast<std::byte*>(message.data()));
  pvm_check(pvm_pkbyte(data, static_cast<int>(message.size()), 1), "pvm_pkbyte");
  pvm_check(pvm_send(tids_[static_cast<std::size_t>(to)], kEchoTag), "pvm_send");
}

void PvmBackend::recv(int from, std::span<std::byte> message) {
  pvm_check(pvm_recv(tids_[static_cast<std::size_t>(from)], kEchoTag), "pvm_recv");
  pvm_check(pvm_upkbyte(reinterpret_cast<char*>(message.data()), static_cast<int>(message.size()), 1), "pvm_upkbyte");
}

double PvmBackend::bare_echo_loop(int peer, std::size_t bytes, int iterations) {
  std::vector<char> buf(bytes);
  const int n = static_cast<int>(bytes);
  const int peer_tid = tids_[static_cast<std::size_t>(peer)];
  if (rank_ == 0) {
    double t0 = now_seconds();
    for (int i = 0; i < iterations; ++i) {
      pvm_check(pvm_initsend(encoding_), "pvm_initsend");
      pvm_check(pvm_pkbyte(buf.data(), n, 1), "pvm_pkbyte");
      pvm_check(pvm_send(peer_tid, kEchoTag), "pvm_send");
      pvm_check(pvm_recv(peer_tid, kEchoTag), "pvm_recv");
      pvm_check(pvm_upkbyte(buf.data(), n, 1), "pvm_upkbyte");
    }
    double t1 = now_seconds();
    return (t1 - t0) / iterations / 2;
  }
  if (rank_ == peer) {
    for (int i = 0; i < iterations; ++i) {
      pvm_check(pvm_recv(tids_[0], kEchoTag), "pvm_recv");
      pvm_check(pvm_upkbyte(buf.data(), n, 1), "pvm_upkbyte");
      pvm_check(pvm_initsend(encoding_), "pvm_initsend");
      pvm_check(pvm_pkbyte(buf.data(), n, 1), "pvm_pkbyte");
      pvm_check(pvm_send(tids_[0], kEchoTag), "pvm_send");
    }
  }
  return 0.0;
}

}  // namespace copbench::pvm
