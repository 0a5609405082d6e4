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
        chan(c).out.emplace_back(e);
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
  take_job_answers();
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
  const bool down = parent_->tick(lost);
  take_job_answers();
  if (!down) return;
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

namespace {

JobRequest slot_end(uint16_t slot) {
  JobRequest r;
  r.type = FrameType::task_end;
  r.slot = slot;
  return r;
}

}  // namespace

std::optional<std::array<uint32_t, 3>> Server::join_through_parent(int c, const Frame& f) {
  const std::string job = f.text;
  // The epoch a task holds names both lives its words depend on: its job's partition at
  // the level 2 and this level-1 copd (its task address spaces are here): the level 2's
  // epoch XOR copd's. A re-join naming another life of either is refused epoch_lost. (An
  // XOR of 0 reads as no epoch, which is refused too: an error, never old words.)
  if (jobs_.epoch_of(job) != 0) {
    Frame g = f;
    if (g.info[3] != 0) g.info[1] ^= epoch_;
    auto answer = join_here(c, g);
    if (answer[0] != 0) answer[2] ^= epoch_;
    return answer;
  }
  // A re-join into a job this level-1 does not hold: its words here are gone (copd
  // restarted, or the job's last task here left and it was given back and cleared).
  if (f.info[3] != 0) return lost_join(c, f, "this level-1 copd holds its job no longer");
  auto it = asking_.find(job);
  if (it != asking_.end() && it->second.answered) {
    // The level 2 refused the job: each JOIN that waited for it is refused the same way.
    const link::JoinRefusal why = it->second.refusal;
    it->second.waiting.erase(c);
    if (it->second.waiting.empty()) asking_.erase(it);
    if (why == link::JoinRefusal::epoch_lost) return lost_join(c, f, "the level 2 no longer has its partition");
    log_limited(fmt::format("channel {}: task {} refused job '{}' by the level 2 ({})", c, f.tkno, job, uint32_t(why)));
    return std::array<uint32_t, 3>{0, uint32_t(why), 0};
  }
  if (it == asking_.end()) {
    // The lowest slot that no held job and no question in flight has.
    std::optional<uint16_t> slot;
    const auto held = jobs_.held();
    for (int k = 0; k < config_.controller.partitions && !slot; ++k)
      if (std::none_of(asking_.begin(), asking_.end(), [&](const auto& a) { return a.second.slot == k; }) &&
          std::none_of(held.begin(), held.end(), [&](const Jobs::Held& h) { return h.slot == k; }))
        slot = uint16_t(k);
    if (!slot) return std::array<uint32_t, 3>{0, uint32_t(link::JoinRefusal::no_partition), 0};
    Asking ask;
    ask.slot = *slot;
    it = asking_.emplace(job, std::move(ask)).first;
    parent_->request(JobRequest{FrameType::join, *slot, job, f.info[2], 0, 0});
  }
  it->second.waiting[c] = f;  // this channel's JOIN: done when the answer comes
  return std::nullopt;
}

void Server::take_job_answers() {
  if (!parent_) return;
  if (parent_->take_new_session()) rejoin_jobs();
  for (const JobAnswer& a : parent_->take_answers()) {
    if (a.request.type != FrameType::join) continue;
    const auto it = asking_.find(a.request.job);
    if (it != asking_.end() && !it->second.answered && it->second.slot == a.request.slot) {
      joined_above(a);
      continue;
    }
    // A held job joined again (rejoin_jobs): it keeps its partition, or it is lost.
    const auto held = jobs_.held();
    const auto h = std::find_if(held.begin(), held.end(), [&](const Jobs::Held& j) { return j.id == a.request.job; });
    if (h == held.end() || a.link_down || h->slot != a.request.slot) continue;
    if (a.info[0] != 1u + h->ppn || a.info[2] != h->epoch)
      lose_job(h->id, a.info[0] == 0 ? "the level 2 refused it again" : "the level 2 gave it another partition");
  }
}

void Server::joined_above(const JobAnswer& a) {
  Asking& ask = asking_.at(a.request.job);
  const uint32_t ppn = a.info[0] - 1;
  ask.answered = true;
  if (a.link_down) {
    ask.refusal = link::JoinRefusal::no_parent;
  } else if (a.info[0] == 0) {
    ask.refusal = static_cast<link::JoinRefusal>(a.info[1]);
  } else if (ppn >= uint32_t(config_.controller.partitions)) {
    ask.refusal = link::JoinRefusal::no_partition;  // a partition this level-1 has not: given back
    parent_->request(slot_end(ask.slot));
  } else {
    jobs_.adopt(a.request.job, a.request.uid, uint8_t(ppn), a.info[2], ask.slot);
  }
  // The JOINs that waited: done now, each answered at once.
  const std::map<int, Frame> waiting = std::move(ask.waiting);
  ask.waiting.clear();
  if (ask.refusal == link::JoinRefusal::none) asking_.erase(a.request.job);
  for (const auto& [c, f] : waiting) handle_driver_request(c, f);
  asking_.erase(a.request.job);  // refused: each waiting JOIN has had its refusal
  // Held for JOINs that were not done after all (their driver moved on): given back.
  if (const auto freed = jobs_.release_if_empty(a.request.job)) give_back_slot(*freed);
}

void Server::rejoin_jobs() {
  for (const Jobs::Held& h : jobs_.held())
    parent_->request(JobRequest{FrameType::join, h.slot, h.id, h.uid, 1u + h.ppn, h.epoch});
}

void Server::lose_job(const std::string& job, const std::string& why) {
  const auto held = jobs_.held();
  const auto h = std::find_if(held.begin(), held.end(), [&](const Jobs::Held& j) { return j.id == job; });
  if (h == held.end()) return;
  // Its tasks get epoch_lost on every command until they enrol again (cop.h "Epochs"):
  // the words their partition had are gone with the level 2's.
  for (const auto& [c, t] : jobs_.drop(job)) {
    away_.erase({c, t});
    Channel& ch = chan(c);
    if (t < ch.tasks.size() && ch.tasks[t].enrolled) ch.tasks[t].lost = true;
  }
  if (!jobs_.in_use(h->ppn)) controller_.clear_partition(h->ppn);
  log_(link::LogLevel::warn, fmt::format("job '{}' lost ({}): its tasks get epoch_lost until they enrol again", job, why));
}

void Server::give_back_slot(const Jobs::Freed& freed) {
  if (config_.controller.level == 1 && parent_) parent_->request(slot_end(freed.slot));
}

void Server::leave_slot(int c, uint16_t slot) {
  away_.erase({c, slot});
  chan(c).joined.erase(slot);
  leave_job(c, slot);
  controller_.set_task_partition(c, slot, Controller::kChannelPartition);
}

}  // namespace cop::controller
