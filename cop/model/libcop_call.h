// The time of one libcop call as libcop issues it (seed 000 ch. V, "Libcop Library";
// ch. VI's timing), in controller clock cycles: what `--backend sim-cop` simulates
// and what the live stack's modelled clock counts (tests/cop/modelled_check.cpp).
//
// Ch. VI's expressions (analytic.h) count the commands of one channel's call with
// C̄ other channels in a fixed load. A libcop call differs in three ways, each a
// term here:
//  - the commands every channel sends: each SPMD channel sends its whole burst
//    (commands.h: LOCK, SETTC, SETBM, the elements, UNLOCK; it cannot know it is
//    not the first), so a reduction's other channels each add the SETTC, SETBM
//    and UNLOCK that ch. VI's t_contrib does not count; only the channels that
//    take part send (a broadcast's receivers send nothing: C̄ = 0 at one level);
//    each command at its own t_OP (Hall's classes: a reduction's LOCK is an
//    integer command even when its elements are floating point), the results
//    each t_COP-CN on the links;
//  - the serial link (seed 000 ch. IV: 400 MB/s, a COP message of 16 bytes):
//    a burst's commands arrive one wire time apart, so the first channel's burst
//    is paced by the wire where the wire is slower than t_OP; the ACK/NACKs of a
//    burst come back together after its last command (copd holds a burst's
//    answers the same way), t_COP-CN plus a wire time per further answer, and the
//    caller waits for them;
//  - arrays: a burst per 128 elements (t_MAX-OP). A reduction's channels send the
//    next burst when the last one is answered (and, at the root, its results
//    are in), so bursts overlap: each further burst adds the most of the
//    controller's work for it and the two chains of waiting that can be
//    longer (the last channel's answers, the root's results). A broadcast's
//    root awaits each burst's answers before the next one (libcop's normal
//    access: one burst a request).
// With SerialLink::ideal() (commands ready at t_CN-COP, answers at their service,
// no wire time) the model is the live stack's: for an integer call it equals
// ch. VI's expression with C̄ the channels that send, plus the reduction's
// SETTC, SETBM and UNLOCK per other channel.
//
// Two levels (Figure 5, above 64 nodes): the level-1 pass of a full level-1
// controller as above, with the level-2 masks its first node adds (each
// forwarded: t_OP + t_CN-COP), each combined contribution going up (t_CN-COP),
// the level 2 combining K of them and broadcasting (t_COP-CN), the level 1
// passing the result on (t_OP + t_COP-CN), elements pipelined through the
// slowest of these stages; a reduction of one burst waits for the level 2's K
// entries an element when there are many level-1s, an array's later bursts are
// paced by the root level-1's pass (what sim-cop does beyond: validation.cpp's notes).
#pragma once

#include <cstdint>

#include "model/analytic.h"
#include "model/hardware.h"

namespace cop::model {

// A COP message is four 32-bit words (ch. VI); the thesis's link, 400 MB/s (ch. IV).
inline constexpr double kSerialBytesPerSecond = CopHardware{}.link_bytes_per_second;
inline constexpr double kMessageBytes = 16;

struct SerialLink {
  uint64_t wire = 4;             // cycles a message takes on the wire (16 B at 400 MB/s, P_CLK 10 ns)
  bool answers_on_link = true;   // a burst's answers travel back after its last command
  uint64_t flight = 0;           // cycles in flight each way beyond t_CN-COP / t_COP-CN (CopHardware)

  // The link of `hw` as sim-cop simulates it: a message takes whole cycles of the
  // controller's clock on the wire (the channel interface hands it over on a clock
  // edge), its wire time rounded up.
  static SerialLink of(const CopHardware& hw);
  // The thesis's link (400 MB/s, no flight) at the clock of `t`.
  static SerialLink simulated(const Timing& t) { return of(CopHardware{t}); }
  // The live stack's modelled clock: no wire time, answers free.
  static SerialLink ideal() { return SerialLink{0, false, 0}; }
};

// Cycles of one call on `nodes` nodes (2..4096) of `elements` 8-byte elements
// (ignored for a barrier): from every node starting the call together (after a
// sync) to the last node holding its result and its answers. `f`: barrier_spmd,
// reduce (to one root) or bcast (from one root, nothing else on the channels);
// std::invalid_argument otherwise.
uint64_t libcop_call_cycles(Function f, DataType type, const Timing& t, const SerialLink& link, uint64_t nodes,
                            uint64_t elements);
double libcop_call_us(Function f, DataType type, const Timing& t, const SerialLink& link, uint64_t nodes,
                      uint64_t elements);

}  // namespace cop::model
