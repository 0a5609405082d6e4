// copd's commands (server.h): a command frame executed once per (channel,
// task, seq), its commands handed to the controller core in order, and what
// the core sends back routed to the asking task (answers, by the channel's
// FIFO of origins) or to every channel of a mask (results, broadcasts).
#include "controller/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

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
    task.answers.push_back(Answer{a});
    ch.out.emplace_back(a);
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
    for (const Answer& a : task.answers) {
      link::ElementRun r(a.entry);  // a run's answers: index and cycle stamp step
      r.count = a.count;
      r.step = a.step;
      r.index_step = true;
      ch.out.push_back(std::move(r));
    }
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

// Command `i` of frame f (entry e) did not decode (or is not the task's to send): its NACK,
// answered at once and kept with the frame's answers for a resend.
void Server::nack_malformed(int c, Channel& ch, Task& task, const Frame& f, const Entry& e, size_t i,
                            const wire::DecodeError& err) {
  const auto index = static_cast<uint16_t>(i);
  log_limited(fmt::format("channel {} tkno {} frame {} command {}: malformed ({}: {}), NACK", c, f.tkno, f.seq, i,
                          wire::error_name(err.code), err.detail));
  wire::Message nack = wire::make(Opcode::NACK, f.tkno);
  nack.data1 = wire::nack_data(err.code, wire::instruction_opcode(e.words[0]));
  Entry a = link::make_entry(nack, Direction::to_node, EntryKind::answer, f.seq, index, controller_.cycles());
  task.answers.push_back(Answer{a});
  ch.out.emplace_back(a);
  ch.urgent = true;
}

namespace {
// Whether an element with this instruction word makes its task wait for a result
// (its answers may be held for it).
bool waits_for_result(uint32_t word0) {
  const auto op = static_cast<Opcode>(wire::instruction_opcode(word0));
  return op == Opcode::BENTRY || (wire::is_opcode(uint32_t(op)) && wire::is_reduction(op));
}
// Does the task wait for a result after this frame? (A run's elements share element 0's
// instruction word.)
bool waits_for_result(const Frame& f, const link::FrameRuns* runs) {
  if (runs)
    return std::any_of(runs->runs.begin(), runs->runs.end(),
                       [](const link::EntryRun& r) { return waits_for_result(r.first.words[0]); });
  return std::any_of(f.entries.begin(), f.entries.end(), [](const Entry& e) { return waits_for_result(e.words[0]); });
}
}  // namespace

void Server::handle_command(int c, const Frame& f, bool supervisor, const link::FrameRuns* runs) {
  Channel& ch = chan(c);
  Task& task = supervisor ? ch.driver : ch.tasks[f.tkno];
  if (answer_repeat(c, ch, task, f)) return;
  task.executed = true;
  task.seq = f.seq;
  task.answers.clear();
  if (task.lost && !supervisor) {
    answer_lost(c, with_entries(f, runs), task);
    return;
  }
  frame_commands_.clear();
  frame_runs_.clear();
  frame_data_.clear();
  Taking t{Sender{supervisor, f.tkno}, config_.controller.limits(), waits_for_result(f, runs)};
  // The frame's commands are ready t_CN-COP after the node started writing it
  // (its stamp, never later than our clock), as the analytic model charges
  // (seed 000 ch. VI); later commands pipeline behind the first.
  const uint64_t ready_at = std::min(f.cycles, controller_.cycles()) + controller_.timing().t_cn_cop;
  if (!runs) {
    for (size_t i = 0; i < f.entries.size(); ++i) {
      if (t.whole && config_.runs) {
        if (const size_t n = take_run_stretch(ch, task, f, i, t.limits); n > 0) {
          i += n - 1;
          continue;
        }
      }
      take_entry(c, ch, task, f, f.entries[i], i, t);
    }
  } else {
    // A burst's run whole: its element 0 as any entry, the rest read from its words
    // when they continue the run (take_run_whole), else element by element.
    size_t i = 0;
    for (const link::EntryRun& r : runs->runs) {
      take_entry(c, ch, task, f, r.first, i, t);
      size_t k = 1;
      if (r.count > 1 && t.whole) k += take_run_whole(ch, task, r, 1, t.limits);
      for (; k < r.count; ++k) take_entry(c, ch, task, f, r.element(k), i + k, t);
      i += r.count;
    }
  }
  queue_commands(c, ready_at, t.sender);
}

void Server::take_entry(int c, Channel& ch, Task& task, const Frame& f, const Entry& e, size_t i, Taking& t) {
  const auto index = static_cast<uint16_t>(i);
  const bool supervisor = t.sender.supervisor;
  if (t.whole && e.kind == EntryKind::command && e.nwords == t.nwords && e.words[0] == t.word0) {
    // The same instruction word as the command before: what decode and the checks
    // below read from it is the same (opcode, word count, reserved bits, U/S), so
    // only the address and data words are read, and the fields get decode's range
    // checks (wire::validate); one that fails them is decoded whole below for its NACK.
    wire::Message m = last_command_;
    m.op_id = e.op_id;
    if (e.nwords >= 2) {
      m.addr.cntno = static_cast<uint8_t>(wire::field::kCntno.get(e.words[1]));
      m.addr.chno = wire::address_chno(e.words[1]);
      m.addr.msgtag = wire::address_msgtag(e.words[1]);
    }
    if (e.nwords >= 3) m.data1 = e.words[2];
    if (e.nwords >= 4) m.data2 = e.words[3];
    if (!wire::validate(m, Direction::to_controller, t.limits)) {
      take_command(ch, task, Origin{f.tkno, supervisor, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, t.waits},
                   m, /*follows=*/true);
      return;
    }
  }
  t.whole = false;
  auto decoded = link::decode_entry(e, Direction::to_controller, t.limits);
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
    nack_malformed(c, ch, task, f, e, i, err);
    return;
  }
  const wire::Message& m = std::get<wire::Message>(decoded);
  take_command(ch, task, Origin{f.tkno, supervisor, f.seq, index, m.ins.opcode, m.addr.msgtag, m.ins.ppn, t.waits}, m,
               /*follows=*/false);
  t.whole = true;
  t.nwords = e.nwords;
  t.word0 = e.words[0];
}

namespace {
// Whether entry b is the element after entry a of a burst (compact on the link): the same
// kind, word count, instruction word and identity, the address word's MSGTAG + 1.
bool next_element(const Entry& a, const Entry& b) {
  const uint32_t tags = wire::field::kMsgtag.put(~0u);
  return b.kind == EntryKind::command && b.nwords == a.nwords && a.nwords >= 2 && b.words[0] == a.words[0] &&
         b.op_id == a.op_id && (b.words[1] & ~tags) == (a.words[1] & ~tags) &&
         wire::address_msgtag(b.words[1]) == wire::address_msgtag(a.words[1]) + 1;
}
}  // namespace

size_t Server::take_run_stretch(Channel& ch, Task& task, const Frame& f, size_t i, const wire::Limits& limits) {
  if (!next_element(f.entries[i - 1], f.entries[i])) return 0;
  size_t end = i + 1;
  while (end < f.entries.size() && next_element(f.entries[end - 1], f.entries[end])) ++end;
  // Element i continues the run queued last (entry i - 1's, last_command_), and
  // so do the rest; what validate checks of them differs in their MSGTAG's bounds only
  // (its range, GAS offset + 1), so the last passes when every one does.
  const wire::Message& prev = last_command_;
  wire::Message m = prev;
  m.op_id = f.entries[i].op_id;
  m.addr.msgtag = prev.addr.msgtag + 1;
  if (!Controller::continues_run(prev, m)) return 0;
  m.addr.msgtag = wire::address_msgtag(f.entries[end - 1].words[1]);
  if (wire::validate(m, Direction::to_controller, limits)) return 0;  // element by element: some NACK
  const size_t n = end - i;
  ch.fifo.back().count = uint16_t(ch.fifo.back().count + n);
  frame_runs_.back() = uint16_t(frame_runs_.back() + n);
  task.outstanding += uint32_t(n);
  for (size_t k = i; k < end; ++k) {
    const Entry& e = f.entries[k];
    m.addr.msgtag = wire::address_msgtag(e.words[1]);
    if (e.nwords >= 3) m.data1 = e.words[2];
    if (e.nwords >= 4) m.data2 = e.words[3];
    frame_data_.push_back(m.data64());
  }
  last_command_ = m;
  return n;
}

size_t Server::take_run_whole(Channel& ch, Task& task, const link::EntryRun& r, size_t from,
                              const wire::Limits& limits) {
  // Its elements share element 0's kind, word count, instruction word and identity, and
  // step the MSGTAG by one (kRunAddressStep): as take_run_stretch's entries, checked once.
  if (from >= r.count || r.first.kind != EntryKind::command || r.first.nwords < 2 ||
      !(r.flags & link::kRunAddressStep))
    return 0;
  const wire::Message& prev = last_command_;  // element from - 1
  wire::Message m = prev;
  m.op_id = r.first.op_id;
  m.addr.msgtag = prev.addr.msgtag + 1;
  if (wire::address_msgtag(r.word(from, 1)) != m.addr.msgtag || !Controller::continues_run(prev, m)) return 0;
  m.addr.msgtag = wire::address_msgtag(r.word(r.count - 1, 1));
  if (wire::validate(m, Direction::to_controller, limits)) return 0;  // element by element: some NACK
  const size_t n = r.count - from;
  ch.fifo.back().count = uint16_t(ch.fifo.back().count + n);
  frame_runs_.back() = uint16_t(frame_runs_.back() + n);
  task.outstanding += uint32_t(n);
  // Their data words (64 bits: the little-endian words 2 and 3, data64's) to frame_data_
  // in one copy; the last element's message kept as the command queued last.
  const size_t each = r.data_words(), at = frame_data_.size();
  frame_data_.resize(at + n);
  uint64_t* to = frame_data_.data() + at;
  if (each == 2) {
    static_assert(std::endian::native == std::endian::little, "the link's words are little-endian");
    std::memcpy(to, r.data + 8 * from, 8 * n);
  } else if (each == 1) {
    // Word 2 is data1; data2 is the run's (element 0's decode). Composed in registers: a
    // 64-bit read of data1 just written 32 bits wide stalled every element (perf: most
    // of this function's time).
    const uint64_t high = uint64_t(m.data2) << 32;
    const uint8_t* from_word = r.data + 4 * from;
    for (size_t k = 0; k < n; ++k) {
      uint32_t w;
      std::memcpy(&w, from_word + 4 * k, 4);
      to[k] = high | w;
    }
  } else {
    std::fill_n(to, n, m.data64());
  }
  m.addr.msgtag = wire::address_msgtag(r.first.words[1]) + uint32_t(r.count - 1);
  m.set_data64(frame_data_.back());
  last_command_ = m;
  return n;
}

void Server::take_command(Channel& ch, Task& task, const Origin& o, const wire::Message& m, bool follows) {
  // The next element of a run (a burst's; `follows`: the command before it in the frame
  // was queued last): one Origin and one queued record for the run.
  if (follows && config_.runs && Controller::continues_run(last_command_, m)) {
    ch.fifo.back().count++;
    frame_runs_.back()++;
  } else {
    ch.fifo.push_back(o);
    frame_runs_.push_back(1);
    frame_commands_.push_back(m);
  }
  task.outstanding++;
  frame_data_.push_back(m.data64());
  last_command_ = m;
}

void Server::queue_commands(int c, uint64_t ready_at, Sender sender) {
  // The frame's commands to the core in order, those between runs in one call
  // (queueing them answers nothing: their ACKs come when they are serviced); decoded
  // above against these limits, so the core does not check their fields again.
  // A record's first element is frame_commands_[record]; a run's data words lie in
  // frame_data_ from the run's first element on (the core's copy is the only other).
  const std::span<const wire::Message> all(frame_commands_);
  const std::span<const uint64_t> data(frame_data_);
  size_t at = 0, singles = 0;  // the record's first element; the first record not yet queued
  for (size_t rec = 0; rec < frame_runs_.size(); ++rec) {
    const uint16_t n = frame_runs_[rec];
    if (n > 1) {
      if (rec > singles) controller_.receive(c, all.subspan(singles, rec - singles), ready_at, sender, deliveries_, true);
      controller_.receive_run(c, all[rec], data.subspan(at, n), ready_at, sender, /*checked=*/true);
      singles = rec + 1;
    }
    at += n;
  }
  if (all.size() > singles) controller_.receive(c, all.subspan(singles), ready_at, sender, deliveries_, true);
  frame_commands_.clear();
  frame_runs_.clear();
  frame_data_.clear();
}

void Server::route_deliveries(std::vector<Delivery>& deliveries) {
  if (config_.controller.level == 2) {
    route_to_children(deliveries);
    return;
  }
  for (size_t i = 0; i < deliveries.size(); ++i) {
    const Delivery& d = deliveries[i];
    if (d.run == 0) {
      route_delivery(d);
      continue;
    }
    // A run of ACKs, with the run of data words it sent when interleaved (runs.cpp).
    const size_t n = d.run_interleaved && i + 1 < deliveries.size() ? 2 : 1;
    if (!route_run(d, n == 2 ? &deliveries[i + 1] : nullptr))
      for (const Delivery& e : Controller::expand_runs(std::span<const Delivery>(&d, n))) route_delivery(e);
    i += n - 1;
  }
  deliveries.clear();
}

Server::Origin Server::take_origin(Channel& ch, const Sender& who, uint8_t ppn, uint16_t n) {
  // The oldest queued command of the task (and partition) the core serviced: a
  // channel's commands keep their order within a partition, and another job's may
  // pass a held one (controller.h).
  auto it = std::find_if(ch.fifo.begin(), ch.fifo.end(), [&](const Origin& o) {
    return o.tkno == who.tkno && o.supervisor == who.supervisor && (o.ppn & wire::kMaxPpn) == ppn;
  });
  if (it == ch.fifo.end()) it = ch.fifo.begin();
  Origin o = *it;
  o.count = n;
  if (it->count > n) {  // the rest of a run: its next element first
    it->count = uint16_t(it->count - n);
    it->index = uint16_t(it->index + n);
    it->tag += n;
  } else if (it == ch.fifo.begin()) {
    ch.fifo.pop_front();  // nearly always: the channel's order
  } else {
    ch.fifo.erase(it);
  }
  return o;
}

void Server::route_delivery(const Delivery& d) {
  if (d.to_parent) {
    route_up(d);
    return;
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
        return;
      }
      ch.last_answered = take_origin(ch, d.hop.origin, d.msg.ins.ppn, 1);
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
    return;
  }
  queue_broadcast(d);
}

void Server::queue_broadcast(const Delivery& d) {
  const Entry e = link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle);
  for (int c = 1; c <= config_.controller.channels; ++c)
    if (d.to(c) && chan(c).registered) {
      chan(c).out.emplace_back(e);
      chan(c).urgent = true;
    }
}

bool Server::route_run(const Delivery& acks, Delivery* data) {
  const Opcode op = acks.msg.ins.opcode;
  if (acks.to_parent || !acks.link_level || op != Opcode::ACK || !std::has_single_bit(acks.channels) ||
      acks.run > UINT16_MAX || (data && (data->link_level || data->run != acks.run || data->run_data.size() != data->run)))
    return false;
  // (A data run's MSGTAGs step within the field: its words are its first's, plus k.)
  if (data && uint64_t(data->msg.addr.msgtag) + data->run - 1 > wire::field::kMsgtag.mask()) return false;
  const int c = std::countr_zero(acks.channels) + 1;
  Channel& ch = chan(c);
  const Sender& who = acks.hop.origin;
  const auto rec = std::find_if(ch.fifo.begin(), ch.fifo.end(), [&](const Origin& o) {
    return o.tkno == who.tkno && o.supervisor == who.supervisor && (o.ppn & wire::kMaxPpn) == acks.msg.ins.ppn;
  });
  if (rec == ch.fifo.end() || rec->count < acks.run) return false;  // not one run's elements
  const auto n = uint16_t(acks.run);
  const Origin o = take_origin(ch, who, acks.msg.ins.ppn, n);
  ch.last_answered = o;
  ch.last_answered.count = 1;
  ch.last_answered.index = uint16_t(o.index + n - 1);
  ch.last_answered.tag = o.tag + n - 1;
  // As the element path, each ACK: urgent, or held for the result one of them waits for.
  // Not looked for when the channel's replies go out at once anyway (urgent already, or
  // it receives this run's words, which makes it urgent below): a hold then changes
  // nothing (send_replies sends urgent replies and ends the hold).
  if (!o.frame_waits) {
    ch.urgent = true;
  } else if (ch.hold_until == Clock::time_point{} && !ch.urgent && !(data && data->to(c)) &&
             will_receive_any(c, o, n)) {
    ch.hold_until = Clock::now() + kHoldAck;
  }
  wire::Message m = acks.msg;
  m.ins.tkno = o.tkno;  // answers carry the asking task's TKNO (queue_answer)
  link::ElementRun answers(link::make_entry(m, Direction::to_node, EntryKind::answer, o.seq, o.index, acks.at_cycle));
  answers.count = n;
  answers.step = acks.run_step;
  answers.index_step = true;
  if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq) {
    t->answers.push_back(Answer{answers.first, n, acks.run_step});  // one record for the run's answers
    if (t->outstanding > 0) t->outstanding -= std::min<uint32_t>(t->outstanding, n);
  }
  if (!data) {
    if (ch.registered) ch.out.push_back(std::move(answers));
    return true;
  }
  const link::ElementRun words = data_run(*data);
  // The sender receives the words too (a broadcast's root in its mask, a reduction's
  // root): the ACK run, then the words' run (the element path interleaves them, ACK 0,
  // data 0, ACK 1, ...; as two runs they are two compact entries on the link, not one
  // entry per element; the node matches each ACK by its index and each word by its MSGTAG,
  // in any order: cop/driver/channel_entries.cpp take_answer, take_result).
  if (ch.registered) ch.out.push_back(std::move(answers));
  for (int k = 1; k <= config_.controller.channels; ++k)
    if (data->to(k) && chan(k).registered) {
      chan(k).out.push_back(words);
      chan(k).urgent = true;
    }
  return true;
}

link::ElementRun Server::data_run(Delivery& d) {
  // Element k: element 0's words with MSGTAG + k and data words run_data[k] (wire::encode's
  // layout: data1, data2, the low and high halves of Message::data64).
  link::ElementRun r(link::make_entry(d.msg, Direction::to_node, EntryKind::broadcast, 0, 0, d.at_cycle));
  r.count = d.run;
  r.step = d.run_step;
  r.address_step = true;
  r.data = std::make_shared<const std::vector<uint64_t>>(std::move(d.run_data));
  return r;
}

void Server::queue_answer(int c, const Origin& o, const wire::Message& msg, uint64_t at_cycle, bool urgent) {
  Channel& ch = chan(c);
  // Answers carry the asking task's TKNO (the Pid register reads it); the
  // command's own TKNO field is a count for SETTC/SETBM.
  wire::Message m = msg;
  m.ins.tkno = o.tkno;
  Entry e = link::make_entry(m, Direction::to_node, EntryKind::answer, o.seq, o.index, at_cycle);
  if (Task* t = task_of(ch, o); t && t->executed && t->seq == o.seq) t->answers.push_back(Answer{e});
  if (!ch.registered) return;
  ch.out.emplace_back(e);
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
    queue_broadcast(d);
  }
  deliveries_.clear();
}

bool Server::will_receive_any(int c, const Origin& o, uint16_t n) const {
  // will_receive_result of elements o.tag .. o.tag + n - 1 (one opcode and partition: what
  // it checks of them besides their TC and BM entries is checked once), in one pass over
  // the two mask RAMs' consecutive entries.
  if (o.op != Opcode::BENTRY && !wire::is_reduction(o.op)) return false;
  const uint32_t words = config_.controller.gas_words;
  if (o.tag >= words || o.ppn >= controller_.ram().partitions()) return false;
  const uint32_t end = o.tag + std::min<uint32_t>(n, words - o.tag);
  const uint64_t bit = channel_bit(c);
  const bool bentry = o.op == Opcode::BENTRY;
  const DataRam& ram = controller_.ram();
  for (uint32_t tag = o.tag; tag < end; ++tag) {
    const TcEntry& tc = ram.tc(o.ppn, tag);
    if (!tc.accessed) continue;
    const BmEntry& bm = ram.bm(o.ppn, tag);
    if ((bm.accessed ? bm.mask : (bentry ? tc.mask : 0)) & bit) return true;
  }
  return false;
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
