// The controller core's front (seed 000 ch. IV-V): commands received per
// channel, the round-robin poll counter choosing the next one, the channel
// interface's ACK/NACK for each serviced command, and dispatch to what the
// command does (data_ram_access.cpp, global_ops.cpp); the poll counter's choice is
// in poll.cpp.
#include "controller/controller.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace cop::controller {

using wire::Error;
using wire::Message;
using wire::Opcode;
using wire::Space;

namespace {

// Whether the instruction's TKNO field is a task number (SETTC/SETBM carry COUNT-1 there).
bool names_task(Opcode op) { return op != Opcode::SETTC && op != Opcode::SETBM; }

// The configuration's limits, checked before any bank is sized from them.
Config validated(const Config& config) {
  if (config.level < 1 || config.level > 2 || (config.level == 2 && config.has_parent))
    throw std::invalid_argument("level must be 1 (with or without a parent) or 2");
  if (config.channels < 1 || config.channels > wire::kChannels) throw std::invalid_argument("channels must be 1..64");
  if (config.partitions < 1 || config.partitions > int(wire::kMaxPpn) + 1)
    throw std::invalid_argument("partitions must be 1..16");
  if (config.tasks_per_channel < 1 || config.tasks_per_channel > wire::kMaxTtkno + 1)
    throw std::invalid_argument("tasks per channel must be 1..512");
  if (config.tas_words < 1 || config.tas_words > wire::kMaxTasOffset + 1)
    throw std::invalid_argument("TAS words must be 1..1024");
  if (config.gas_words < 1 || config.gas_words > wire::kMaxMsgtag + 1)
    throw std::invalid_argument("GAS words must be 1..524288");
  if (config.sas_words < uint32_t(config.channels) + 1 || config.sas_words > wire::kMaxMsgtag + 1)
    throw std::invalid_argument("SAS must hold CNTNO and one partition word per channel");
  return config;
}

}  // namespace

Controller::Controller(Config config, hardware::Timing timing)
    : config_(validated(config)),
      timing_(timing),
      ram_(config_.channels, config_.tasks_per_channel, config_.tas_words, config_.gas_words, config_.sas_words,
           config_.partitions),
      queues_(size_t(config_.channels)),
      last_sent_(size_t(config_.channels)),
      has_last_sent_(size_t(config_.channels), false),
      live_(size_t(config_.channels)),
      revoked_(size_t(config_.channels)),
      task_ppn_(size_t(config_.channels) * config_.tasks_per_channel, kChannelPartition),
      queued_ppn_(size_t(config_.channels)) {
  ram_.sas(0) = config_.cntno;
}

uint8_t Controller::channel_partition(int channel) const {
  return static_cast<uint8_t>(ram_.sas(uint32_t(channel)));
}

void Controller::set_task_partition(int channel, uint16_t tkno, uint8_t ppn) {
  if (channel < 1 || channel > config_.channels || tkno >= config_.tasks_per_channel)
    throw std::out_of_range("no task " + std::to_string(tkno) + " on channel " + std::to_string(channel));
  if (ppn != kChannelPartition && ppn >= ram_.partitions())
    throw std::out_of_range("partition " + std::to_string(ppn) + " does not exist");
  uint8_t& cur = task_ppn_[size_t(channel - 1) * config_.tasks_per_channel + tkno];
  if (cur != kChannelPartition) ppn_tasks_[cur]--;
  cur = ppn;
  if (cur != kChannelPartition) ppn_tasks_[cur]++;
}

uint8_t Controller::task_partition(int channel, uint16_t tkno) const {
  if (channel < 1 || channel > config_.channels || tkno >= config_.tasks_per_channel) return kChannelPartition;
  return task_ppn_[size_t(channel - 1) * config_.tasks_per_channel + tkno];
}

uint8_t Controller::partition_of(int channel, Sender from) const {
  // A level 2's channels are level-1 controllers: their partition is SAS word [c].
  if (from.supervisor || config_.level == 2) return channel_partition(channel);
  const uint8_t p = task_partition(channel, from.tkno);
  return p == kChannelPartition ? channel_partition(channel) : p;
}

bool Controller::acts_in(int channel, Sender from, uint8_t ppn) const {
  // A level 2's channel acts in its own partition and in those of the level-1's jobs
  // (server: a level-1 joins each job at its level 2 under a slot, its TKNO here).
  if (config_.level == 2 && !from.supervisor) {
    if (channel_partition(channel) == ppn) return true;
    const size_t first = size_t(channel - 1) * config_.tasks_per_channel;
    return std::find(task_ppn_.begin() + long(first), task_ppn_.begin() + long(first + config_.tasks_per_channel),
                     ppn) != task_ppn_.begin() + long(first + config_.tasks_per_channel);
  }
  return partition_of(channel, from) == ppn;
}

bool Controller::in_partition(int channel, uint8_t ppn) const {
  return channel_partition(channel) == ppn || (ppn <= wire::kMaxPpn && ppn_tasks_[ppn] > 0);
}

void Controller::clear_partition(uint8_t ppn) {
  if (ppn >= ram_.partitions()) return;
  for (uint32_t w = 0; w < config_.gas_words; ++w) {
    ram_.gas(ppn, w) = 0;
    ram_.update_tc(ppn, w, [](TcEntry& e) { e = TcEntry{}; });
    ram_.update_bm(ppn, w, [](BmEntry& e) { e = BmEntry{}; });
  }
  for (int c = 1; c <= config_.channels; ++c)
    for (uint32_t t = 0; t < config_.tasks_per_channel; ++t) ram_.clear_task(ppn, c, t);
  std::erase_if(parked_, [&](const Message& m) { return m.ins.ppn == ppn; });
  std::erase_if(held_masks_, [&](const HeldMask& h) { return h.ppn == ppn; });
  std::erase_if(cast_done_, [&](const auto& d) { return (d.first >> 32) == ppn; });
}

Sender Controller::in_process_sender(const Message& msg) {
  return Sender{false, names_task(msg.ins.opcode) ? msg.ins.tkno : uint16_t{0}};
}

void Controller::receive(int channel, const Message& msg, uint64_t ready_at, Sender from,
                         std::vector<Delivery>& out, bool checked) {
  receive(channel, std::span<const Message>(&msg, 1), ready_at, from, out, checked);
}

void Controller::receive(int channel, std::span<const Message> commands, uint64_t ready_at, Sender from,
                         std::vector<Delivery>& out, bool checked) {
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  auto& q = queue(channel);
  auto& counts = queued_ppn_[size_t(channel - 1)];
  bool queued = false;
  for (const Message& msg : commands) {
    switch (msg.ins.opcode) {
      case Opcode::ACK:
      case Opcode::NACK:
        continue;  // acknowledgments of our own transmissions: the interface consumes them
      case Opcode::XMIT:
        // The node saw an error in what we sent: the interface resends it.
        if (has_last_sent_[size_t(channel - 1)])
          out.push_back(Delivery{channel_bit(channel), last_sent_[size_t(channel - 1)], cycles_, true});
        continue;
      default:
        q.push_back(Pending{msg, ready_at, from, checked});
        counts[msg.ins.ppn & wire::kMaxPpn]++;
        queued = true;
    }
  }
  if (queued && !from.supervisor && from.tkno <= wire::kMaxTkno) live_[size_t(channel - 1)].set(from.tkno);
}

void Controller::receive_words(int channel, std::span<const uint32_t> words, std::vector<Delivery>& out) {
  auto decoded = wire::decode(words, wire::Direction::to_controller, config_.limits());
  if (auto* m = std::get_if<Message>(&decoded)) {
    receive(channel, *m, out);
    return;
  }
  const auto& e = std::get<wire::DecodeError>(decoded);
  Message nack = wire::make(Opcode::NACK);
  if (!words.empty()) {
    nack.ins.tkno = wire::instruction_tkno(words[0]);
    nack.ins.ppn = wire::instruction_ppn(words[0]);
    nack.data1 = wire::nack_data(e.code, wire::instruction_opcode(words[0]));
  } else {
    nack.data1 = wire::nack_data(e.code, 0u);
  }
  if (words.size() >= 2) {
    nack.addr.msgtag = wire::address_msgtag(words[1]);
    nack.addr.chno = static_cast<uint8_t>(std::min<uint32_t>(wire::address_chno(words[1]), wire::kChannels));
  }
  stats_.nacks++;
  out.push_back(Delivery{channel_bit(channel), nack, cycles_, true});
}


void Controller::reset_channel(int channel) {
  queue(channel).clear();
  queued_ppn_[size_t(channel - 1)] = {};
  live_[size_t(channel - 1)].reset();
  revoked_[size_t(channel - 1)] = Revoked{};
  vacant_ &= ~channel_bit(channel);
  if (locked_ == channel) locked_ = 0;
  // Its tasks are gone with it: none acts in a job's partition any more.
  for (uint32_t t = 0; t < config_.tasks_per_channel; ++t) set_task_partition(channel, uint16_t(t), kChannelPartition);
}

void Controller::set_vacant(int channel, bool vacant) {
  if (channel < 1 || channel > config_.channels) return;
  vacant_ = vacant ? vacant_ | channel_bit(channel) : vacant_ & ~channel_bit(channel);
}

bool Controller::tick(uint64_t now_us, std::vector<Delivery>& out) {
  now_us_ = std::max(now_us_, now_us);
  for (auto it = vacant_waits_.begin(); it != vacant_waits_.end();) {
    if (now_us_ < it->deadline_us) {
      ++it;
      continue;
    }
    for (uint32_t tag = it->first; tag < it->first + it->n && tag < config_.gas_words; ++tag) {
      const TcEntry& tc = ram_.tc(it->ppn, tag);
      if (!tc.accessed || (tc.pending & vacant_) == 0) continue;  // completed, voided, or a task came
      const BmEntry& bm = ram_.bm(it->ppn, tag);
      void_upward(it->ppn, tag, Error::task_ended, out);  // as end_task: an X operation's level 2 voids it too
      fail_operation(it->ppn, tag, tc.mask | (bm.accessed ? bm.mask : 0), Error::task_ended, out);
    }
    it = vacant_waits_.erase(it);
  }
  if (locked_ == 0 || now_us_ < lock_deadline_us()) return false;
  // The deadlock timer ran out: the lock is taken back, the round robin runs again.
  revoked_[size_t(locked_ - 1)] = Revoked{true, lock_owner_};
  locked_ = 0;
  stats_.locks_taken_back++;
  return true;
}

uint64_t Controller::lock_deadline_us() const {
  if (locked_ == 0 || config_.lock_limit_us == 0) return UINT64_MAX;
  return locked_at_us_ + config_.lock_limit_us;
}

bool Controller::refused_as_revoked(int channel, const Pending& p) {
  Revoked& r = revoked_[size_t(channel - 1)];
  if (!r.set || p.from.supervisor != r.owner.supervisor || p.from.tkno != r.owner.tkno) return false;
  const Opcode op = p.msg.ins.opcode;
  if (op == Opcode::LOCK) {  // a new locked sequence: the old one is over
    r = Revoked{};
    return false;
  }
  if (op == Opcode::UNLOCK) r = Revoked{};  // the end of the sequence whose lock was taken back
  return true;
}

uint64_t Controller::cost(const Message& msg) const {
  const bool fp = wire::is_floating(msg.ins.opcode) || (msg.ins.opcode == Opcode::RMW64 && msg.ins.m);
  return fp ? timing_.t_op_fp : timing_.t_op_int;
}

Message Controller::acknowledgment(const Message& msg, Sender from, Error e) {
  // Answers carry the sender's task number (its Pid register).
  const uint16_t tkno = from.supervisor ? (names_task(msg.ins.opcode) ? msg.ins.tkno : uint16_t{0}) : from.tkno;
  // wire::make(ACK or NACK, tkno), made here: this runs for every element of a burst.
  Message ack;
  ack.ins.opcode = e == Error::none ? Opcode::ACK : Opcode::NACK;
  ack.ins.tkno = tkno;
  ack.ins.space = Space::GAS;
  ack.ins.ppn = msg.ins.ppn & wire::kMaxPpn;
  if (e != Error::none) {
    stats_.nacks++;
    ack.addr = msg.addr;
    ack.data1 = wire::nack_data(e, msg.ins.opcode);
  }
  return ack;
}

void Controller::service(int channel, const Pending& p, std::vector<Delivery>& out) {
  const Message& msg = p.msg;
  cycles_ += cost(msg);
  stats_.serviced++;
  const uint64_t read_at = cycles_;
  asker_ = p.from;
  passed_on_ = false;
  // The interface acknowledges as soon as the command is read, before any answer:
  // the ACK's place in `out` is taken first and what the command sends follows it
  // (made in place, not gathered and copied: this runs for every element of a burst).
  const size_t at = out.size();
  out.emplace_back();
  // What a task sends after the deadlock timer took its lock back, up to its
  // UNLOCK, is refused: it would run unlocked.
  const Error e =
      refused_as_revoked(channel, p) ? Error::lock_timeout : execute(channel, msg, p.from, out, p.checked);
  // A command passed to another level is answered by the one that executes it.
  if (passed_on_ && e == Error::none) {
    out.erase(out.begin() + std::ptrdiff_t(at));
  } else {
    Delivery& ack = out[at];
    ack.channels = channel_bit(channel);
    ack.msg = acknowledgment(msg, p.from, e);
    ack.at_cycle = read_at;
    ack.link_level = true;
    if (config_.level == 2) ack.hop = Hop{Hop::answer, p.from};
    else ack.hop.origin = p.from;  // whose command (a daemon matches it to its queue)
    // remember(ack.channels, ack.msg) for the one channel, the ACK made again rather
    // than read back from what was just written field by field (that read waits for
    // the writes: a stall on every element).
    const size_t k = size_t(channel - 1);
    const uint64_t nacks = stats_.nacks;
    last_sent_[k] = acknowledgment(msg, p.from, e);
    stats_.nacks = nacks;  // counted once
    has_last_sent_[k] = true;
  }
  for (size_t i = (passed_on_ && e == Error::none) ? at : at + 1; i < out.size(); ++i)
    remember(out[i].channels, out[i].msg);
}

void Controller::answer(int channel, const Message& msg, std::vector<Delivery>& out) {
  if (from_parent_) {
    send_up(msg, Hop{Hop::answer, asker_}, out);
    return;
  }
  emit(channel_bit(channel), msg, out);
  if (config_.level == 2) out.back().hop = Hop{Hop::answer, asker_};
}

void Controller::emit(uint64_t mask, const Message& msg, std::vector<Delivery>& out) {
  cycles_ += timing_.t_cop_cn;
  out.emplace_back(mask, msg, cycles_, false);  // in place: a broadcast gives one per element
  if (std::popcount(mask) > 1) stats_.broadcasts++;
}

void Controller::remember(uint64_t mask, const Message& msg) {
  // The channels of the mask only (an element's ACK goes to one).
  if (config_.channels < 64) mask &= (uint64_t{1} << config_.channels) - 1;
  for (; mask != 0; mask &= mask - 1) {
    const size_t c = size_t(std::countr_zero(mask));
    last_sent_[c] = msg;
    has_last_sent_[c] = true;
  }
}

Error Controller::execute(int channel, const Message& msg, Sender from, std::vector<Delivery>& out, bool checked) {
  // A level-1's NACK mismatch, queued in its order (levels.cpp, receive_from_child).
  if (config_.level == 2 && msg.ins.opcode == Opcode::NACK) return mismatch_from_child(channel, msg, out);
  // Every field in range before anything is indexed with it (the rules the
  // decoder applies: an in-process sender's message has not been decoded). A
  // message the daemon decoded against config().limits() (receive's `checked`)
  // has passed them already; a level 2's limits below only let more through.
  if (!checked) {
    wire::Limits limits = config_.limits();
    if (config_.level == 2) limits.channels = wire::kChannels;  // CHNO names a channel of a level-1 controller
    if (auto bad = wire::validate(msg, wire::Direction::to_controller, limits)) return bad->code;
  }
  if (msg.ins.ppn >= ram_.partitions()) return Error::partition;
  // U/S is the operating system's: only the channel's driver may set it (ch. V).
  if (msg.ins.supervisor && !from.supervisor) return Error::protection;
  // A task acts as itself only: the TKNO field is its Pid register.
  if (!from.supervisor && names_task(msg.ins.opcode) && msg.ins.tkno != from.tkno) return Error::protection;
  // The task's partition (its job's, ch. V), else the channel's: a task of another job
  // on this channel or any other cannot name this one's.
  // The operating system (supervisor mode) assigns partitions, so it is not confined to one.
  if (!msg.ins.supervisor && !acts_in(channel, from, msg.ins.ppn)) return Error::partition;
  if (msg.ins.x && config_.level == 1) {
    if (!config_.has_parent) return Error::channel_range;  // no level-2 controller is attached to this one
    return forward(channel, msg, from, out);
  }
  // A level 2 keeps no task address spaces: a TAS access goes to the level-1 controller CNTNO.
  if (config_.level == 2 && msg.ins.space == Space::TAS && wire::is_data_ram_access(msg.ins.opcode))
    return route_down(msg, from, out);
  switch (msg.ins.opcode) {
    case Opcode::LOCK:
      locked_ = channel;
      lock_owner_ = from;
      locked_at_us_ = now_us_;
      lock_ppn_ = msg.ins.ppn;
      return Error::none;
    case Opcode::UNLOCK:
      if (locked_ != channel) return Error::not_locked;
      locked_ = 0;
      return Error::none;
    case Opcode::PROBE: {
      Message reply = wire::make(Opcode::PROBE, msg.ins.tkno);
      reply.ins.ppn = partition_of(channel, from);
      reply.addr.cntno = static_cast<uint8_t>(ram_.sas(0));
      reply.addr.chno = static_cast<uint8_t>(poll_);  // the poll counter names the channel
      // The X bit (ch. IV): the partition extends beyond this level-1 controller, so a
      // broadcast may come down from the level 2 for a receiver that names no sender.
      reply.ins.x = config_.has_parent;
      answer(channel, reply, out);
      return Error::none;
    }
    case Opcode::SETTC:
    {
      if (msg.data64() == 0) return void_operations(channel, msg, out);
      const Error e = set_mask(channel, msg, from, false, out);
      // An operation waiting for a channel whose tasks have all ended completes only
      // if a task enrols there in time (a level-2 mask names controllers, not channels).
      if (e == Error::none && !msg.ins.x && (msg.data64() & vacant_) != 0 && config_.vacant_limit_us != 0)
        vacant_waits_.push_back(
            VacantWait{msg.ins.ppn, msg.addr.msgtag, uint32_t(msg.count()), now_us_ + config_.vacant_limit_us});
      return e;
    }
    case Opcode::SETBM:
      return set_mask(channel, msg, from, true, out);
    case Opcode::BCAST32:
    case Opcode::BCAST64:
      return broadcast(channel, msg, out);
    default:
      if (wire::is_data_ram_access(msg.ins.opcode)) return data_ram_access(channel, msg, from, out);
      if (msg.ins.opcode == Opcode::BENTRY || wire::is_reduction(msg.ins.opcode))
        return contribute(channel, msg, out);
      return Error::unknown_opcode;
  }
}

}  // namespace cop::controller
