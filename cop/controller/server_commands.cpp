// copd's commands (server.h): a command frame executed once per (channel,
// task, seq), its commands handed to the controller core in order, and what
// the core sends back routed to the asking task (answers, by the channel's
// FIFO of origins) or to every channel of a mask (results, broadcasts).
#include "controller/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace cop::controller {

using link::Entry;
using link::EntryKind;
using link::Frame;
using link::FrameType;
using wire::Direction;
using wire::Opcode;

void Server::refuse_forged(int c, const Frame& f, const std::string& why) {
  Channel& ch = chan(c);
  ch.forged++;
  // Not answered: a NACK to it would reach the task it names, which could take
  // it for the answer to its own frame of that seq.
  log_limited(fmt::format("channel {}: {} frame seq {} claiming TKNO {} refused ({}; {} on this channel so far), not answered", c,
                          link::frame_type_name(f.type), f.seq, f.tkno, why, ch.forged));
}

void Server::answer_lost(int c, const Frame& f, Task& task) {
  // The task's partition is gone (cop.h "Epochs"): nothing of the frame reaches the
  // controller; every command is answered NACK epoch_lost (libcop: CopErrEpochLost).
  Channel& ch = chan(c);
  for (size_t i = 0; i < f.entries.size(); ++i) {
    wire::Message nack = wire::make(Opcode::NACK, f.tkno);
    nack.data1 = wire::nack_data(wire::Error::epoch_lost, wire::instruction_opcode(f.entries[i].words[0]));
    const Entry a = link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, uint16_t(i), controller_.cycles());
    task.answers.push_back(a);
    ch.out.push_back(a);
  }
  ch.urgent = true;
}

Server::Task* Server::task_of(Channel& ch, const Origin& o) {
  if (o.supervisor) return &ch.driver;
  return o.tkno < ch.tasks.size() ? &ch.tasks[o.tkno] : nullptr;
}

// A frame the task sent before: a resend (XMIT) gets the answers already given (and,
// while its commands wait for service, an in-progress ACK), a late or replayed older
// one nothing; never a second execution. False for a new frame.
bool Server::answer_repeat(int c, Channel& ch, Task& task, const Frame& f) {
  if (task.executed && task.seq == f.seq) {
    // A resend (XMIT): the answers we gave, not a second execution.
    if (config_.verbose) log_(link::LogLevel::info, fmt::format("channel {} tkno {}: resend of frame {}", c, f.tkno, f.seq));
    ch.out.insert(ch.out.end(), task.answers.begin(), task.answers.end());
    ch.urgent = true;
    if (task.outstanding > 0) {
      // Not lost, waiting for service: the node must not give up on it.
      Frame busy;
      busy.type = FrameType::reply;
      busy.channel = static_cast<uint16_t>(c);
      busy.session = ch.session;
      busy.cycles = controller_.cycles();
      busy.entries.push_back(link::make_entry(wire::make(Opcode::ACK, uint16_t(f.tkno & wire::kMaxTkno)),
                                              Direction::to_node, EntryKind::answer, f.seq, link::kInProgressIndex,
                                              controller_.cycles()));
      send_frame(busy, ch.addr, &ch.down_key);
    }
    return true;
  }
  if (task.executed && !link::seq_after(f.seq, task.seq)) {
    // An older frame, late or duplicated on the way (or replayed): executed already.
    stats_.stale++;
    if (config_.verbose)
      log_(link::LogLevel::info, fmt::format("channel {} tkno {}: late frame {} (last {}) ignored", c, f.tkno, f.seq, task.seq));
    return true;
  }
  return false;
}

// Command `i` of frame f did not decode (or is not the task's to send): its NACK,
// answered at once and kept with the frame's answers for a resend.
void Server::nack_malformed(int c, Channel& ch, Task& task, const Frame& f, size_t i, const wire::DecodeError& err) {
  const Entry& e = f.entries[i];
  const auto index = static_cast<uint16_t>(i);
  log_limited(fmt::format("channel {} tkno {} frame {} command {}: malformed ({}: {}), NACK", c, f.tkno, f.seq, i,
                          wire::error_name(err.code), err.detail));
  wire::Message nack = wire::make(Opcode::NACK, f.tkno);
  nack.data1 = wire::nack_data(err.code, wire::instruction_opcode(e.words[0]));
  Entry a = link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, index, controller_.cycles());
  task.answers.push_back(a);
  ch.out.push_back(a);
  ch.urgent = true;
}

namespace {
// Does the task wait for a result after this frame (its answers may be held for it)?
bool waits_for_result(const Frame& f) {
  for (const Entry& e : f.entries) {
    const auto op = static_cast<Opcode>(wire::instruction_opcode(e.words[0]));
    if (op == Opcode::BENTRY || (wire::is_opcode(uint32_t(op)) && wire::is_reduction(op))) return true;
  }
  return false;
}
}  // namespace

void Server::handle_command(int c, const Frame& f, bool supervisor) {
  Channel& ch = chan(c);
  Task& task = supervisor ? ch.driver : ch.tasks[f.tkno];
  if (answer_repeat(c, ch, task, f)) return;
  task.executed = true;
  task.seq = f.seq;
  task.answers.clear();
  if (task.lost && !supervisor) {
    answer_lost(c, f, task);
    return;
  }
  frame_commands_.clear();
  const wire::Limits limits = config_.controller.limits();
  const Sender sender{supervisor, f.tkno};
  // The frame's commands are ready t_CN-COP after the node started writing it
  // (its stamp, never later than our clock), as the analytic model charges
  // (seed 000 ch. VI); later commands pipeline behind the first.
  const uint64_t ready_at = std::min(f.cycles, controller_.cycles()) + controller_.timing().t_cn_cop;
  const bool waits = waits_for_result(f);
  // The last entry decoded whole into a command (frame_commands_.back()): the element
  // commands of a burst (a compact run on the link) share its instruction word.
  const Entry* whole = nullptr;
  for (size_t i = 0; i < f.entries.size(); ++i) {
    const Entry& e = f.entries[i];
    const auto index = static_cast<uint16_t>(i);
    if (whole && e.kind == EntryKind::command && e.nwords == whole->nwords && e.words[0] == whole->words[0]) {
      // The same instruction word as the command before: what decode and the checks
      // below read from it is the same (opcode, word count, reserved bits, U/S), so
      // only the address and data words are read, and the fields get decode's range
      // checks (wire::validate); one that fails them is decoded whole below for its NACK.
      wire::Message m = frame_commands_.back();
      m.op_id = e.op_id;
      if (e.nwords >= 2) {
        m.addr.cntno = static_cast<uint8_t>(wire::field::kCntno.get(e.words[1]));
        m.addr.chno = wire::address_chno(e.words[1]);
        m.addr.msgtag = wire::address_msgtag(e.words[1]);
      }
      if (e.nwords >= 3) m.data1 = e.words[2];
      if (e.nwords >= 4) m.data2 = e.words[3];
      if (!wire::validate(m, Direction::to_controller, limits)) {
        ch.fifo.push_back(Origin{f.tkno, supervisor, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, waits});
        task.outstanding++;
        frame_commands_.push_back(m);
        continue;
      }
    }
    whole = nullptr;
    auto decoded = link::decode_entry(e, Direction::to_controller, limits);
    if (auto* m = std::get_if<wire::Message>(&decoded)) {
      const Opcode op = m->ins.opcode;
      // The link itself acknowledges and resends (a frame sent again is the XMIT).
      if (op == Opcode::ACK || op == Opcode::NACK || op == Opcode::XMIT)
        decoded = wire::DecodeError{wire::Error::unknown_opcode,
                                    fmt::format("{} is link-level: the frame is resent instead", wire::opcode_name(op))};
      // The U/S bit is the sender's, not the command's to claim: only the
      // driver (its key) sends supervisor commands.
      else if (m->ins.supervisor && !supervisor)
        decoded = wire::DecodeError{wire::Error::privilege, "U/S set by a task (only its driver is supervisor)"};
    }
    if (e.kind != EntryKind::command || std::holds_alternative<wire::DecodeError>(decoded)) {
      const wire::DecodeError err = e.kind != EntryKind::command
                                        ? wire::DecodeError{wire::Error::word_count, "entry is not a command"}
                                        : std::get<wire::DecodeError>(decoded);
      nack_malformed(c, ch, task, f, i, err);
      continue;
    }
    const wire::Message& m = std::get<wire::Message>(decoded);
    ch.fifo.push_back(Origin{f.tkno, supervisor, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, waits});
    task.outstanding++;
    frame_commands_.push_back(m);
    whole = &e;
  }
  // The frame's commands to the core in one call, in order (queueing them answers
  // nothing: their ACKs come when they are serviced); decoded just above against
  // these limits, so the core does not check their fields again.
  controller_.receive(c, frame_commands_, ready_at, sender, deliveries_, /*checked=*/true);
  frame_commands_.clear();
}

void Server::route_deliveries(std::vector<Delivery>& deliveries) {
  if (config_.controller.level == 2) {
    route_to_children(deliveries);
    return;
  }
  for (const Delivery& d : deliveries) {
    if (d.to_parent) {
      route_up(d);
      continue;
    }
    const Opcode op = d.msg.ins.opcode;
    const bool ack = d.link_level && !d.ends_operation && (op == Opcode::ACK || op == Opcode::NACK) &&
                     std::has_single_bit(d.channels);
    if (ack || (!d.link_level && wire::has_answer_data(op) && std::has_single_bit(d.channels))) {
      const int c = std::countr_zero(d.channels) + 1;
      Channel& ch = chan(c);
      if (ack) {
        if (ch.fifo.empty()) {  // cannot happen: every serviced command was queued by us
          log_limited(fmt::format("channel {}: answer with no command waiting for it: dropped", c));
          continue;
        }
        // The oldest queued command of the task (and partition) the core serviced: a
        // channel's commands keep their order within a partition, and another job's may
        // pass a held one (controller.h).
        const Sender& who = d.hop.origin;
        auto it = std::find_if(ch.fifo.begin(), ch.fifo.end(), [&](const Origin& o) {
          return o.tkno == who.tkno && o.supervisor == who.supervisor && (o.ppn & wire::kMaxPpn) == d.msg.ins.ppn;
        });
        if (it == ch.fifo.end()) it = ch.fifo.begin();
        ch.last_answered = *it;
        if (it == ch.fifo.begin()) ch.fifo.pop_front();  // nearly always: the channel's order
        else ch.fifo.erase(it);
      }
      const Origin& o = ch.last_answered;
      if (!o.frame_waits) {
        ch.urgent = true;
      } else if (ack && op == Opcode::ACK && ch.hold_until == Clock::time_point{} && will_receive_result(c, o)) {
        ch.hold_until = Clock::now() + kHoldAck;
      }
      queue_answer(c, o, d.msg, d.at_cycle, false);
      if (ack)
        if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq && t->outstanding > 0) t->outstanding--;
      continue;
    }
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int c = 1; c <= config_.controller.channels; ++c)
      if (d.to(c) && chan(c).registered) {
        chan(c).out.push_back(e);
        chan(c).urgent = true;
      }
  }
  deliveries.clear();
}

void Server::queue_answer(int c, const Origin& o, const wire::Message& msg, uint64_t at_cycle, bool urgent) {
  Channel& ch = chan(c);
  // Answers carry the asking task's TKNO (the Pid register reads it); the
  // command's own TKNO field is a count for SETTC/SETBM.
  wire::Message m = msg;
  m.ins.tkno = o.tkno;
  Entry e = link::make_entry(m, Direction::to_node, EntryKind::answer, o.seq, o.index, at_cycle);
  if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq) t->answers.push_back(e);
  if (!ch.registered) return;
  ch.out.push_back(e);
  ch.urgent |= urgent;
}

// fail_channel's and end_task's NACKs are for everyone taking part: broadcasts by tag.
void Server::route_failures() {
  if (config_.controller.level == 2) {
    route_to_children(deliveries_);
    return;
  }
  for (const Delivery& d : deliveries_) {
    if (d.to_parent) {  // a level-1 voids an X operation: the level 2 voids it for the others
      route_up(d);
      continue;
    }
    const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
    for (int k = 1; k <= config_.controller.channels; ++k)
      if (d.to(k) && chan(k).registered) {
        chan(k).out.push_back(e);
        chan(k).urgent = true;
      }
  }
  deliveries_.clear();
}

bool Server::will_receive_result(int c, const Origin& o) const {
  if (o.op != Opcode::BENTRY && !wire::is_reduction(o.op)) return false;
  if (o.tag >= config_.controller.gas_words || o.ppn >= controller_.ram().partitions()) return false;
  const TcEntry& tc = controller_.ram().tc(o.ppn, o.tag);
  const BmEntry& bm = controller_.ram().bm(o.ppn, o.tag);
  const uint64_t to = bm.accessed ? bm.mask : (o.op == Opcode::BENTRY ? tc.mask : 0);
  return tc.accessed && (to & channel_bit(c));
}

}  // namespace cop::controller
