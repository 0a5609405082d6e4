// A simulated COP controller: the REAL controller core (cop/controller/controller.h) on
// a SimGrid host. Its cycle clock is simulated time: a command that arrives at
// simulated time T is ready at cycle T / P_CLK, and the actor sleeps until the core's
// clock after each command it services (so the t_OP of every command, and the t_COP-CN
// it is busy putting a result onto the links, pass in the simulation). Whatever the
// core sends starts out when the core says its sending began, over the serial link
// (links.h: in-process FIFO wires), which has it at its receiver at the core's at_cycle.
//
// A node's burst arrives with its first message; its other messages follow one wire
// time apart, and the actor hands each to the core only when it has arrived. So the
// core never services a command before it is there, and what it forwards or broadcasts
// for it leaves on time (were the burst handed over whole when its last word came, the
// commands served while it was still on the wire would send their results late, all
// at once).
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <deque>
#include <queue>
#include <vector>

#include "controller/controller.h"
#include "simcop/links.h"
#include "simcop/network.h"
#include "simcop/packets.h"

namespace copbench::simcop {

// The links of the simulation (links.h): each controller's inbox, each node's down
// link, and the wires they share (a half-duplex channel's one wire both ways).
struct Mailboxes {
  std::vector<std::unique_ptr<DownLink>> nodes;
  std::vector<std::unique_ptr<Inbox>> level1s;
  std::unique_ptr<Inbox> level2;
  std::vector<Wire*> node_up;      // node i's channel, up
  std::vector<Wire*> level1_up;    // level-1 k's channel at the level 2, up
  std::vector<Wire*> level1_down;  // and down
  std::deque<Wire> wires;          // the wires themselves
};
Mailboxes make_mailboxes(const Network& n, const cop::model::Timing& t);

// `p` from node `node` (its channel's wire up) to its level-1 controller, sent at `send`.
void send_up(Mailboxes& m, const Network& n, const cop::model::Timing& t, int node, std::unique_ptr<Packet> p,
             uint64_t send);

class ControllerActor {
 public:
  // level1 >= 0: level-1 controller `level1`; -1: the level 2.
  ControllerActor(const Network& n, Mailboxes& m, int level1, const cop::model::Timing& t);
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

  // A packet that arrived at cycle `at`.
  void take(std::unique_ptr<Packet> p, uint64_t at);
  void hand_arrived();
  // Takes every packet that has arrived.
  void take_ready();
  // Waits until the next packet or the next message of a burst on the wire arrives, or a
  // packet is sent this way (it may arrive before either).
  void await_input();
  void dispatch(std::vector<cop::controller::Delivery>& out);
  void between_levels(std::unique_ptr<Packet> p, Wire& wire, Inbox& to, uint64_t alone) const;
  // `d` down the links of its channels, starting out at cycle `send`.
  void to_nodes(const cop::controller::Delivery& d, uint64_t send);
  void answer(int channel, const cop::wire::Message& m, uint64_t send);
  DownLink& down(int channel) const { return *mail_.nodes[size_t(net_.first_node(level1_) + channel - 1)]; }
  void sleep_to(uint64_t cycle) const;
  uint64_t now_cycles() const;

  const Network& net_;
  Mailboxes& mail_;
  int level1_;
  cop::model::Timing timing_;
  std::unique_ptr<cop::controller::Controller> core_;
  Inbox& in_;
  // Per channel: commands of its bursts not answered yet, and the answers gathered.
  std::vector<size_t> unanswered_;
  std::vector<std::vector<cop::wire::Message>> answers_;
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<>> arriving_;
  uint64_t arrivals_ = 0;
};

}  // namespace copbench::simcop
