// copd at two levels (seed 000 ch. IV, Figure 5; ch. V, the X bit and CNTNO;
// server.h, parent_link.h). A level-2 copd serves level-1 copd as its
// channels: their command frames carry the controller core's hops, and what
// its core sends goes down on each level-1's sequenced reply stream. A level-1
// copd passes its core's Delivery::to_parent up its ParentLink and hands what
// comes down to the core (receive_from_parent); an answer for one of its tasks
// goes to that task like a local one, matched by task to the commands that
// went up.
#include "controller/server.h"

#include <fmt/format.h>

#include <algorithm>

namespace cop::controller {

using link::Entry;
using link::Frame;
using link::FrameType;
using wire::Opcode;

void Server::handle_child_frame(int c, const Frame& f) {
  Channel& ch = chan(c);
  if (f.session != ch.session) return;  // a frame of an earlier registration
  Task& t = ch.driver;
  // Executed once: a resend is only confirmed again, an older frame ignored.
  const bool fresh = !t.executed || link::seq_after(f.seq, t.seq);
  if (fresh) {
    t.executed = true;
    t.seq = f.seq;
    wire::Limits limits = config_.controller.limits();
    limits.channels = wire::kChannels;  // CHNO names a channel of a level-1 controller
    for (const Entry& e : f.entries) {
      auto d = level_delivery(e, true, limits);
      if (!d) {
        log_limited(fmt::format("level-1 controller {} frame {}: an entry does not decode: dropped", c - 1, f.seq));
        continue;
      }
      controller_.receive_from_child(c, *d, deliveries_);
    }
  }
  // Confirmed at the end of the round, by a reply frame's ack when one went out.
  confirm_.emplace_back(c, !fresh);
}

void Server::send_confirmations() {
  for (const auto& [c, force] : confirm_) {
    const Channel& ch = chan(c);
    if (!ch.registered || (!force && ch.confirmed == ch.driver.seq)) continue;
    Frame ack;
    ack.type = FrameType::sup_ack;
    ack.channel = static_cast<uint16_t>(c);
    ack.seq = ch.driver.seq;
    ack.session = ch.session;
    send_frame(ack, ch.addr, &ch.down_key);
  }
  confirm_.clear();
}

void Server::route_to_children(std::vector<Delivery>& deliveries) {
  for (const Delivery& d : deliveries) {
    const Entry e = level_entry(d);
    for (int c = 1; c <= config_.controller.channels; ++c)
      if (d.to(c) && chan(c).registered) {
        chan(c).out.push_back(e);
        chan(c).urgent = true;
      }
  }
  deliveries.clear();
}

void Server::route_up(const Delivery& d) {
  const int c = d.hop.origin.chno;
  if (d.hop.kind == Hop::command && c >= 1 && c <= config_.controller.channels) {
    // The command the core passed up was the oldest unanswered one of its task (and
    // partition) on the channel: another task's may wait before it (controller.h: a
    // LOCK of another task inside a locked sequence; another job's held command).
    Channel& ch = chan(c);
    const Sender& who = d.hop.origin;
    auto it = std::find_if(ch.fifo.begin(), ch.fifo.end(), [&](const Origin& o) {
      return o.tkno == who.tkno && o.supervisor == who.supervisor && (o.ppn & wire::kMaxPpn) == d.msg.ins.ppn;
    });
    if (it == ch.fifo.end()) it = ch.fifo.begin();
    if (it != ch.fifo.end()) {
      ch.forwarded.push_back(*it);
      ch.fifo.erase(it);
    }
  }
  if (parent_) parent_->send_up(d);
}

void Server::take_from_parent(const Frame& f, std::span<const uint8_t> bytes) {
  std::vector<Delivery> down;
  parent_->handle(f, bytes, config_.controller.limits(), down);
  for (const Delivery& d : down) route_from_parent(d);
}

void Server::route_from_parent(const Delivery& down) {
  std::vector<Delivery> out;
  controller_.receive_from_parent(down, out);
  const int c = down.hop.origin.chno;
  if (down.hop.kind != Hop::answer || c < 1 || c > config_.controller.channels) {
    // Results, releases, voided operations, answers going back up.
    route_deliveries(deliveries_);
    deliveries_.insert(deliveries_.end(), out.begin(), out.end());
    route_failures();
    return;
  }
  // The ACK or NACK (and data) of a command one of this channel's tasks sent up.
  Channel& ch = chan(c);
  const Sender& asker = down.hop.origin;
  for (const Delivery& d : out) {
    if (d.link_level) {
      auto it = std::find_if(ch.forwarded.begin(), ch.forwarded.end(), [&](const Origin& o) {
        return o.tkno == asker.tkno && o.supervisor == asker.supervisor;
      });
      if (it == ch.forwarded.end()) {
        log_limited(fmt::format("channel {}: an answer from the level 2 for task {}, which has nothing up: dropped", c,
                                asker.tkno));
        ch.last_forward_answered.tkno = UINT16_MAX;
        continue;
      }
      ch.last_forward_answered = *it;
      ch.forwarded.erase(it);
      if (Task* t = task_of(ch, ch.last_forward_answered);
          t && t->executed && t->seq == ch.last_forward_answered.seq && t->outstanding > 0)
        t->outstanding--;
    }
    if (ch.last_forward_answered.tkno != UINT16_MAX)
      queue_answer(c, ch.last_forward_answered, d.msg, d.at_cycle, true);
  }
}

void Server::parent_tick() {
  if (!parent_) return;
  std::vector<ParentLink::Tag> lost;
  if (!parent_->tick(lost)) return;
  // The level 2 is gone: every task waiting for it gets NACK link_down.
  for (int c = 1; c <= config_.controller.channels; ++c) {
    Channel& ch = chan(c);
    for (const Origin& o : ch.forwarded) {
      wire::Message nack = wire::make(Opcode::NACK, o.tkno);
      nack.ins.ppn = o.ppn;
      nack.addr.msgtag = o.tag;
      nack.data1 = wire::nack_data(wire::Error::link_down, o.op);
      queue_answer(c, o, nack, controller_.cycles(), true);
      if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq && t->outstanding > 0) t->outstanding--;
    }
    ch.forwarded.clear();
  }
  for (const auto& [ppn, tag] : lost) {
    wire::Message nack = wire::make(Opcode::NACK, 0, wire::Space::GAS, tag);
    nack.ins.ppn = ppn;
    nack.data1 = wire::nack_data(wire::Error::link_down, Opcode::BENTRY);
    route_from_parent(Delivery{0, nack, controller_.cycles(), true, false, Hop{}});
  }
}

}  // namespace cop::controller
