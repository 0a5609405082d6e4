// What travels between the simulated nodes and controllers (one SimGrid communication
// each, sized as the COP messages it stands for: 16 bytes a message, network.h).
#pragma once

#include <cop/wire.h>

#include <vector>

#include "controller/controller.h"

namespace copbench::simcop {

struct Packet {
  enum Kind {
    burst,    // node -> its level-1: the commands libcop writes in one go (commands.h)
    up,       // level-1 -> level 2: a Delivery with to_parent (its link header: hop)
    down,     // level 2 -> level-1: a Delivery for it
  };          // (controller -> node: its down link, links.h)
  Kind kind = burst;
  int channel = 0;  // burst: the node's channel; up: the level-1 controller's channel at the level 2
  std::vector<cop::wire::Message> messages;  // burst
  cop::controller::Delivery delivery;        // up, down
};

}  // namespace copbench::simcop
