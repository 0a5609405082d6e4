// A simulated COP controller: the REAL controller core (cop/controller/controller.h) on
// a SimGrid host. Its cycle clock is simulated time: a command that arrives at
// simulated time T is ready at cycle T / P_CLK, and after each command it services the
// actor sleeps until the core's clock (so the t_OP of every command, and the t_COP-CN
// it is busy putting a result onto the links, pass in the simulation). Whatever the
// core sends leaves when the core says its sending began, over the serial link,
// which delivers it at the core's at_cycle (network.h).
//
// What the core sends a node goes down its in-process down link (down_link.h), stamped
// with the cycle the node has it: no SimGrid communication, no wake-up of the node a word.
//
// A node's burst travels as one packet that arrives with its first message; its
// other messages follow one wire time apart (network.h), and the actor hands each
// to the core only when it has arrived. So the core never services a command
// before it is there, and what it forwards or broadcasts for it leaves on time
// (were the burst handed over whole when its last word came, the commands served
// while it was still on the wire would send their results late, all at once).
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <queue>
#include <vector>

#include "controller/controller.h"
#include "simcop/down_link.h"
#include "simcop/network.h"
#include "simcop/packets.h"

namespace copbench::simcop {

// The mailboxes of the simulation: one per level-1 and the level 2; each node's down link.
struct Mailboxes {
  std::vector<std::unique_ptr<DownLink>> nodes;
  std::vector<simgrid::s4u::Mailbox*> level1s;
  simgrid::s4u::Mailbox* level2 = nullptr;
};
Mailboxes make_mailboxes(const Network& n, const cop::model::Timing& t);

// Sends `p` (stands for `messages` COP messages on the wire) to `to`, not waited for.
void send_packet(simgrid::s4u::Mailbox* to, std::unique_ptr<Packet> p, size_t messages);

class ControllerActor {
 public:
  // level1 >= 0: level-1 controller `level1`; -1: the level 2.
  ControllerActor(const Network& n, const Mailboxes& m, int level1, const cop::model::Timing& t);
  void operator()();

 private:
  // A command of a burst still on the wire: handed to the core at `cycle`.
  struct Arrival {
    uint64_t cycle;
    uint64_t order;  // arrivals of one cycle in the order they were sent
    int channel;
    cop::wire::Message msg;
    bool operator>(const Arrival& o) const { return cycle != o.cycle ? cycle > o.cycle : order > o.order; }
  };

  void take(std::unique_ptr<Packet> p);
  void hand_arrived();
  // Takes what has come: the packet awaited last, then what is in the mailbox.
  void take_ready();
  // Waits for the next packet, or only until the next arrival of a burst on the wire
  // (the receive stays posted: a packet on its way is never lost to the timeout).
  void await_input();
  void dispatch(std::vector<cop::controller::Delivery>& out);
  // `d` down the links of its channels, starting out at cycle `send`.
  void to_nodes(const cop::controller::Delivery& d, uint64_t send);
  void answer(int channel, const cop::wire::Message& m, uint64_t send);
  DownLink& down(int channel) const { return *mail_.nodes[size_t(net_.first_node(level1_) + channel - 1)]; }
  void sleep_to(uint64_t cycle) const;
  uint64_t now_cycles() const;

  const Network& net_;
  const Mailboxes& mail_;
  int level1_;
  cop::model::Timing timing_;
  std::unique_ptr<cop::controller::Controller> core_;
  simgrid::s4u::Mailbox* in_;
  // Per channel: commands of its bursts not answered yet, and the answers gathered.
  std::vector<size_t> unanswered_;
  std::vector<std::vector<cop::wire::Message>> answers_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arriving_;
  uint64_t arrivals_ = 0;
  simgrid::s4u::CommPtr pending_;
  Packet* pending_packet_ = nullptr;
};

}  // namespace copbench::simcop
