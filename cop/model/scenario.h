// Scenarios that drive the real controller core (cop/controller) in its
// cycle-counting mode: C̄ other channels requesting service, locking or not,
// and one target channel issuing exactly the commands a libcop call sends.
// The modelled time of the call is read off the core's clock.
#pragma once

#include <cstdint>

#include "model/analytic.h"
#include "model/hardware.h"

namespace cop::model {

enum class Column { best, max };

struct SimulationResult {
  uint64_t cycles = 0;     // from the first command written to the call's end
  uint64_t serviced = 0;   // commands the controller serviced in the scenario
  uint64_t nacks = 0;      // of which refused (SPMD SETTCs that find the mask set)
};

// Runs one libcop call on `elements` 8-byte elements with `c_bar` other
// channels (0..63) in the best-case or upper-bound load of Table III.
SimulationResult simulate(Function f, DataType type, Column column, const Timing& timing,
                          uint64_t c_bar = 63, uint64_t elements = 1);

}  // namespace cop::model
