// libFuzzer target: the controller core (cop/controller/controller.h).
//
// Input: two bytes choose a small configuration (channels, task spaces, TAS, GAS
// and SAS words, partitions: small so that random addresses hit and global
// operations complete); the rest is a program of operations, each an opcode
// byte and its operands:
//   0 receive_words(channel, 0..4 raw words)
//   1 receive(channel, [message], ready_at, Sender, checked) for words that decode (copd's path)
//   2 step   3 run   4 end_task(channel, tkno)   5 reset_channel   6 fail_channel
//   7 a well-formed command built from a few operand bytes (any opcode the
//     controller takes, the channel's own partition, a small GAS/TAS/SAS tag) sent
//     with a Sender, so that masks, reductions, locks and broadcasts are reached
//   8 receive on a channel that does not exist: must throw std::out_of_range
//   A built BCAST or reduction (7) with bits 5..3 of its second operand set is the
//   first of a burst of that many more elements on the next words (issue 36, copd's
//   runs): queued as one run (receive_run); the run path is on when the two
//   configuration bytes differ in bit 0 (Config::runs), and its run deliveries are
//   checked unpacked (expand_runs), each element like any command.
// Invariants checked after every operation (each failure aborts with its reason):
//   - every serviced command gets exactly one link-level ACK or NACK, addressed to
//     its channel alone, in its sender's arrival order (its TKNO echoed), before
//     any data of that command; a step that services nothing emits nothing
//   - a malformed raw command gets exactly one NACK at once, carrying the decoder's
//     error code; ACK and NACK from a node produce nothing; a command answered on
//     receipt gets one NACK (protection, privilege or partition) to its channel
//     and is not serviced later
//   - a command from a task that claims supervisor mode or another task's number
//     is refused with a NACK and never executed
//   - every delivery goes to a non-empty set of existing channels and is a message
//     a node can decode (cop/wire.h, to_node), so the driver never drops it
//   - DATA_RDY of a channel is exactly "a command of it waits"; the modelled clock
//     never runs backwards; stats count what was emitted
#include <algorithm>
#include <cop/wire.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "controller/controller.h"

using namespace cop;
using controller::Controller;
using controller::Delivery;
using controller::Sender;
using wire::Direction;
using wire::Error;
using wire::Message;
using wire::Opcode;

namespace {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return at_ >= n_; }
  uint8_t u8() { return at_ < n_ ? d_[at_++] : 0; }
  uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
  uint32_t u32() { return uint32_t(u16()) | (uint32_t(u16()) << 16); }

 private:
  const uint8_t* d_;
  size_t n_, at_ = 0;
};



struct Expect {
  uint16_t tkno;
  uint8_t ppn;        // the partition it names: commands of one partition keep their order
  bool must_refuse;   // a task claimed more than its Sender allows
  bool by_user;       // sent by the user task `tkno` (end_task drops exactly these)
  Sender from;        // who sent it: a sender's commands keep their order within a partition
};

class Harness {
 public:
  Harness(const controller::Config& cfg) : c_(cfg), cfg_(cfg), model_(size_t(cfg.channels)) {}

  void run_program(Input& in) {
    int ops = 0;
    while (!in.empty() && ops++ < 512) {
      const uint8_t op = in.u8() % 9;
      const int ch = 1 + in.u8() % cfg_.channels;
      switch (op) {
        case 0: raw(in, ch); break;
        case 1: with_sender(in, ch); break;
        case 2: step(); break;
        case 3: run(); break;
        case 4: end_task(ch, uint16_t(in.u16() & wire::kMaxTkno)); break;
        case 5: reset(ch, false); break;
        case 6: reset(ch, true); break;
        case 7: built(in, ch); break;
        case 8: bad_channel(in); break;
      }
      check_ready();
    }
    run();
  }

 private:
  // ---- operations ----
  void raw(Input& in, int ch) {
    const size_t n = in.u8() % 5;
    std::vector<uint32_t> w(n);
    for (auto& x : w) x = in.u32();
    auto decoded = wire::decode(w, Direction::to_controller, cfg_.limits());
        const size_t before = out_.size();
    c_.receive_words(ch, w, out_);
    const size_t added = out_.size() - before;
    if (auto* e = std::get_if<wire::DecodeError>(&decoded)) {
      FUZZ_CHECK(added == 1, "a malformed command got %zu answers", added);
      const Delivery& d = out_[before];
      FUZZ_CHECK(d.link_level && d.msg.ins.opcode == Opcode::NACK && d.channels == controller::channel_bit(ch),
                 "a malformed command's answer is not a NACK to its channel");
      FUZZ_CHECK((d.msg.data1 & 0xFF) == uint32_t(e->code), "NACK code %u, decoder said %d", d.msg.data1 & 0xFF,
                 int(e->code));
    } else {
      // receive_words is the in-process path: the sender is the user task the command names.
      const Message& m = std::get<Message>(decoded);
      const bool mask_op = m.ins.opcode == Opcode::SETTC || m.ins.opcode == Opcode::SETBM;
      after_receive(ch, m, before, Sender{false, mask_op ? uint16_t{0} : m.ins.tkno}, false);
    }
    check_new(before);
  }

  void with_sender(Input& in, int ch) {
    const size_t n = 1 + in.u8() % 4;
    std::vector<uint32_t> w(n);
    for (auto& x : w) x = in.u32();
    const uint8_t s = in.u8();
    Sender from{(s & 1) != 0, uint16_t(in.u16() & wire::kMaxTkno)};
    const uint64_t ready_at = c_.cycles() + (s >> 1);
    auto decoded = wire::decode(w, Direction::to_controller, cfg_.limits());
    if (auto* m = std::get_if<Message>(&decoded)) send(ch, *m, ready_at, from);
  }

  void built(Input& in, int ch) {
    static constexpr Opcode kOps[] = {
        Opcode::BENTRY,  Opcode::LOCK,    Opcode::UNLOCK,  Opcode::PROBE,  Opcode::SETTC,   Opcode::SETBM,
        Opcode::BCAST32, Opcode::BCAST64, Opcode::SUMI32,  Opcode::MAXF,   Opcode::EXOR64,  Opcode::SUMI64,
        Opcode::RSRAM32, Opcode::RSRAM64, Opcode::WSRAM32, Opcode::WSRAM64, Opcode::RMW32,  Opcode::RMW64,
        Opcode::XMIT,    Opcode::ACK};
    const uint8_t a = in.u8(), b = in.u8(), t = in.u8();
    Message m = wire::make(kOps[a % std::size(kOps)]);
    const Opcode op = m.ins.opcode;
    m.ins.tkno = uint16_t(t % cfg_.tasks_per_channel);
    m.ins.ppn = (b & 0x80) ? uint8_t(b & 0xF) : c_.channel_partition(ch);
    m.ins.supervisor = (a & 0x80) != 0;
    const bool mask_op = op == Opcode::SETTC || op == Opcode::SETBM;
    m.ins.space = wire::Space::GAS;
    m.addr.msgtag = uint32_t(b & 0x7) % cfg_.gas_words;
    if (op == Opcode::RSRAM32 || op == Opcode::RSRAM64 || op == Opcode::WSRAM32 || op == Opcode::WSRAM64 ||
        op == Opcode::RMW32 || op == Opcode::RMW64) {
      m.ins.space = static_cast<wire::Space>((b >> 3) % 3);
      if (m.ins.space == wire::Space::TAS) {
        m.ins.z = (b & 0x40) != 0;
        m.addr.chno = m.ins.z ? uint8_t(1 + t % cfg_.channels) : 0;
        m.addr.msgtag = wire::Address::tas_tag(t % cfg_.tasks_per_channel, (b & 7) % cfg_.tas_words);
      } else if (m.ins.space == wire::Space::SAS) {
        m.addr.msgtag = uint32_t(b & 0x7) % cfg_.sas_words;
      }
      m.ins.m = op == Opcode::RSRAM64 && (a & 0x40) && m.ins.space == wire::Space::GAS;
      m.ins.msel_bcast = m.ins.m && (t & 0x80);
    }
    if (mask_op) {
      // A mask of existing channels (sometimes one that does not exist), 1..4 entries.
      const uint64_t all = cfg_.channels == 64 ? ~uint64_t{0} : (uint64_t{1} << cfg_.channels) - 1;
      uint64_t mask = (uint64_t{in.u32()} | (uint64_t{in.u32()} << 32));
      if (!(a & 0x40)) mask &= all;
      m.set_data64(mask);
      m.ins.tkno = uint16_t(t & 3);  // COUNT-1
      if (m.addr.msgtag + uint32_t(m.count()) > cfg_.gas_words) m.addr.msgtag = 0;
    } else {
      m.set_data64(uint64_t{in.u16()});
    }
    if (wire::word_count(op, Direction::to_controller) < 3) m.data1 = m.data2 = 0;
    if (wire::word_count(op, Direction::to_controller) < 4) m.data2 = 0;
    if (wire::validate(m, Direction::to_controller, cfg_.limits())) return;  // not well-formed after all
    // The sender as the link would have it: usually the task the command names.
    Sender from{(t & 0x40) != 0, (t & 0x20) ? uint16_t(t & 0x1F) : m.ins.tkno};
    const bool burst = op == Opcode::BCAST32 || op == Opcode::BCAST64 || wire::is_reduction(op);
    if (burst && ((b >> 3) & 7) != 0) {
      send_run(in, ch, m, 1 + ((b >> 3) & 7), from);
      return;
    }
    send(ch, m, c_.cycles(), from);
  }

  // `m` and n - 1 more elements on the next words (as many as the GAS has), as one run.
  void send_run(Input& in, int ch, const Message& m, uint32_t n, Sender from) {
    n = std::min(n, cfg_.gas_words - m.addr.msgtag);
    std::vector<uint64_t> data{m.data64()};
    for (uint32_t k = 1; k < n; ++k) data.push_back(uint64_t{in.u16()});
    const size_t before = out_.size();
    c_.receive_run(ch, m, data, c_.cycles(), from, /*checked=*/true);
    FUZZ_CHECK(out_.size() == before, "a run was answered on receipt");
    const bool claims_more = !from.supervisor && (m.ins.supervisor || m.ins.tkno != from.tkno);
    for (uint32_t k = 0; k < n; ++k) after_receive(ch, m, before, from, claims_more);
    check_new(before);
  }

  // The run deliveries from `before` on, unpacked into the element path's.
  void unpack(size_t before) {
    const auto ex = Controller::expand_runs(std::span<const Delivery>(out_).subspan(before));
    out_.resize(before);
    out_.insert(out_.end(), ex.begin(), ex.end());
  }

  void bad_channel(Input& in) {
    const int ch = (in.u8() & 1) ? 0 : cfg_.channels + 1 + in.u8() % 8;
    bool threw = false;
    try {
      c_.receive(ch, wire::make(Opcode::LOCK), 0, Sender{true, 0}, out_);
    } catch (const std::out_of_range&) {
      threw = true;
    }
    FUZZ_CHECK(threw, "receive on channel %d did not throw", ch);
  }

  void send(int ch, const Message& m, uint64_t ready_at, Sender from) {
    const size_t before = out_.size();
    // copd's path: a decoded (well-formed) command, handed over as a run of one and not
    // range-checked again by the core (checked).
    c_.receive(ch, std::span<const Message>(&m, 1), ready_at, from, out_, /*checked=*/true);
    const Opcode op = m.ins.opcode;
    const bool mask_op = op == Opcode::SETTC || op == Opcode::SETBM;
    const bool link_op = op == Opcode::ACK || op == Opcode::NACK || op == Opcode::XMIT;
    const bool claims_more =
        !from.supervisor && !link_op && (m.ins.supervisor || (!mask_op && m.ins.tkno != from.tkno));
    after_receive(ch, m, before, from, claims_more);
    check_new(before);
  }

  void after_receive(int ch, const Message& m, size_t before, Sender from, bool must_refuse) {
    const size_t added = out_.size() - before;
    const Opcode op = m.ins.opcode;
    if (op == Opcode::ACK || op == Opcode::NACK) {
      FUZZ_CHECK(added == 0, "a node's %s produced %zu deliveries", op == Opcode::ACK ? "ACK" : "NACK", added);
      return;
    }
    if (op == Opcode::XMIT) {
      FUZZ_CHECK(added <= 1, "XMIT produced %zu resends", added);
      if (added) FUZZ_CHECK(out_[before].link_level && out_[before].channels == controller::channel_bit(ch), "resend");
      return;
    }
    if (added > 0) {
      // Refused on receipt: only a protection refusal may be, one NACK to the channel.
      FUZZ_CHECK(added == 1, "a command got %zu deliveries on receipt", added);
      const Delivery& d = out_[before];
      FUZZ_CHECK(d.link_level && d.msg.ins.opcode == Opcode::NACK && d.channels == controller::channel_bit(ch),
                 "an answer on receipt that is not a NACK to the channel");
      const uint32_t code = d.msg.data1 & 0xFF;
      FUZZ_CHECK(code == uint32_t(Error::protection) || code == uint32_t(Error::privilege) ||
                     code == uint32_t(Error::partition),
                 "a command refused on receipt with code %u (not a protection refusal)", code);
      return;
    }
    // Answers carry the sender's task number; a supervisor's carry the command's own
    // (0 for SETTC/SETBM, whose TKNO field is a count).
    const bool mask_op = op == Opcode::SETTC || op == Opcode::SETBM;
    const uint16_t answer_tkno = from.supervisor ? (mask_op ? uint16_t{0} : m.ins.tkno) : from.tkno;
    model_[size_t(ch - 1)].push_back(
        Expect{answer_tkno, uint8_t(m.ins.ppn & wire::kMaxPpn), must_refuse, !from.supervisor, from});
  }

  void step() {
    const size_t before = out_.size();
    const uint64_t serviced = c_.stats().serviced;
    const bool did = c_.step(out_);
    unpack(before);
    // One command, or a run's elements serviced back to back.
    const uint64_t n = c_.stats().serviced - serviced;
    FUZZ_CHECK(did ? n >= 1 : n == 0, "serviced count");
    if (!did) FUZZ_CHECK(out_.size() == before, "a step that serviced nothing emitted %zu", out_.size() - before);
    account(before, int(n));
  }

  void run() {
    const size_t before = out_.size();
    const uint64_t serviced = c_.stats().serviced;
    const int n = c_.run(out_);
    unpack(before);
    FUZZ_CHECK(n >= 0 && c_.stats().serviced == serviced + uint64_t(n), "run's count");
    account(before, n);
  }

  void end_task(int ch, uint16_t tkno) {
    const size_t before = out_.size();
    const int failed = c_.end_task(ch, tkno, out_);
    FUZZ_CHECK(failed >= 0, "end_task returned %d", failed);
    // The core drops exactly the ended task's queued commands (its user commands).
    auto& q = model_[size_t(ch - 1)];
    std::erase_if(q, [&](const Expect& e) { return e.by_user && e.tkno == tkno; });
    check_new(before);
  }

  void reset(int ch, bool fail) {
    const size_t before = out_.size();
    if (fail) {
      const int failed = c_.fail_channel(ch, out_);
      FUZZ_CHECK(failed >= 0 && size_t(failed) >= out_.size() - before, "fail_channel count");
      for (size_t i = before; i < out_.size(); ++i)
        FUZZ_CHECK(out_[i].msg.ins.opcode == Opcode::NACK && (out_[i].msg.data1 & 0xFF) == uint32_t(Error::link_down) &&
                       !(out_[i].channels & controller::channel_bit(ch)),
                   "fail_channel's delivery is not a NACK link_down to the others");
    } else {
      c_.reset_channel(ch);
      FUZZ_CHECK(out_.size() == before, "reset_channel emitted");
    }
    FUZZ_CHECK(!c_.data_ready(ch), "DATA_RDY after the channel was reset");
    FUZZ_CHECK(c_.locked_channel() != ch, "a reset channel still holds the lock");
    model_[size_t(ch - 1)].clear();
    check_new(before);
  }

  // ---- invariants ----
  // The deliveries from `before` on come from `serviced` commands: each begins with
  // its one ACK/NACK (link level, one channel), which matches that channel's oldest
  // waiting command of the same partition (a command held in one partition does not
  // hold another's, controller.h); everything else is data, not link level.
  void account(size_t before, int serviced) {
    int acks = 0;
    for (size_t i = before; i < out_.size(); ++i) {
      const Delivery& d = out_[i];
      if (!d.link_level || d.ends_operation) {  // data, or a NACK ending an operation for its nodes
        FUZZ_CHECK(acks > 0, "data emitted before the command's ACK");
        continue;
      }
      ++acks;
      FUZZ_CHECK(d.msg.ins.opcode == Opcode::ACK || d.msg.ins.opcode == Opcode::NACK, "link-level %s in service",
                 std::string(wire::opcode_name(d.msg.ins.opcode)).c_str());
      FUZZ_CHECK(std::has_single_bit(d.channels), "an ACK/NACK to several channels (%#llx)",
                 (unsigned long long)d.channels);
      const int ch = std::countr_zero(d.channels) + 1;
      auto& q = model_[size_t(ch - 1)];
      FUZZ_CHECK(!q.empty(), "an ACK/NACK on channel %d, which has no command waiting", ch);
      // The oldest waiting command of its sender (the ACK's origin) in its partition: another
      // sender's LOCK queued inside a locked sequence waits for the UNLOCK (controller.h).
      const Sender& who = d.hop.origin;
      const auto it = std::find_if(q.begin(), q.end(), [&](const Expect& x) {
        return x.ppn == d.msg.ins.ppn && x.from.supervisor == who.supervisor && x.from.tkno == who.tkno &&
               x.from.cntno == who.cntno && x.from.chno == who.chno;
      });
      FUZZ_CHECK(it != q.end(), "channel %d: ACK/NACK in partition %u, which has no command waiting", ch,
                 unsigned(d.msg.ins.ppn));
      const Expect e = *it;
      q.erase(it);
      FUZZ_CHECK(e.tkno == d.msg.ins.tkno, "channel %d: ACK/NACK for tkno %u, oldest command is tkno %u", ch,
                 d.msg.ins.tkno, e.tkno);
      // Refused: protection, or an earlier check (partition, address range...) that
      // refuses it first; never executed.
      if (e.must_refuse)
        FUZZ_CHECK(d.msg.ins.opcode == Opcode::NACK,
                   "a task's command claiming more than its sender was answered %s code %u",
                   std::string(wire::opcode_name(d.msg.ins.opcode)).c_str(), d.msg.data1 & 0xFF);
    }
    FUZZ_CHECK(acks == serviced, "%d commands serviced, %d ACK/NACKs", serviced, acks);
    check_new(before);
  }

  void check_new(size_t before) {
    const uint64_t all = cfg_.channels == 64 ? ~uint64_t{0} : (uint64_t{1} << cfg_.channels) - 1;
    for (size_t i = before; i < out_.size(); ++i) {
      const Delivery& d = out_[i];
      FUZZ_CHECK(d.channels != 0 && (d.channels & ~all) == 0, "delivery to channels %#llx",
                 (unsigned long long)d.channels);
      wire::Words w{};
      const int n = wire::encode(d.msg, Direction::to_node, w);
      FUZZ_CHECK(n > 0, "%s is never sent to a node", std::string(wire::opcode_name(d.msg.ins.opcode)).c_str());
      auto back = wire::decode(std::span<const uint32_t>(w.data(), size_t(n)), Direction::to_node);
      FUZZ_CHECK(std::holds_alternative<Message>(back), "a node cannot decode %s: %s", wire::to_string(d.msg).c_str(),
                 std::get<wire::DecodeError>(back).detail.c_str());
    }
    FUZZ_CHECK(c_.cycles() >= last_cycles_, "the modelled clock ran backwards");
    last_cycles_ = c_.cycles();
    FUZZ_CHECK(c_.stats().nacks >= last_nacks_, "NACK count fell");
    last_nacks_ = c_.stats().nacks;
    if (out_.size() > 4096) out_.clear();
  }

  void check_ready() {
    for (int ch = 1; ch <= cfg_.channels; ++ch) {
      const auto& q = model_[size_t(ch - 1)];
      FUZZ_CHECK(c_.data_ready(ch) == !q.empty(), "channel %d: DATA_RDY %d but %zu commands wait", ch,
                 int(c_.data_ready(ch)), q.size());
    }
  }

  Controller c_;
  controller::Config cfg_;
  std::vector<std::deque<Expect>> model_;
  std::vector<Delivery> out_;
  uint64_t last_cycles_ = 0, last_nacks_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Input in(data, size);
  const uint8_t a = in.u8(), b = in.u8();
  controller::Config cfg;
  cfg.channels = 1 + a % 8;
  if (a & 0x80) cfg.channels = 64;
  cfg.tasks_per_channel = 1u + (b & 3);
  cfg.tas_words = 1u + ((b >> 2) & 7);
  cfg.gas_words = 1u + ((b >> 5) & 7) * 3;
  cfg.sas_words = uint32_t(cfg.channels) + 1u + ((a >> 3) & 3);
  cfg.partitions = 1 + ((a >> 5) & 3);
  cfg.runs = ((a ^ b) & 1) != 0;
  Harness h(cfg);
  h.run_program(in);
  return 0;
}
