// gather / scatter: pvm_gather and pvm_scatter of bytes on the run's group (instance ==
// rank, so blocks arrive in rank order).
#include <pvm3.h>

#include "pvm/pvm_backend.h"

namespace copbench::pvm {

void PvmBackend::gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) {
  pvm_check(pvm_gather(all.data(), const_cast<std::byte*>(mine.data()), static_cast<int>(mine.size()), PVM_BYTE,
                       next_tag(kGatherTag), group_.data(), root),
            "pvm_gather");
}

void PvmBackend::scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) {
  pvm_check(pvm_scatter(mine.data(), const_cast<std::byte*>(all.data()), static_cast<int>(mine.size()), PVM_BYTE,
                        next_tag(kScatterTag), group_.data(), root),
            "pvm_scatter");
}

}  // namespace copbench::pvm
