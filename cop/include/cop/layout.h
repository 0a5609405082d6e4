// Where a node sits in the COP hierarchy: the one statement of the layout (seed 000
// ch. IV, Figure 5: up to 64 level-1 controllers of up to 64 channels, under one level-2
// controller whose channel c is the level-1 controller CNTNO c-1). With K channels per
// level-1 controller (COP_PER_CONTROLLER, --per-controller), node H (1-based: the
// host's number in the virtual machine, hosts added in channel order) drives channel
// (H-1)%K+1 of level-1 controller CNTNO (H-1)/K; N nodes need ceil(N/K) level-1
// controllers, and a level 2 when that is more than one. libcop's direct mapping
// (lib/mapping.cpp) and the stack plan (stack/plan.h: what scripts/cop-stack, the
// Slurm job and the Ansible inventory start) both ask here.
#pragma once

#include <cop/wire.h>

namespace cop::layout {

// Channels of one controller, level-1 controllers under one level 2: both 64.
inline constexpr int kMaxChannels = cop::wire::kChannels;
inline constexpr int kMaxControllers = cop::wire::kChannels;
// The most nodes two levels hold.
inline constexpr int kMaxNodes = kMaxChannels * kMaxControllers;

// A node's seat: its level-1 controller's CNTNO and its channel CHNO there (1..K).
struct Seat {
  int cntno = 0;
  int chno = 0;
};

// Node `node` (1..) with `per_controller` channels per level-1 controller (1..64).
constexpr Seat seat_of(int node, int per_controller) {
  return Seat{(node - 1) / per_controller, (node - 1) % per_controller + 1};
}

// Level-1 controllers for nodes 1..`highest_node`: ceil(N/K).
constexpr int controllers_for(int highest_node, int per_controller) {
  return (highest_node + per_controller - 1) / per_controller;
}

static_assert(seat_of(1, 64).cntno == 0 && seat_of(1, 64).chno == 1);
static_assert(seat_of(65, 64).cntno == 1 && seat_of(65, 64).chno == 1);
static_assert(seat_of(5, 2).cntno == 2 && seat_of(5, 2).chno == 1);
static_assert(controllers_for(kMaxNodes, kMaxChannels) == kMaxControllers);

}  // namespace cop::layout
