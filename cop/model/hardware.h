// Hall's hardware timings (seed 000, ch. VI) as the model names them: the constants
// live below both the controller core and the model, in cop/hardware/timing.h.
//
// CopHardware: a whole COP as a platform states it (results/platforms/*.xml, the cop:*
// props, read by baselines/simcop/platform.h): the controller's timings in cycles of its
// clock and its links. sim-cop simulates it and the libcop-call model
// (libcop_call.h, SerialLink::of) computes with it: one source for both.
#pragma once

#include <cstdint>

#include "hardware/timing.h"

namespace cop::model {

using Timing = hardware::Timing;

struct CopHardware {
  // P_CLK, and in its cycles: t_CN-COP and t_COP-CN (a message written onto a link up and
  // down, the controller busy for it as Hall has it), t_OP (Hall's classes).
  Timing timing;
  // A channel's serial link, also the level-1/level-2 link (seed 000 ch. IV: a level-1
  // controller's extra channel): 400 MB/s, the Autobahn Spanceivers' "200-400 Mbyte/sec".
  double link_bytes_per_second = 400e6;
  // Cycles a message is in flight on a link beyond t_CN-COP / t_COP-CN, each way: a
  // pipelined link's latency, for which neither end waits. 0 in Hall's figures (his
  // t_CN-COP and t_COP-CN are the whole link).
  uint64_t flight = 0;
  // Whether a link carries both directions at once (present's SPLITDUPLEX host links) or
  // one at a time (the thesis's half-duplex serial link: its directions share the wire).
  bool full_duplex = false;
};

}  // namespace cop::model
