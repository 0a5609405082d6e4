// The simulated COP system (seed 000 ch. IV, Figure 5): N compute nodes, each on a
// channel of a level-1 controller (64 channels each, node i on controller i/64 and its
// channel i%64+1), and above 64 nodes one level-2 controller whose channel k+1 is
// level-1 controller k. Every node and every controller is a SimGrid host; every
// channel is a serial link.
//
// The serial link (seed 000 ch. IV: the channel interfaces' UARTs are Motorola
// MC100SX1451 Autobahn Spanceivers, "200-400 Mbyte/sec serial transmission"; ch. VI: a
// COP message is four 32-bit words): one half-duplex link of 400 MB/s per channel, a
// message 16 bytes, so its words take 40 ns on the wire. The rest of Hall's link
// times (ch. VI, Table III's parameters, cop/hardware/timing.h) is the link's latency
// in each direction: t_CN-COP (a node or a level-1 controller writes a command and the
// link carries it, 110 ns) up, t_COP-CN (a result onto the link and read by the node,
// 170 ns) down. One message up takes t_CN-COP, one down t_COP-CN, and a burst of n
// messages n x 40 ns more than one less.
#pragma once

#include <simgrid/s4u.hpp>

#include <cstdint>
#include <vector>

#include "model/hardware.h"
#include "model/libcop_call.h"

namespace copbench::simcop {

inline constexpr int kChannels = 64;                 // channels of one controller (seed 000 ch. IV)
// The link as the libcop-call model has it (one source: cop/model/libcop_call.h).
inline constexpr double kLinkBytesPerSecond = cop::model::kSerialBytesPerSecond;  // ch. IV: 200-400 MB/s
inline constexpr double kMessageBytes = cop::model::kMessageBytes;                // ch. VI: four 32-bit words

// Seconds of one message on a link's wire, and in cycles of the controller clock.
double wire_seconds(double bytes);
uint64_t wire_cycles(const cop::model::Timing& t);

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

  std::vector<simgrid::s4u::Host*> node_hosts;
  std::vector<simgrid::s4u::Host*> level1_hosts;
  simgrid::s4u::Host* level2_host = nullptr;
};

// Builds the hosts and serial links of `nodes` (2..4096) nodes in the running engine.
Network build_network(int nodes, const cop::model::Timing& timing);

}  // namespace copbench::simcop
