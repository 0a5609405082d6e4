// The COP messages a task sends its controller for each libcop call (seed 000
// ch. V, "Libcop Library"; Figure 14 for SETTC/SETBM), built in one place.
// libcop sends them on its channel, the timing model (cop/model/scenario.cpp)
// feeds them to the controller core, and the tests send them by hand: all three
// build them here, so a change in how a call is laid out changes all three.
//
// Every command carries the sending task's Pid register (TKNO) and partition
// (PPN); SETTC/SETBM carry COUNT-1 in the TKNO field instead (cop/wire.h).
// A burst is what libcop writes in one go: the operation's commands between a
// LOCK and an UNLOCK, so no other channel's commands come between (ch. V).
#pragma once
#include <cop/wire.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace cop::commands {

using Burst = std::vector<wire::Message>;

// The sending task: its TKNO (Pid register) and its partition number.
struct Sender {
  uint16_t tkno = 0;
  uint8_t ppn = 0;
  // The call's operation identity (cop/wire.h): put on its contributions, broadcast
  // words and SETBM. 0 (the timing model, the tests' hand-built commands): none.
  uint64_t op_id = 0;
};

// One command of `op` from `s` on word `tag` of `space`.
wire::Message command(const Sender& s, wire::Opcode op, wire::Space space = wire::Space::GAS, uint32_t tag = 0);

// SETTC or SETBM: the terminal-count or broadcast mask `mask` for the `count`
// GAS words tag .. tag+count-1 (1..kMaxCount).
wire::Message mask_command(const Sender& s, wire::Opcode op, uint32_t tag, uint64_t mask, int count = 1);

// SETTC or SETBM for `count` words, in as many commands as the 10-bit count
// field needs (one for count <= kMaxCount).
void append_masks(Burst& b, const Sender& s, wire::Opcode op, uint32_t tag, uint64_t mask, uint64_t count);

// `op` on the GAS words tag, tag+1, ..., each carrying one word of `words`.
void append_elements(Burst& b, const Sender& s, wire::Opcode op, uint32_t tag, std::span<const uint64_t> words);

// A barrier as every channel of the SPMD model sends it: LOCK, SETTC and SETBM
// of the participating channels (the first channel to arrive initialises them,
// the others are refused with mask_in_use), BENTRY, UNLOCK.
Burst barrier(const Sender& s, uint32_t tag, uint64_t mask);

// A reduction's contribution: LOCK, SETTC `tc` over the words, SETBM `bm` (the
// root channels; none when bm is 0), `op` on each word with its value, UNLOCK.
Burst reduction(const Sender& s, wire::Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t tc,
                uint64_t bm);

// A broadcast: LOCK, SETBM `mask` (the receiving channels), `op` (BCAST32/64)
// on each word with its value, UNLOCK.
Burst broadcast(const Sender& s, wire::Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask);

// An array call as libcop sends it (seed 000 ch. VI: a channel holds the lock
// for at most t_MAX-OP's burst): a burst of reduction() or broadcast() per
// `per_burst` elements, the elements tag+at .. of the array.
struct ArrayBurst {
  Burst commands;
  uint32_t tag = 0;    // the burst's first GAS word
  uint32_t count = 0;  // its elements
};
std::vector<ArrayBurst> reduction_bursts(const Sender& s, wire::Opcode op, uint32_t tag,
                                         std::span<const uint64_t> words, uint64_t tc, uint64_t bm, size_t per_burst);
std::vector<ArrayBurst> broadcast_bursts(const Sender& s, wire::Opcode op, uint32_t tag,
                                         std::span<const uint64_t> words, uint64_t mask, size_t per_burst);

// Whole bursts packed into frames of at most `most` commands (a link frame, or
// one request to the driver) and, when `size` is given, at most `budget` of what
// it counts for the frame's bursts (a link frame's bytes: cop/link.h
// encoded_bytes): an array of many bursts costs a few frames, and a frame is
// executed once by copd, whole (cop/link.h), so no burst is ever half-applied.
// A burst longer than `most` (or `budget`) gets a frame of its own (the port
// refuses it).
struct FramedBursts {
  Burst commands;
  uint32_t first_tag = 0;  // the GAS words the frame's bursts cover
  uint32_t words = 0;
};
std::vector<FramedBursts> pack(const std::vector<ArrayBurst>& bursts, size_t most, size_t budget = 0,
                               const std::function<size_t(const Burst&)>& size = {});
// The same into `frames`, whose frames' command storage is kept from the call before (an
// array call's frames allocate, and fault in, no storage anew: libcop's, Library::frames).
void pack_into(std::vector<FramedBursts>& frames, const std::vector<ArrayBurst>& bursts, size_t most,
               size_t budget = 0, const std::function<size_t(const Burst&)>& size = {});

// Where a task-address-space access goes: the channel `chno` and the task
// `ttkno` whose space it is, from word `offset` on.
struct TasTarget {
  uint8_t chno = 0;
  uint32_t ttkno = 0;
  uint32_t offset = 0;
};

// cop_read/cop_write/cop_rmw: `op` on words offset, offset+1, ... of the
// target's task address space, one command per element of `words` (the values
// written or added; ignored by RSRAM). Z is set so the controller takes the
// channel from the address word; `floating` sets M (RMW64 adds in the FP unit).
// An urgent access is locked: LOCK before the first element when `lock`,
// UNLOCK after the last when `unlock` (a long array is several bursts).
Burst tas_access(const Sender& s, wire::Opcode op, bool floating, const TasTarget& at,
                 std::span<const uint64_t> words, bool lock = false, bool unlock = false);

}  // namespace cop::commands
