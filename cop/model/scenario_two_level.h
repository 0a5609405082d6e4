// A collective over N nodes on a two-level COP (seed 000 ch. IV, Figure 5):
// ceil(N/64) level-1 controller cores, node i on controller i/64 (CNTNO) and
// its channel i%64+1 (ch. V: host H on controller (H-1)/64), under one
// level-2 core when there is more than one level-1; N <= 64 uses the level-1
// alone, as the thesis says a partition on one COP does. The cores are the
// real controller core (cop/controller) in its cycle-counting mode, so the time
// is the cores' clocks: each pass through a level charges its t_OP, the links
// between levels t_CN-COP up and t_COP-CN down (model/hardware.h). The cores
// run in time order (a level-1 services what comes down from the level 2
// between its channel polls, at the cycle it arrives), so the levels overlap
// as the hardware's would.
//
// The call is the one analytic.h's two_level_cycles counts, on every level-1
// the one-level scenario's (scenario.h, ch. VI with Table III's best-case
// load): its last channel (on controller 0 the call's source) sends the
// call's burst after its n1 - 1 fellow nodes' visits (LOCK, SETTC, SETBM, its
// elements or BENTRY, UNLOCK; a broadcast: LOCK, SETBM, every BCAST64,
// UNLOCK), timed from the moment every node writes its first command (its
// elements start the operation with WSRAM on one level, as ch. VI's t_init;
// on two levels they are the element operation with X: ch. V, contributions
// to an operation carry X all or none); the
// fellow nodes send one unlocked command of the row's type and then their
// part (every element of a reduction, SPMD's LOCK SETTC BENTRY UNLOCK, a
// slave's BENTRY). BENTRY, contributions and BCAST64 carry X. The level-2
// entries (SETTC/SETBM with X, ch. V) are set before the clock, as the
// expression assumes (they belong to the X-bit partition's set-up; libcop
// sends them with every call as X twins of its masks, which neither counts). For a
// broadcast the K - 1 other level-1 controllers each have one request waiting
// at the level 2 when the source's first element arrives (C̄2 = K - 1).
//
// On one level (N <= 64) this is exactly the one-level scenario's call
// (simulate in scenario.h), which ends a broadcast at the source's UNLOCK
// instead. The cores run in time order; a reduction's fellow nodes write
// their elements as the earlier ones are serviced (a few ahead), so a 4096-node
// reduction of 1024 elements (4.3 million commands) holds little memory.
//
// The time ends when the last node holds the result (barrier exit, every
// element of a reduction, every broadcast element). The result is checked:
// every node (but a broadcast's source) gets each element exactly once; a
// reduction's element e is the sum of every node's contribution (node i
// contributes i + e), a broadcast's the source's value.
#pragma once

#include <cstdint>
#include <vector>

#include "model/analytic.h"
#include "model/hardware.h"

namespace cop::model {

struct TwoLevelResult {
  uint64_t cycles = 0;    // from the nodes writing their commands to the last node holding the result
  double us = 0;          // cycles at the timing's P_CLK
  int level1s = 0;        // level-1 controllers: ceil(nodes / 64)
  int passes = 0;         // passes through a COP level on the way to a node: 1, or 3 with a level 2
  uint64_t serviced = 0;  // commands every controller serviced in the timed part
  uint64_t nacks = 0;     // of which refused (SPMD SETTCs that find the level-1 mask set)
  uint64_t results = 0;   // (node, element) results delivered and checked
  std::vector<uint64_t> values;  // element e as every node got it (a barrier: none)
};

// f: Function::barrier_spmd, barrier_master_slave, reduce (SUMI64 or SUMF by
// `type`) or bcast (BCAST64 of `type`'s values). nodes: 2..4096; elements:
// 1..2048 (1 for a barrier).
// Throws std::invalid_argument for anything else, std::logic_error when the
// collective did not deliver the right result to every node.
TwoLevelResult simulate_two_level(Function f, DataType type, int nodes, const Timing& timing = {},
                                  uint64_t elements = 1);

}  // namespace cop::model
