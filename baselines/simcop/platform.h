// The COP side of a platform file (results/platforms/NAME.xml): what sim-cop simulates
// and the libcop-call model computes with (cop/model/hardware.h, CopHardware), read from
// SimGrid <prop> elements of the platform, so smpi's network and the COP's links are
// stated in one file. Every prop is required (a platform states its COP whole or not at
// all); a time is a SimGrid time ("10ns", "0.5us"), a rate a SimGrid bandwidth
// ("400MBps", "100Gbps"):
//   cop:clock_period  P_CLK, the controller's clock period
//   cop:link_bw       a channel's link, also the level-1/level-2 link (seed 000 ch. IV)
//   cop:t_cn_cop      t_CN-COP: a message written onto a link up, first word to last (ch. VI)
//   cop:t_cop_cn      t_COP-CN: a result onto the links down, the controller busy for it (ch. VI)
//   cop:link_lat      a message's flight beyond those, each way (pipelined: no end waits for it)
//   cop:t_op_int      t_OP of an integer, Data RAM or control command, in cycles (Hall's classes)
//   cop:t_op_fp       t_OP of a floating-point command, in cycles
//   cop:link_sharing  SHARED (half duplex: both directions share the wire) or SPLITDUPLEX
// The times must be whole cycles of P_CLK. A platform with no cop:* prop (calibrated: a
// fit of measured MPI) has no COP: sim-cop refuses it (std::invalid_argument).
#pragma once

#include <map>
#include <string>

#include "model/hardware.h"
#include "model/libcop_call.h"

namespace copbench::simcop {

// The COP of the platform file `path`; std::invalid_argument (naming the file and the
// prop) when it has none, lacks a prop, has an unknown cop:* prop or a bad value.
cop::model::CopHardware cop_hardware_of_file(const std::string& path);

// results/platforms/NAME.xml as installed beside the binaries (share/copbench/platforms).
std::string installed_platform(const std::string& name);

}  // namespace copbench::simcop

namespace copbench::simcop {

// The result's context: `cop_links` in words ("serial ...": the links and the clock) and
// each figure under its own key (cop_clock_ns, cop_link_bytes_per_s, cop_wire_cycles,
// cop_flight_cycles, cop_t_cn_cop, cop_t_cop_cn, cop_t_op_int, cop_t_op_fp: cycles but
// the first two), so a report computes the libcop-call model with the COP simulated.
void record_cop_hardware(std::map<std::string, std::string>& settings, const cop::model::CopHardware& hw);

// The hand-over of sim-cop's ticket lock (ops_shared.cpp) with no other traffic, in
// cycles: from the controller's service of one release to its service of the next, the
// next holder's read of "now serving" waiting at the controller. At one controller: the
// release's results onto the link (ACK and old word: 2 t_COP-CN, the controller busy
// for each), the read's service (t_OP) and its word down a wire time behind its ACK
// (t_COP-CN + wire + flight), the new holder's release up (t_CN-COP + flight) and its
// service (t_OP). `nodes` above 64 (two levels): the release and the word each cross the
// level 2 (a level-1's service, t_CN-COP up, the level 2's service, t_COP-CN down, a
// flight each way). Seed 000 ch. VI's times (thesis: 72 cycles, 140 through the level 2;
// the lock with no read wasted hands over in 0.73 us at 64 nodes, 1.7 us at 4096). A
// constant of the machine, known to a node as it knows the clock: the least unit of the
// lock's backoff.
uint64_t lock_hand_over_cycles(const cop::model::Timing& t, const cop::model::SerialLink& link, int nodes);

}  // namespace copbench::simcop
