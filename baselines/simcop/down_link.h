// A node's down link (its level-1 controller -> the node), carried in-process: what the
// controller sends the node (results, barrier exits, broadcast words, the answers to its
// bursts) is stamped with the cycle the node has it and queued here, not sent as a
// SimGrid communication of its own. A 16 KB broadcast is 2048 words to every node; as a
// communication and two wake-ups each they made sim-cop's time grow with nodes x words
// (issue 36: hours at 4096 nodes). The node wakes once a burst instead: when what it
// waits for is all queued (its `need`), and then sleeps to the cycle it has the last of it.
//
// The timing is the serial link's (network.h, SerialLink::of, as the libcop-call model
// has it), a FIFO wire: a message starts onto the wire when it is sent or when the wire
// is free, whichever is later, and holds it one wire time; the node has a result or word
// t_COP-CN after it started out (its first word on the link to the node reading it,
// seed 000 ch. VI), a burst's m answers t_COP-CN + (m - 1) wire times after they started
// (copd holds a burst's answers and sends them together), and a flight after that
// (cop:link_lat). A half-duplex link (thesis: SHARED) carries a node's bursts up on the
// same wire; up and down are timed apart here (nothing the model counts has a node
// send while words come down to it).
#pragma once

#include <simgrid/s4u.hpp>

#include <cop/wire.h>

#include <cstdint>
#include <deque>
#include <span>

#include "model/libcop_call.h"

namespace copbench::simcop {

class DownLink {
 public:
  struct Arrival {
    uint64_t cycle = 0;  // when the node has it
    cop::wire::Message msg;
    bool answer = false;  // an ACK/NACK of the node's burst (else data: a result, exit or word)
  };

  DownLink(const cop::model::SerialLink& link, uint64_t t_cop_cn)
      : link_(link), t_cop_cn_(t_cop_cn), bell_(simgrid::s4u::Semaphore::create(0)) {}

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
  std::deque<Arrival> queue_;
  uint64_t wire_free_ = 0;  // the cycle from which the wire is free
  size_t need_ = 0;         // the node waits until this many are queued (0: it does not wait)
  simgrid::s4u::SemaphorePtr bell_;
};

}  // namespace copbench::simcop
