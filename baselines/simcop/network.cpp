// The simulated COP system's hosts and serial links (network.h).
#include "simcop/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace copbench::simcop {

namespace sg4 = simgrid::s4u;

namespace {

uint64_t low_bits(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

}  // namespace

int Network::channels_of(int level1) const { return std::min(kChannels, nodes - level1 * kChannels); }
uint64_t Network::local_all(int level1) const { return low_bits(channels_of(level1)); }
uint64_t Network::level2_all() const { return low_bits(level1s); }

Network build_network(int nodes, const cop::model::CopHardware& hw) {
  if (nodes < 2 || nodes > kChannels * kChannels)
    throw std::invalid_argument(fmt::format("sim-cop: {} nodes; a two-level COP has 2..4096", nodes));
  Network n;
  n.nodes = nodes;
  n.level1s = (nodes + kChannels - 1) / kChannels;
  n.link = cop::model::SerialLink::of(hw);
  n.full_duplex = hw.full_duplex;
  // The hosts, in one zone: the links between them are in-process (links.h).
  auto* zone = sg4::create_full_zone("cop");
  for (int k = 0; k < n.level1s; ++k) {
    n.level1_hosts.push_back(zone->create_host(fmt::format("cop-1-{}", k), 1e9)->seal());
    for (int c = 0; c < n.channels_of(k); ++c)
      n.node_hosts.push_back(zone->create_host(fmt::format("node-{}", n.first_node(k) + c), 1e9)->seal());
  }
  if (n.two_levels()) n.level2_host = zone->create_host("cop-2", 1e9)->seal();
  zone->seal();
  return n;
}

}  // namespace copbench::simcop
