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

}  // namespace copbench::simcop
