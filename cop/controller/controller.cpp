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

using wire::combine;
using wire::payload;
using wire::set_payload;

// Whether the instruction's TKNO field is a task number (SETTC/SETBM carry COUNT-1 there).
bool names_task(Opcode op) { return op != Opcode::SETTC && op != Opcode::SETBM; }

// Commands that act on a global operation's mask entries (the GAS tags
// [first, first+n)): masks, contributions, the initialising write, broadcasts.
bool acts_on_operation(const Message& m, uint32_t& n) {
  switch (m.ins.opcode) {
    case Opcode::SETTC:
    case Opcode::SETBM:
      n = uint32_t(m.count());
      return true;
    case Opcode::BENTRY:
    case Opcode::BCAST32:
    case Opcode::BCAST64:
      n = 1;
      return true;
    case Opcode::WSRAM32:
    case Opcode::WSRAM64:
      n = 1;
      return m.ins.space == Space::GAS;
    default:
      n = 1;
      return wire::is_reduction(m.ins.opcode);
  }
}

// The configuration's limits, checked before any bank is sized from them.
Config validated(const Config& config) {
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

Controller::Controller(Config config, model::Timing timing)
    : config_(validated(config)),
      timing_(timing),
      ram_(config_.channels, config_.tasks_per_channel, config_.tas_words, config_.gas_words, config_.sas_words,
           config_.partitions),
      queues_(size_t(config_.channels)),
      last_sent_(size_t(config_.channels)),
      has_last_sent_(size_t(config_.channels), false),
      live_(size_t(config_.channels)) {
  ram_.sas(0) = config_.cntno;
}

uint8_t Controller::channel_partition(int channel) const {
  return static_cast<uint8_t>(ram_.sas(uint32_t(channel)));
}

Sender Controller::in_process_sender(const Message& msg) {
  return Sender{false, names_task(msg.ins.opcode) ? msg.ins.tkno : uint16_t{0}};
}

void Controller::receive(int channel, const Message& msg, uint64_t ready_at, Sender from,
                         std::vector<Delivery>& out) {
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  switch (msg.ins.opcode) {
    case Opcode::ACK:
    case Opcode::NACK:
      return;  // acknowledgments of our own transmissions: the interface consumes them
    case Opcode::XMIT:
      // The node saw an error in what we sent: the interface resends it.
      if (has_last_sent_[size_t(channel - 1)])
        out.push_back(Delivery{channel_bit(channel), last_sent_[size_t(channel - 1)], cycles_, true});
      return;
    default:
      if (!from.supervisor && from.tkno <= wire::kMaxTkno) live_[size_t(channel - 1)].set(from.tkno);
      queue(channel).push_back(Pending{msg, ready_at, from});
  }
}

int Controller::end_task(int channel, uint16_t tkno, std::vector<Delivery>& out) {
  if (channel < 1 || channel > config_.channels)
    throw std::out_of_range("channel " + std::to_string(channel) + " does not exist");
  const uint64_t bit = channel_bit(channel);
  auto is_task = [&](const Sender& s) { return !s.supervisor && s.tkno == tkno; };
  auto set_by_task = [&](const SetBy& s) { return s.channel == channel && !s.supervisor && s.tkno == tkno; };

  // Its queued commands go; contributions among them are lost to their operations.
  struct Lost {
    uint8_t ppn;
    uint32_t tag;
  };
  std::vector<Lost> lost;
  auto& q = queue(channel);
  for (auto it = q.begin(); it != q.end();) {
    if (!is_task(it->from)) {
      ++it;
      continue;
    }
    const Message& m = it->msg;
    const bool contribution = m.ins.opcode == Opcode::BENTRY || wire::is_reduction(m.ins.opcode) ||
                              ((m.ins.opcode == Opcode::WSRAM32 || m.ins.opcode == Opcode::WSRAM64) &&
                               m.ins.space == Space::GAS);
    if (contribution && m.ins.ppn < ram_.partitions() && m.addr.msgtag < config_.gas_words)
      lost.push_back(Lost{m.ins.ppn, m.addr.msgtag});
    it = q.erase(it);
  }
  if (locked_ == channel && is_task(lock_owner_)) locked_ = 0;
  TaskSet& live = live_[size_t(channel - 1)];
  if (tkno <= wire::kMaxTkno) live.reset(tkno);
  const bool channel_left = live.none();
  if (tkno < config_.tasks_per_channel)
    for (int p = 0; p < ram_.partitions(); ++p) ram_.clear_task(static_cast<uint8_t>(p), channel, tkno);

  int failed = 0;
  for (int p = 0; p < ram_.partitions(); ++p) {
    const auto ppn = static_cast<uint8_t>(p);
    for (uint32_t tag = 0; tag < config_.gas_words; ++tag) {
      const TcEntry& tc = ram_.tc(ppn, tag);
      const BmEntry& bm = ram_.bm(ppn, tag);
      if (tc.accessed) {
        if (!(tc.pending & bit)) continue;  // its channel has contributed: it can still complete
        const bool lost_here = std::any_of(lost.begin(), lost.end(), [&](const Lost& l) { return l.ppn == ppn && l.tag == tag; });
        if (!(set_by_task(tc.set_by) || lost_here || channel_left)) continue;
        fail_operation(ppn, tag, tc.mask | (bm.accessed ? bm.mask : 0), Error::task_ended, out);
        failed++;
      } else if (bm.accessed && set_by_task(bm.set_by)) {
        // A broadcast mask its BCAST never came for: the receivers would wait for ever.
        fail_operation(ppn, tag, bm.mask, Error::task_ended, out);
        failed++;
      }
    }
  }
  return failed;
}

void Controller::fail_operation(uint8_t ppn, uint32_t tag, uint64_t dest, Error why, std::vector<Delivery>& out) {
  TcEntry& tc = ram_.tc(ppn, tag);
  BmEntry& bm = ram_.bm(ppn, tag);
  tc = TcEntry{};
  bm = BmEntry{};
  if (dest == 0) return;
  Message nack = wire::make(Opcode::NACK, 0, Space::GAS, tag);
  nack.ins.ppn = ppn;
  nack.data1 = wire::nack_data(why, Opcode::BENTRY);
  stats_.nacks++;
  out.push_back(Delivery{dest, nack, cycles_, true});
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

bool Controller::repeats_in_progress(int channel, const Message& m) const {
  uint32_t n = 1;
  if (!acts_on_operation(m, n) || m.ins.space != Space::GAS || m.ins.ppn >= ram_.partitions()) return false;
  const uint64_t bit = channel_bit(channel);
  const auto end = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{m.addr.msgtag} + n, config_.gas_words));
  for (uint32_t tag = m.addr.msgtag; tag < end; ++tag) {
    const TcEntry& tc = ram_.tc(m.ins.ppn, tag);
    if (tc.accessed && (tc.mask & bit) && !(tc.pending & bit)) return true;
  }
  return false;
}

bool Controller::held(int channel) const {
  const auto& q = queue(channel);
  if (q.empty()) return false;
  if (q.front().msg.ins.opcode != Opcode::LOCK) return repeats_in_progress(channel, q.front().msg);
  // A locked sequence is taken whole: holding it half-way would stop every channel.
  for (auto it = q.begin() + 1; it != q.end() && it->msg.ins.opcode != Opcode::UNLOCK; ++it)
    if (repeats_in_progress(channel, it->msg)) return true;
  return false;
}

int Controller::next_channel() {
  if (locked_) {
    // Only the locked channel runs. If its head is held, nothing else can
    // complete the operation it waits for: it is serviced and refused
    // (mask_in_use, not_participant) instead of stopping the controller.
    const auto& q = queue(locked_);
    if (q.empty()) return 0;
    cycles_ = std::max(cycles_, q.front().ready_at);
    return locked_;
  }
  // The earliest ready head that is not held sets the clock; held() is asked
  // only of channels the poll counter reaches (a LOCK's look-ahead costs).
  std::bitset<wire::kChannels> passed;  // held: DATA_RDY up, but not serviceable yet
  for (;;) {
    uint64_t earliest = UINT64_MAX;
    for (int c = 1; c <= config_.channels; ++c) {
      const auto& q = queue(c);
      if (!q.empty() && !passed.test(size_t(c - 1))) earliest = std::min(earliest, q.front().ready_at);
    }
    if (earliest == UINT64_MAX) return 0;
    const uint64_t now = std::max(cycles_, earliest);
    for (int i = 1; i <= config_.channels; ++i) {
      const int c = (poll_ + i - 1) % config_.channels + 1;
      const auto& q = queue(c);
      if (q.empty() || passed.test(size_t(c - 1)) || q.front().ready_at > now) continue;
      if (held(c)) {
        passed.set(size_t(c - 1));
        continue;
      }
      cycles_ = now;
      return c;
    }
  }
}

bool Controller::step(std::vector<Delivery>& out) {
  const int c = next_channel();
  if (c == 0) return false;
  const Pending p = queue(c).front();
  queue(c).pop_front();
  poll_ = c;
  service(c, p, out);
  return true;
}

int Controller::run(std::vector<Delivery>& out) {
  int n = 0;
  while (step(out)) ++n;
  return n;
}

void Controller::reset_channel(int channel) {
  queue(channel).clear();
  live_[size_t(channel - 1)].reset();
  if (locked_ == channel) locked_ = 0;
}

int Controller::fail_channel(int channel, std::vector<Delivery>& out) {
  reset_channel(channel);
  const uint64_t bit = channel_bit(channel);
  int failed = 0;
  for (int p = 0; p < ram_.partitions(); ++p) {
    const auto ppn = static_cast<uint8_t>(p);
    for (uint32_t tag = 0; tag < config_.gas_words; ++tag) {
      const TcEntry& tc = ram_.tc(ppn, tag);
      if (!tc.accessed || !(tc.pending & bit)) continue;
      const BmEntry& bm = ram_.bm(ppn, tag);
      fail_operation(ppn, tag, (tc.mask | (bm.accessed ? bm.mask : 0)) & ~bit, Error::link_down, out);
      failed++;
    }
  }
  return failed;
}

uint64_t Controller::cost(const Message& msg) const {
  const bool fp = wire::is_floating(msg.ins.opcode) || (msg.ins.opcode == Opcode::RMW64 && msg.ins.m);
  return fp ? timing_.t_op_fp : timing_.t_op_int;
}

void Controller::service(int channel, const Pending& p, std::vector<Delivery>& out) {
  const Message& msg = p.msg;
  cycles_ += cost(msg);
  stats_.serviced++;
  const uint64_t read_at = cycles_;
  std::vector<Delivery> data;
  const Error e = execute(channel, msg, p.from, data);
  // The interface acknowledges as soon as the command is read, before any
  // answer. Answers carry the sender's task number (its Pid register).
  const uint16_t tkno = p.from.supervisor ? (names_task(msg.ins.opcode) ? msg.ins.tkno : uint16_t{0}) : p.from.tkno;
  Message ack = wire::make(e == Error::none ? Opcode::ACK : Opcode::NACK, tkno);
  ack.ins.ppn = msg.ins.ppn & wire::kMaxPpn;
  if (e != Error::none) {
    stats_.nacks++;
    ack.addr = msg.addr;
    ack.data1 = wire::nack_data(e, msg.ins.opcode);
  }
  out.push_back(Delivery{channel_bit(channel), ack, read_at, true});
  remember(channel_bit(channel), ack);
  for (const Delivery& d : data) remember(d.channels, d.msg);
  out.insert(out.end(), data.begin(), data.end());
}

void Controller::emit(uint64_t mask, const Message& msg, std::vector<Delivery>& out) {
  cycles_ += timing_.t_cop_cn;
  out.push_back(Delivery{mask, msg, cycles_, false});
  if (std::popcount(mask) > 1) stats_.broadcasts++;
}

void Controller::remember(uint64_t mask, const Message& msg) {
  for (int c = 1; c <= config_.channels; ++c)
    if (mask & channel_bit(c)) {
      last_sent_[size_t(c - 1)] = msg;
      has_last_sent_[size_t(c - 1)] = true;
    }
}

Error Controller::execute(int channel, const Message& msg, Sender from, std::vector<Delivery>& out) {
  // Every field in range before anything is indexed with it (the rules the
  // decoder applies: an in-process sender's message has not been decoded).
  if (auto bad = wire::validate(msg, wire::Direction::to_controller, config_.limits())) return bad->code;
  if (msg.ins.ppn >= ram_.partitions()) return Error::partition;
  // U/S is the operating system's: only the channel's driver may set it (ch. V).
  if (msg.ins.supervisor && !from.supervisor) return Error::protection;
  // A task acts as itself only: the TKNO field is its Pid register.
  if (!from.supervisor && names_task(msg.ins.opcode) && msg.ins.tkno != from.tkno) return Error::protection;
  const uint8_t ppn = channel_partition(channel);
  // The operating system (supervisor mode) assigns partitions, so it is not confined to one.
  if (msg.ins.ppn != ppn && !msg.ins.supervisor) return Error::partition;
  if (msg.ins.x) return Error::channel_range;  // no level-2 controller is attached to this one
  switch (msg.ins.opcode) {
    case Opcode::LOCK:
      locked_ = channel;
      lock_owner_ = from;
      return Error::none;
    case Opcode::UNLOCK:
      if (locked_ != channel) return Error::not_locked;
      locked_ = 0;
      return Error::none;
    case Opcode::PROBE: {
      Message reply = wire::make(Opcode::PROBE, msg.ins.tkno);
      reply.ins.ppn = ppn;
      reply.addr.cntno = static_cast<uint8_t>(ram_.sas(0));
      reply.addr.chno = static_cast<uint8_t>(poll_);  // the poll counter names the channel
      emit(channel_bit(channel), reply, out);
      return Error::none;
    }
    case Opcode::RSRAM32: case Opcode::RSRAM64: case Opcode::WSRAM32:
    case Opcode::WSRAM64: case Opcode::RMW32: case Opcode::RMW64:
      return data_ram_access(channel, msg, from, out);
    case Opcode::SETTC:
      return set_mask(channel, msg, from, false);
    case Opcode::SETBM:
      return set_mask(channel, msg, from, true);
    case Opcode::BCAST32:
    case Opcode::BCAST64:
      return broadcast(channel, msg, out);
    default:
      if (msg.ins.opcode == Opcode::BENTRY || wire::is_reduction(msg.ins.opcode))
        return contribute(channel, msg, out);
      return Error::unknown_opcode;
  }
}

Error Controller::data_ram_access(int channel, const Message& msg, Sender from, std::vector<Delivery>& out) {
  const Opcode op = msg.ins.opcode;
  const uint8_t ppn = msg.ins.ppn;
  const bool write = op == Opcode::WSRAM32 || op == Opcode::WSRAM64;
  const bool rmw = op == Opcode::RMW32 || op == Opcode::RMW64;
  const bool is64 = wire::is_64bit(op);
  const uint32_t tag = msg.addr.msgtag;

  if (op == Opcode::RSRAM64 && msg.ins.m) {  // read a mask RAM entry: its live mask, 0 when idle
    Message reply = msg;
    if (msg.ins.msel_bcast) {
      const BmEntry& e = ram_.bm(ppn, tag);
      reply.set_data64(e.accessed ? e.mask : 0);
    } else {
      const TcEntry& e = ram_.tc(ppn, tag);
      reply.set_data64(e.accessed ? e.pending : 0);
    }
    emit(channel_bit(channel), reply, out);
    return Error::none;
  }

  // The value a RMW leaves in the word.
  auto modified = [&](uint64_t old) -> uint64_t {
    if (op == Opcode::RMW32) return uint32_t(uint32_t(old) + msg.data1);
    if (msg.ins.m) return std::bit_cast<uint64_t>(std::bit_cast<double>(old) + std::bit_cast<double>(msg.data64()));
    return old + msg.data64();
  };

  uint64_t* word = nullptr;
  switch (msg.ins.space) {
    case Space::TAS: {
      const int target = msg.ins.z ? msg.addr.chno : channel;
      if (channel_partition(target) != ppn) return Error::partition;
      const uint32_t task = msg.addr.ttkno();
      // ch. V: only the owner task writes its task address space (anyone reads;
      // RMW may update others'). The owner is this channel and the sender's own
      // task number; the operating system (U/S) may write any.
      const uint16_t actor = from.supervisor ? msg.ins.tkno : from.tkno;
      if (write && !msg.ins.supervisor && (target != channel || task != actor)) return Error::protection;
      word = &ram_.tas(ppn, target, task, msg.addr.tas_offset());
      break;
    }
    case Space::GAS: {
      word = &ram_.gas(ppn, tag);
      TcEntry& tc = ram_.tc(ppn, tag);
      if (write && tc.accessed) {
        // The first channel of a reduction initialises the partial result with
        // its own contribution (ch. V); anything later would clobber others'.
        if (!(tc.pending & channel_bit(channel)) || tc.has_value) return Error::mask_in_use;
        *word = payload(msg);
        tc.has_value = true;
        tc.pending &= ~channel_bit(channel);
        if (tc.pending == 0) {
          Message as_bcast = msg;
          as_bcast.ins.opcode = is64 ? Opcode::BCAST64 : Opcode::BCAST32;
          complete(ppn, tag, as_bcast, out);
        }
        return Error::none;
      }
      break;
    }
    case Space::SAS:
      if ((write || rmw) && !msg.ins.supervisor) return Error::privilege;
      if ((write || rmw) && tag >= 1 && tag <= uint32_t(config_.channels)) {
        // A channel's partition assignment: must name an existing partition.
        const uint64_t v = write ? (is64 ? msg.data64() : msg.data1) : modified(ram_.sas(tag));
        if (v >= uint64_t(config_.partitions)) return Error::address_range;
      }
      word = &ram_.sas(tag);
      break;
  }

  if (write) {
    *word = payload(msg);
    return Error::none;
  }
  Message reply = msg;
  const uint64_t old = *word;
  if (rmw) *word = modified(old);
  set_payload(reply, is64 ? old : uint32_t(old));
  emit(channel_bit(channel), reply, out);
  return Error::none;
}

Error Controller::check_mask(uint64_t mask, uint8_t ppn) const {
  if (mask == 0) return Error::bad_mask;
  if (config_.channels < 64 && (mask >> config_.channels) != 0) return Error::bad_mask;
  for (int c = 1; c <= config_.channels; ++c)
    if ((mask & channel_bit(c)) && channel_partition(c) != ppn) return Error::partition;
  return Error::none;
}

Error Controller::set_mask(int channel, const Message& msg, Sender from, bool broadcast_ram) {
  const uint8_t ppn = msg.ins.ppn;
  const uint64_t mask = msg.data64();
  if (Error e = check_mask(mask, ppn); e != Error::none) return e;
  const uint32_t first = msg.addr.msgtag;
  const uint32_t n = uint32_t(msg.count());
  // All or nothing: an entry in use means a peer (or a stale operation) owns the range.
  for (uint32_t i = first; i < first + n; ++i)
    if (broadcast_ram ? ram_.bm(ppn, i).accessed : ram_.tc(ppn, i).accessed) return Error::mask_in_use;
  const SetBy by{static_cast<uint8_t>(channel), from.tkno, from.supervisor};
  for (uint32_t i = first; i < first + n; ++i) {
    if (broadcast_ram) {
      ram_.bm(ppn, i) = BmEntry{mask, true, by};
    } else {
      ram_.tc(ppn, i) = TcEntry{mask, mask, true, false, by};
    }
  }
  return Error::none;
}

Error Controller::broadcast(int channel, const Message& msg, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  BmEntry& bm = ram_.bm(ppn, tag);
  if (!bm.accessed) return Error::no_mask;
  ram_.gas(ppn, tag) = payload(msg);
  bm.accessed = false;
  Message data = msg;
  data.addr.chno = static_cast<uint8_t>(channel);  // receivers filter on the source (srctid)
  data.addr.cntno = static_cast<uint8_t>(ram_.sas(0));
  emit(bm.mask, data, out);
  return Error::none;
}

Error Controller::contribute(int channel, const Message& msg, std::vector<Delivery>& out) {
  const uint8_t ppn = msg.ins.ppn;
  const uint32_t tag = msg.addr.msgtag;
  TcEntry& tc = ram_.tc(ppn, tag);
  if (!tc.accessed) return Error::no_mask;
  if (!(tc.pending & channel_bit(channel))) return Error::not_participant;
  if (msg.ins.opcode != Opcode::BENTRY) {
    uint64_t& v = ram_.gas(ppn, tag);
    v = tc.has_value ? combine(msg.ins.opcode, v, payload(msg)) : payload(msg);
    tc.has_value = true;
  }
  tc.pending &= ~channel_bit(channel);
  if (tc.pending == 0) complete(ppn, tag, msg, out);
  return Error::none;
}

void Controller::complete(uint8_t ppn, uint32_t tag, const Message& op, std::vector<Delivery>& out) {
  TcEntry& tc = ram_.tc(ppn, tag);
  BmEntry& bm = ram_.bm(ppn, tag);
  // Results go to the broadcast mask; a barrier with none releases its participants.
  const bool barrier = op.ins.opcode == Opcode::BENTRY;
  const uint64_t dest = bm.accessed ? bm.mask : (barrier ? tc.mask : 0);
  tc.accessed = false;
  tc.pending = 0;
  bm.accessed = false;
  if (dest == 0) return;
  Message result = wire::make(op.ins.opcode, 0, Space::GAS, tag);
  result.ins.ppn = ppn;
  result.addr.cntno = static_cast<uint8_t>(ram_.sas(0));
  if (!barrier) set_payload(result, ram_.gas(ppn, tag));
  emit(dest, result, out);
}

}  // namespace cop::controller
