// broadcast: armci_msg_bcast. ARMCI has no multicast.

#include "armci/armci_backend.h"
#include "armci/armci_c.h"

namespace copbench::armci {

void ArmciBackend::broadcast(std::span<std::byte> buffer, int root) {
  armci_msg_bcast(buffer.data(), static_cast<int>(buffer.size()), root);
}

}  // namespace copbench::armci
