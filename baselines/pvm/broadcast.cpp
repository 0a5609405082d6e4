// broadcast: pvm_bcast to the run's group; multicast: pvm_mcast to the members' tids.
// Neither sends to the sender; receivers pvm_recv from the root.
#include <pvm3.h>

#include <algorithm>

#include "pvm/pvm_backend.h"

namespace copbench::pvm {

void PvmBackend::broadcast(std::span<std::byte> buffer, int root) {
  char* data = reinterpret_cast<char*>(buffer.data());
  const int n = static_cast<int>(buffer.size());
  if (rank_ == root) {
    pvm_check(pvm_initsend(encoding_), "pvm_initsend");
    pvm_check(pvm_pkbyte(data, n, 1), "pvm_pkbyte");
    if (ranks() > 1) pvm_check(pvm_bcast(group_.data(), kBroadcastTag), "pvm_bcast");
  } else {
    pvm_check(pvm_recv(tids_[static_cast<std::size_t>(root)], kBroadcastTag), "pvm_recv");
    pvm_check(pvm_upkbyte(data, n, 1), "pvm_upkbyte");
  }
}

void PvmBackend::multicast(std::span<std::byte> buffer, int root, std::span<const int> members) {
  char* data = reinterpret_cast<char*>(buffer.data());
  const int n = static_cast<int>(buffer.size());
  if (rank_ == root) {
    if (members.empty()) return;
    std::vector<int> tids;
    for (int m : members) tids.push_back(tids_[static_cast<std::size_t>(m)]);
    pvm_check(pvm_initsend(encoding_), "pvm_initsend");
    pvm_check(pvm_pkbyte(data, n, 1), "pvm_pkbyte");
    pvm_check(pvm_mcast(tids.data(), static_cast<int>(tids.size()), kMulticastTag), "pvm_mcast");
  } else if (std::find(members.begin(), members.end(), rank_) != members.end()) {
    pvm_check(pvm_recv(tids_[static_cast<std::size_t>(root)], kMulticastTag), "pvm_recv");
    pvm_check(pvm_upkbyte(data, n, 1), "pvm_upkbyte");
  }
}

}  // namespace copbench::pvm
