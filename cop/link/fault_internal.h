// Between fault.cpp (the decisions) and udp.cpp (where they are applied).
#pragma once
#include <cstdint>
#include <span>

namespace cop::link::detail {

struct FaultDecision {
  bool drop = false, dup = false, reorder = false, delay = false;
  int corrupt = 0;  // bytes to flip
  uint64_t corrupt_seed = 0;
  int hold_ms = 0;  // reorder/delay: held this long at most
};

// Draws the fate of one datagram (nothing when no faults are on).
FaultDecision fault_decide();
void fault_corrupt(std::span<uint8_t> bytes, const FaultDecision& d);

}  // namespace cop::link::detail
