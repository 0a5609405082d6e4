// Fault injection on the link (cop/link.h): a deterministic, seeded layer under
// every datagram the link sends or receives (udp.h's send_datagrams and
// recv_datagrams), on copd and on the node side alike, so the link protocol
// can be shown exactly-once under the faults a real secondary network has.
//
// Spec: comma-separated key=value, each rate a probability 0..1 per datagram
// and direction:
//   drop=P     the datagram vanishes
//   corrupt=P  1..3 of its bytes are flipped (the CRC-32 must catch it)
//   dup=P      it is delivered twice
//   reorder=P  it is held and goes after the next one (or after delay_ms)
//   delay=P    it is held for a random 0..delay_ms ms
//   delay_ms=D (default 5), seed=S (default 1)
// Switched on by the environment variable COP_FAULTS or copd/copdrv --faults.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace cop::link {

struct FaultSpec {
  double drop = 0, corrupt = 0, dup = 0, reorder = 0, delay = 0;
  int delay_ms = 5;
  uint64_t seed = 1;
  bool any() const { return drop > 0 || corrupt > 0 || dup > 0 || reorder > 0 || delay > 0; }
};

// Parses a spec; on a bad one returns nullopt with `error` saying why in one line.
std::optional<FaultSpec> parse_faults(const std::string& text, std::string& error);
std::string to_string(const FaultSpec& spec);

// The process's faults: set explicitly (--faults), else read once from COP_FAULTS
// (a bad COP_FAULTS is reported on stderr once and ignored). `salt` tells the
// processes sharing a seed apart (copd 0, a node its channel and task number),
// so they do not drop in lockstep.
void set_faults(const FaultSpec& spec, uint64_t salt = 0);
void set_fault_salt(uint64_t salt);
// The salt of a node's process: its channel and task number (the driver's own
// reader uses the largest task number, wire::kMaxTkno).
inline uint64_t node_fault_salt(uint32_t channel, uint32_t tkno) { return (uint64_t{channel} << 16) | tkno; }
// Null when no faults are on.
const FaultSpec* active_faults();

struct FaultStats {
  uint64_t datagrams = 0, dropped = 0, corrupted = 0, duplicated = 0, reordered = 0, delayed = 0;
};
FaultStats fault_stats();

}  // namespace cop::link
