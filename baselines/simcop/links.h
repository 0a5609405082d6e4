// The simulated COP's serial links, carried in-process (no SimGrid communication): what a
// node, a level-1 or the level 2 sends is stamped with the cycle its receiver has it and
// queued at the receiver, which wakes once for what it waits for. Sent as SimGrid
// communications, a 16 KB broadcast's 2048 words to every node cost a communication and
// two wake-ups each, and SimGrid's bookkeeping of a sender's detached communications
// grows with those in flight (CommImpl::finish scans them: the level 2's to 64 level-1s
// over a 0.5 us flight): sim-cop's time grew with nodes x words (issue 36: hours at 4096).
//
// The timing is the serial link's (network.h, SerialLink::of, as the libcop-call model
// has it): a FIFO wire (Wire) that a message holds one wire time; a half-duplex link's two
// directions share one wire, a full-duplex link has one each way. Up (a node's burst,
// a level-1's message to the level 2) the receiver has it t_CN-COP + flight after it
// started out (a burst arrives with its first command: the controller takes the others a
// wire time apart, controller_actor.h); down (a result, barrier exit, broadcast word, a
// level 2's message to a level-1) t_COP-CN + flight; a burst's m answers, which copd
// holds and sends together, t_COP-CN + (m - 1) wire times + flight (seed 000 ch. VI).
#pragma once

#include <simgrid/s4u.hpp>

#include <cop/wire.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <vector>

#include "model/libcop_call.h"
#include "simcop/packets.h"

namespace copbench::simcop {

// One wire of a serial link. A message is on it the last wire time(s) before its
// receiver would have it alone (ready: sent + t_CN-COP or t_COP-CN, less its wire
// times), as on the SimGrid links this replaces, which shared a wire's rate among the
// messages on it at once. A message shares it so with those already on their way (it
// goes at 1/(k+1) of the rate while k others are on the wire); theirs stay as they were
// dated (a FIFO in the order they were sent made a level 2's ACK, sent first but on the
// wire later, hold up a command going up: 1.06 us against the model's 1.03 for an 8 B
// broadcast at 128 nodes on thesis, SimGrid's 1.04).
class Wire {
 public:
  // When the last of `messages` messages, the first ready at `ready`, is off the wire.
  uint64_t carry(uint64_t ready, uint64_t messages, uint64_t wire_cycles);
  // The same, the messages already on their way sharing the wire too: each is re-dated
  // by its `redate` (the cycle it is now off the wire) when the new one holds it up. For
  // a wire whose receivers take nothing before it has arrived (a controller's inbox: a
  // level-1's channel at the level 2); a node takes its down link's words ahead (links.h).
  uint64_t share(uint64_t ready, uint64_t messages, uint64_t wire_cycles, std::function<void(uint64_t)> redate);

 private:
  std::vector<std::pair<uint64_t, uint64_t>> busy_;  // messages on their way: [on the wire, off it)
  struct Flow {
    uint64_t ready = 0, work = 0, off = 0;
    std::function<void(uint64_t)> redate;
  };
  std::vector<Flow> period_;  // share: the flows since the wire was last idle
};

// A node's down link: what its level-1 controller sends it, in the order the node has it.
class DownLink {
 public:
  struct Arrival {
    uint64_t cycle = 0;  // when the node has it
    cop::wire::Message msg;
    bool answer = false;  // an ACK/NACK of the node's burst (else data: a result, exit or word)
  };

  DownLink(const cop::model::SerialLink& link, uint64_t t_cop_cn, Wire& wire)
      : link_(link), t_cop_cn_(t_cop_cn), wire_(wire), bell_(simgrid::s4u::Semaphore::create(0)) {}

  // The controller: `msgs` start out at `send_cycle` (or when the wire is free), as one
  // burst of answers or as data each a message of its own.
  void put(std::span<const cop::wire::Message> msgs, uint64_t send_cycle, bool answers);
  // The node: the next message in the order it has them, waiting until at least `need`
  // (>= 1) are queued when none is. Its `cycle` may be later than now: the node sleeps
  // to the cycle of the last it takes before it acts on them.
  Arrival take(size_t need);

 private:
  cop::model::SerialLink link_;
  uint64_t t_cop_cn_;
  Wire& wire_;
  std::deque<Arrival> queue_;
  size_t need_ = 0;  // the node waits until this many are queued (0: it does not wait)
  simgrid::s4u::SemaphorePtr bell_;
};

// What comes to a controller (from its nodes; a level-1's from the level 2, the level 2's
// from the level-1s), in the order it arrives.
class Inbox {
 public:
  Inbox() : bell_(simgrid::s4u::Semaphore::create(0)) {}
  // A sender: `p` arrives at `cycle` (later than now); returns its place, for redate.
  uint64_t put(std::unique_ptr<Packet> p, uint64_t cycle);
  // The packet put as `order` arrives at `cycle` instead (later: its wire was shared).
  void redate(uint64_t order, uint64_t cycle);
  // The controller: the next packet arrived by `now`, or none.
  std::unique_ptr<Packet> take(uint64_t now);
  // The cycle the next packet arrives (UINT64_MAX: none on its way).
  uint64_t next() const { return queue_.empty() ? UINT64_MAX : queue_.begin()->first.first; }
  // The controller waits `seconds` (< 0: until a packet is put) or until a packet is put.
  void wait(double seconds);

 private:
  std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<Packet>> queue_;  // (cycle, order) -> packet
  std::map<uint64_t, uint64_t> cycle_of_;                                       // order -> cycle
  uint64_t order_ = 0;
  bool waiting_ = false;
  simgrid::s4u::SemaphorePtr bell_;
};

}  // namespace copbench::simcop
