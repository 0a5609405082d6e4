// A collective over N nodes on a two-level COP (seed 000 ch. IV, Figure 5):
// ceil(N/64) level-1 controller cores, node i on controller i/64 (CNTNO) and
// its channel i%64+1 (ch. V: host H on controller (H-1)/64), under one
// level-2 core when there is more than one level-1; N <= 64 uses the level-1
// alone, as the thesis says a partition on one COP does. The cores are the
// real controller core (cop/controller) in its cycle-counting mode, so the time
// is the cores' clocks: each pass through a level charges its t_OP, the links
// between levels t_CN-COP up and t_COP-CN down (model/hardware.h).
//
// Every node takes part: the masks are set first (not timed), then every node
// writes its command (BENTRY, one reduction element, node 0's BCAST64) at the
// same moment; the time ends when the last node holds the result (barrier
// exit, reduction result, broadcast data). The result is checked: every node
// gets exactly one, a reduction's value is the sum of every node's.
#pragma once

#include <cstdint>

#include "model/analytic.h"
#include "model/hardware.h"

namespace cop::model {

struct TwoLevelResult {
  uint64_t cycles = 0;    // from the nodes writing their commands to the last node holding the result
  double us = 0;          // cycles at the timing's P_CLK
  int level1s = 0;        // level-1 controllers: ceil(nodes / 64)
  int passes = 0;         // passes through a COP level on the way to a node: 1, or 3 with a level 2
  uint64_t serviced = 0;  // commands every controller serviced in the timed part
};

// f: Function::barrier_spmd (or barrier_master_slave: the same commands here),
// Function::reduce (one element: SUMI64 or SUMF by `type`) or Function::bcast
// (node 0 the root, every other node receives). nodes: 2..4096.
// Throws std::invalid_argument for anything else, std::logic_error when the
// collective did not deliver the right result to every node.
TwoLevelResult simulate_two_level(Function f, DataType type, int nodes, const Timing& timing = {});

}  // namespace cop::model
