// The simulated COP system (seed 000 ch. IV, Figure 5): N compute nodes, each on a
// channel of a level-1 controller (64 channels each, node i on controller i/64 and its
// channel i%64+1), and above 64 nodes one level-2 controller whose channel k+1 is
// level-1 controller k. Every node and every controller is a SimGrid host (its actor's);
// every channel is a serial link, carried in-process (links.h: SimGrid communications
// made sim-cop's time grow with nodes x words, issue 36).
//
// The links and the controllers' timings are the platform's (platform.h: the cop:* props
// of results/platforms/NAME.xml; cop/model/hardware.h, CopHardware). On `thesis`: the
// serial link (seed 000 ch. IV: the channel interfaces' UARTs are Motorola MC100SX1451
// Autobahn Spanceivers, "200-400 Mbyte/sec serial transmission"; ch. VI: a COP message
// is four 32-bit words): one half-duplex link of 400 MB/s per channel, a message 16
// bytes, so its words take 40 ns on the wire. The rest of Hall's link times (ch. VI,
// Table III's parameters, cop/hardware/timing.h) is the link's latency in each
// direction: t_CN-COP (a node or a level-1 controller writes a command and the link
// carries it, 110 ns) up, t_COP-CN (a result onto the link and read by the node,
// 170 ns) down. One message up takes t_CN-COP, one down t_COP-CN, and a burst of n
// messages n wire times more than one less; a wire time is whole controller cycles
// (SerialLink::of). A platform's cop:link_lat adds its flight to each direction (0 on
// `thesis`): a message up arrives t_CN-COP + flight after it starts out.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "model/hardware.h"
#include "model/libcop_call.h"

namespace copbench::simcop {

inline constexpr int kChannels = 64;                 // channels of one controller (seed 000 ch. IV)

struct Network {
  int nodes = 0;
  int level1s = 0;  // ceil(nodes / 64)
  bool two_levels() const { return level1s > 1; }
  int level1_of(int node) const { return node / kChannels; }
  int channel_of(int node) const { return node % kChannels + 1; }
  int first_node(int level1) const { return level1 * kChannels; }
  int channels_of(int level1) const;
  uint64_t local_all(int level1) const;  // bits of every channel of a level-1 controller
  uint64_t level2_all() const;           // bits of every level-1 controller at the level 2

  cop::model::SerialLink link;  // as the libcop-call model has it (SerialLink::of the platform's COP)
  bool full_duplex = false;      // the platform's links carry both directions at once

  std::vector<simgrid::s4u::Host*> node_hosts;
  std::vector<simgrid::s4u::Host*> level1_hosts;
  simgrid::s4u::Host* level2_host = nullptr;
};

// Builds the hosts and serial links of `nodes` (2..4096) nodes of the COP `hw` in the running engine.
Network build_network(int nodes, const cop::model::CopHardware& hw);

}  // namespace copbench::simcop
