// The simulated COP system's hosts and serial links (network.h).
#include "simcop/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace copbench::simcop {

namespace sg4 = simgrid::s4u;

namespace {

uint64_t low_bits(int n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// Besides the wire: a link of this latency that no bandwidth limits.
constexpr double kUnlimited = 1e15;

// A channel: its half-duplex serial link, shared by both directions, then the latency of
// the direction. Up: what `end` sends; down: what it receives.
struct Channel {
  sg4::Link* wire;       // up, and down unless full duplex
  sg4::Link* wire_down;  // down
  sg4::Link* up;
  sg4::Link* down;
};

// The wire carries a message in whole controller cycles (SerialLink::of), so every
// simulated time stays on the controllers' clock; the latencies are cycles too.
Channel make_channel(sg4::NetZone* zone, const std::string& name, const cop::model::Timing& t,
                     const cop::model::SerialLink& l, bool full_duplex) {
  const double wire = t.us(l.wire) * 1e-6;
  Channel c;
  c.wire = zone->create_link(name + "-serial", kMessageBytes / wire)->set_latency(0)->seal();
  c.wire_down = !full_duplex ? c.wire : zone->create_link(name + "-serial-down", kMessageBytes / wire)->set_latency(0)->seal();
  c.up = zone->create_link(name + "-up", kUnlimited)->set_latency(t.us(t.t_cn_cop + l.flight) * 1e-6 - wire)->seal();
  c.down = zone->create_link(name + "-down", kUnlimited)->set_latency(t.us(t.t_cop_cn + l.flight) * 1e-6 - wire)->seal();
  return c;
}

std::vector<sg4::LinkInRoute> route(sg4::Link* wire, sg4::Link* latency) {
  return {sg4::LinkInRoute(wire), sg4::LinkInRoute(latency)};
}

// Level-1 controller k and its nodes: a star whose centre is the controller (its host
// has no link of its own), each node on its channel: the up direction (down, what the
// controller sends a node: its down link, down_link.h).
sg4::NetZone* level1_zone(Network& n, int k, sg4::NetZone* parent, const cop::model::Timing& t) {
  auto* zone = sg4::create_star_zone(fmt::format("cop-1-{}", k));
  zone->set_parent(parent);
  sg4::Host* controller = zone->create_host(fmt::format("cop-1-{}", k), 1e9)->seal();
  n.level1_hosts.push_back(controller);
  for (int c = 0; c < n.channels_of(k); ++c) {
    const int node = n.first_node(k) + c;
    sg4::Host* host = zone->create_host(fmt::format("node-{}", node), 1e9)->seal();
    n.node_hosts.push_back(host);
    const Channel ch = make_channel(zone, fmt::format("channel-{}", node), t, n.link, n.full_duplex);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, route(ch.wire, ch.up), false);
  }
  return zone->seal();
}

}  // namespace

int Network::channels_of(int level1) const { return std::min(kChannels, nodes - level1 * kChannels); }
uint64_t Network::local_all(int level1) const { return low_bits(channels_of(level1)); }
uint64_t Network::level2_all() const { return low_bits(level1s); }

Network build_network(int nodes, const cop::model::CopHardware& hw) {
  const cop::model::Timing& t = hw.timing;
  if (nodes < 2 || nodes > kChannels * kChannels)
    throw std::invalid_argument(fmt::format("sim-cop: {} nodes; a two-level COP has 2..4096", nodes));
  Network n;
  n.nodes = nodes;
  n.level1s = (nodes + kChannels - 1) / kChannels;
  n.link = cop::model::SerialLink::of(hw);
  n.full_duplex = hw.full_duplex;
  // The root: the level 2's zone and the level-1 zones, routed pairwise (gateways: the
  // controllers); level-1 zones never talk to each other.
  auto* root = sg4::create_full_zone("cop");
  // The level 2: its channels are the level-1 controllers' extra serial channels (ch. IV).
  sg4::NetZone* level2_zone = nullptr;
  if (n.two_levels()) {
    level2_zone = sg4::create_star_zone("cop-2");
    level2_zone->set_parent(root);
    n.level2_host = level2_zone->create_host("cop-2", 1e9)->seal();
    level2_zone->seal();
  }
  for (int k = 0; k < n.level1s; ++k) {
    sg4::NetZone* zone = level1_zone(n, k, root, t);
    if (!n.two_levels()) continue;
    const Channel ch = make_channel(root, fmt::format("level1-{}", k), t, n.link, n.full_duplex);
    auto* gateway = n.level1_hosts.back()->get_netpoint();
    auto* level2 = n.level2_host->get_netpoint();
    root->add_route(zone->get_netpoint(), level2_zone->get_netpoint(), gateway, level2, route(ch.wire, ch.up), false);
    root->add_route(level2_zone->get_netpoint(), zone->get_netpoint(), level2, gateway, route(ch.wire_down, ch.down),
                    false);
  }
  root->seal();
  return n;
}

}  // namespace copbench::simcop
