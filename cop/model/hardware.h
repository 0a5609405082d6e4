// Hall's hardware timings (seed 000, ch. VI) as the model names them: the constants
// live below both the controller core and the model, in cop/hardware/timing.h.
#pragma once

#include "hardware/timing.h"

namespace cop::model {

using Timing = hardware::Timing;

}  // namespace cop::model
