// cop/controller: each opcode's effect on controller state, collectives over
// masks in several arrival orders, accessed bits, protection, partitions,
// locking and limit checks.
#include "controller/controller.h"
#include "lib/commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace cop;
using namespace cop::wire;
using cop::controller::Controller;
using cop::controller::Delivery;
using cop::controller::Sender;
using cop::controller::channel_bit;

namespace {

struct Harness {
  Controller ctl;
  std::vector<Delivery> out;

  explicit Harness(controller::Config c = {}) : ctl(c) {}

  void send(int ch, Message m) { ctl.receive(ch, m, out); }
  // As the link authenticated the sender (copd's path).
  void send_as(int ch, Message m, Sender from) { ctl.receive(ch, m, ctl.cycles(), from, out); }
  void run() { ctl.run(out); }
  // Sends one command and services everything; returns what came out.
  std::vector<Delivery> call(int ch, Message m) {
    out.clear();
    send(ch, m);
    run();
    return out;
  }
  std::vector<Delivery> call_as(int ch, Message m, Sender from) {
    out.clear();
    send_as(ch, m, from);
    run();
    return out;
  }
  static Error error_of(const std::vector<Delivery>& d) {
    for (const auto& x : d)
      if (x.msg.ins.opcode == Opcode::NACK) return nack_error(x.msg.data1);
    return Error::none;
  }
  // Data (non-link) deliveries.
  static std::vector<Delivery> data(const std::vector<Delivery>& d) {
    std::vector<Delivery> r;
    for (const auto& x : d)
      if (!x.link_level) r.push_back(x);
    return r;
  }
};

Message gas(Opcode op, uint32_t tag, uint16_t tkno = 1) { return make(op, tkno, Space::GAS, tag); }

Message settc(uint32_t tag, uint64_t mask, int count = 1, bool bcast_ram = false) {
  return cop::commands::mask_command(cop::commands::Sender{0, 0}, bcast_ram ? Opcode::SETBM : Opcode::SETTC, tag, mask,
                                     count);
}

Message value(Opcode op, uint32_t tag, uint64_t v) {
  Message m = gas(op, tag);
  if (is_64bit(op))
    m.set_data64(v);
  else
    m.data1 = static_cast<uint32_t>(v);
  return m;
}

uint64_t mask_of(std::initializer_list<int> chans) {
  uint64_t m = 0;
  for (int c : chans) m |= channel_bit(c);
  return m;
}

constexpr Sender kSupervisor{true, 0};
Sender user(uint16_t tkno) { return Sender{false, tkno}; }

Message supervisor_sas_write(uint32_t offset, uint64_t v) {
  Message m = make(Opcode::WSRAM64, 0, Space::SAS, offset);
  m.ins.supervisor = true;
  m.set_data64(v);
  return m;
}

}  // namespace

TEST(Controller, ProbeAnswersThePollCounterAsChannelNumber) {
  controller::Config c;
  c.cntno = 7;
  Harness h(c);
  auto d = Harness::data(h.call(23, make(Opcode::PROBE, 5)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, channel_bit(23));
  EXPECT_EQ(d[0].msg.addr.chno, 23);
  EXPECT_EQ(d[0].msg.addr.cntno, 7);
  EXPECT_EQ(d[0].msg.ins.tkno, 5);
}

TEST(Controller, PollCounterServicesReadyChannelsRoundRobin) {
  Harness h;
  for (int ch : {40, 3, 17}) h.send(ch, make(Opcode::PROBE, 0));
  std::vector<int> order;
  while (h.ctl.step(h.out)) order.push_back(h.ctl.poll_counter());
  EXPECT_EQ(order, (std::vector<int>{3, 17, 40}));
  // The poll counter goes on from where it stopped, wrapping past 64.
  for (int ch : {2, 39, 41}) h.send(ch, make(Opcode::PROBE, 0));
  order.clear();
  while (h.ctl.step(h.out)) order.push_back(h.ctl.poll_counter());
  EXPECT_EQ(order, (std::vector<int>{41, 2, 39}));
}

TEST(Controller, LockStopsTheRoundRobinUntilUnlock) {
  Harness h;
  h.send(1, make(Opcode::LOCK, 1));
  h.send(2, make(Opcode::PROBE, 2));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.locked_channel(), 1);
  // Channel 2 is ready, but the controller waits for the locked channel.
  EXPECT_TRUE(h.ctl.data_ready(2));
  EXPECT_FALSE(h.ctl.step(h.out));
  h.send(1, make(Opcode::PROBE, 1));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.poll_counter(), 1);
  h.send(1, make(Opcode::UNLOCK, 1));
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  ASSERT_TRUE(h.ctl.step(h.out));
  EXPECT_EQ(h.ctl.poll_counter(), 2);
}

// Two tasks of one host share its channel: a locked sequence is its task's alone. A
// task's locked array that comes in two requests (normal access: at most 255 commands
// a request to copdrv) with the other task's burst queued between: the other burst
// waits for the UNLOCK, then runs. Before, its LOCK and UNLOCK ran in the middle and
// the first task's UNLOCK was refused not_locked (cop_read of 256 elements, urgent).
TEST(Controller, ALockedSequenceIsItsTasksAnotherTaskOfTheChannelWaits) {
  Harness h;
  const Sender a = user(2), b = user(3);
  h.send_as(1, make(Opcode::LOCK, 2), a);
  h.send_as(1, make(Opcode::PROBE, 2), a);
  h.send_as(1, make(Opcode::LOCK, 3), b);
  h.send_as(1, make(Opcode::PROBE, 3), b);
  h.send_as(1, make(Opcode::UNLOCK, 3), b);
  h.run();
  EXPECT_EQ(h.ctl.locked_channel(), 1);
  h.send_as(1, make(Opcode::PROBE, 2), a);
  h.send_as(1, make(Opcode::UNLOCK, 2), a);
  h.run();
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  EXPECT_EQ(Harness::error_of(h.out), Error::none);
  std::vector<int> acked;  // whose commands, in the order serviced
  for (const auto& d : h.out)
    if (d.link_level) acked.push_back(d.msg.ins.tkno);
  EXPECT_EQ(acked, (std::vector<int>{2, 2, 2, 2, 3, 3, 3}));
}

// The deadlock timer (copd --lock-limit-ms): a LOCK whose holder sends no UNLOCK
// stops every other channel only until the limit, on the clock the caller gives
// (tick); the holder's later commands up to its UNLOCK are refused lock_timeout.
TEST(Controller, DeadlockTimerTakesBackALockHeldTooLong) {
  controller::Config c;
  c.lock_limit_us = 300'000;
  Harness h(c);
  h.ctl.tick(1'000'000);
  h.call_as(1, make(Opcode::LOCK, 2), user(2));
  ASSERT_EQ(h.ctl.locked_channel(), 1);
  h.send_as(2, make(Opcode::PROBE, 1), user(1));
  h.out.clear();
  EXPECT_FALSE(h.ctl.step(h.out));  // channel 2 waits for the locked channel
  EXPECT_FALSE(h.ctl.tick(1'299'999));
  EXPECT_EQ(h.ctl.locked_channel(), 1);
  EXPECT_EQ(h.ctl.lock_deadline_us(), 1'300'000u);
  EXPECT_TRUE(h.ctl.tick(1'300'000));
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  EXPECT_EQ(h.ctl.stats().locks_taken_back, 1u);
  EXPECT_EQ(h.ctl.lock_deadline_us(), UINT64_MAX);
  // The other channel runs again.
  h.run();
  EXPECT_FALSE(h.ctl.data_ready(2));
  EXPECT_EQ(Harness::error_of(h.out), Error::none);
  // The holder's next command of the locked sequence, and its UNLOCK: refused,
  // and nothing of it executed (its task address space word stays 0).
  Message w = make(Opcode::WSRAM64, 2, Space::TAS, Address::tas_tag(2, 0));
  w.set_data64(5);
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, user(2))), Error::lock_timeout);
  EXPECT_EQ(h.ctl.ram().tas(0, 1, 2, 0), 0u);
  // Another task of the holder's channel is not affected.
  EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::PROBE, 3), user(3))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::UNLOCK, 2), user(2))), Error::lock_timeout);
  // After its UNLOCK the task starts clean: a new locked sequence works.
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, user(2))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::LOCK, 2), user(2))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::UNLOCK, 2), user(2))), Error::none);
  EXPECT_EQ(h.ctl.locked_channel(), 0);
}

// Without a limit (0, the timing model) or within it, a LOCK is held as long as its holder likes.
TEST(Controller, DeadlockTimerLeavesALockWithinTheLimit) {
  for (uint64_t limit : {uint64_t{0}, uint64_t{500'000}}) {
    controller::Config c;
    c.lock_limit_us = limit;
    Harness h(c);
    h.call_as(1, make(Opcode::LOCK, 2), user(2));
    EXPECT_FALSE(h.ctl.tick(limit == 0 ? 3'600'000'000ull : 499'999));
    EXPECT_EQ(h.ctl.locked_channel(), 1);
    EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::UNLOCK, 2), user(2))), Error::none);
    EXPECT_EQ(h.ctl.locked_channel(), 0);
  }
}

// A task that ends after its lock was taken back leaves no refusal behind for the
// next task given its number.
TEST(Controller, DeadlockTimerRefusalEndsWithTheTask) {
  controller::Config c;
  c.lock_limit_us = 1000;
  Harness h(c);
  h.call_as(1, make(Opcode::LOCK, 2), user(2));
  ASSERT_TRUE(h.ctl.tick(1000));
  h.out.clear();
  h.ctl.end_task(1, 2, h.out);
  EXPECT_EQ(Harness::error_of(h.call_as(1, make(Opcode::PROBE, 2), user(2))), Error::none);
}

// A member whose tasks all ended before the operation began (its channel vacant):
// the operation waiting for it is voided (NACK task_ended to every channel of its
// masks) once the channel is still vacant Config::vacant_limit_us after the SETTC;
// a task that enrols there in time takes part as usual.
TEST(Controller, AnOperationWaitingForAVacantChannelIsVoided) {
  controller::Config c;
  c.vacant_limit_us = 1'000'000;
  Harness h(c);
  h.ctl.tick(5'000'000);
  h.ctl.set_vacant(2, true);
  EXPECT_EQ(Harness::error_of(h.call(1, settc(30, mask_of({1, 2})))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 30))), Error::none);
  h.out.clear();
  EXPECT_FALSE(h.ctl.tick(5'999'999, h.out));
  EXPECT_TRUE(h.out.empty());
  h.ctl.tick(6'000'000, h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].channels, mask_of({1, 2}));
  EXPECT_EQ(h.out[0].msg.addr.msgtag, 30u);
  EXPECT_EQ(nack_error(h.out[0].msg.data1), Error::task_ended);
  EXPECT_FALSE(h.ctl.ram().tc(0, 30).accessed);  // the entry is free for the next operation
  // A task enrolled on the channel in time: the barrier completes as usual.
  EXPECT_EQ(Harness::error_of(h.call(1, settc(31, mask_of({1, 2})))), Error::none);
  h.ctl.set_vacant(2, false);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 31))), Error::none);
  h.out.clear();
  h.ctl.tick(8'000'000, h.out);
  EXPECT_TRUE(h.out.empty());
  auto exit = Harness::data(h.call(2, gas(Opcode::BENTRY, 31)));
  ASSERT_EQ(exit.size(), 1u);
  EXPECT_EQ(exit[0].channels, mask_of({1, 2}));
}

TEST(Controller, UnlockByAChannelWithoutTheLockIsRefused) {
  Harness h;
  EXPECT_EQ(Harness::error_of(h.call(4, make(Opcode::UNLOCK, 1))), Error::not_locked);
}

TEST(Controller, OwnerWritesItsTaskAddressSpaceAndAnyTaskReadsIt) {
  Harness h;
  Message w = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(3, 10));
  w.set_data64(0x1122334455667788ull);
  EXPECT_EQ(Harness::error_of(h.call(5, w)), Error::none);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 10), 0x1122334455667788ull);

  Message r = make(Opcode::RSRAM64, 9, Space::TAS, Address::tas_tag(3, 10));
  r.ins.z = true;
  r.addr.chno = 5;
  auto d = Harness::data(h.call(12, r));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, channel_bit(12));
  EXPECT_EQ(d[0].msg.data64(), 0x1122334455667788ull);
  EXPECT_EQ(d[0].msg.ins.tkno, 9);  // answers carry the reader's TKNO (its Pid register)

  Message r32 = make(Opcode::RSRAM32, 9, Space::TAS, Address::tas_tag(3, 10));
  r32.ins.z = true;
  r32.addr.chno = 5;
  d = Harness::data(h.call(12, r32));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 0x55667788u);
}

TEST(Controller, WritingAnotherTasksAddressSpaceIsAProtectionError) {
  Harness h;
  Message w = make(Opcode::WSRAM32, 3, Space::TAS, Address::tas_tag(4, 0));  // task 3 writes task 4's space
  w.data1 = 1;
  EXPECT_EQ(Harness::error_of(h.call(5, w)), Error::protection);
  Message other_channel = make(Opcode::WSRAM32, 3, Space::TAS, Address::tas_tag(3, 0));
  other_channel.ins.z = true;
  other_channel.addr.chno = 6;  // same task number, another host's channel
  EXPECT_EQ(Harness::error_of(h.call(5, other_channel)), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 4, 0), 0u);
  EXPECT_EQ(h.ctl.ram().tas(0, 6, 3, 0), 0u);
}

TEST(Controller, ReadModifyWriteMayUpdateAnotherTasksSpace) {
  Harness h;
  Message w = make(Opcode::WSRAM32, 2, Space::TAS, Address::tas_tag(2, 1));
  w.data1 = 40;
  h.call(8, w);
  Message rmw = make(Opcode::RMW32, 1, Space::TAS, Address::tas_tag(2, 1));
  rmw.ins.z = true;
  rmw.addr.chno = 8;
  rmw.data1 = 2;
  auto d = Harness::data(h.call(3, rmw));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 40u);  // the old value
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
  // RMW64 with M adds in the floating-point unit.
  Message f = make(Opcode::RMW64, 1, Space::GAS, 5);
  f.ins.m = true;
  f.set_data64(std::bit_cast<uint64_t>(1.5));
  h.call(3, f);
  h.call(4, f);
  EXPECT_EQ(std::bit_cast<double>(h.ctl.ram().gas(0, 5)), 3.0);
}

TEST(Controller, BarrierReleasesEveryParticipantOnlyAfterTheLastEntryInAnyOrder) {
  std::vector<int> chans{2, 9, 33, 64};
  std::sort(chans.begin(), chans.end());
  int orders = 0;
  do {
    Harness h;
    const uint64_t mask = mask_of({2, 9, 33, 64});
    // The first channel in initialises the masks under the lock (ch. V).
    const int first = chans[0];
    h.call(first, make(Opcode::LOCK, 1));
    EXPECT_EQ(Harness::error_of(h.call(first, settc(100, mask))), Error::none);
    EXPECT_EQ(Harness::error_of(h.call(first, settc(100, mask, 1, true))), Error::none);
    h.call(first, make(Opcode::UNLOCK, 1));
    for (size_t i = 0; i < chans.size(); ++i) {
      auto d = Harness::data(h.call(chans[i], gas(Opcode::BENTRY, 100)));
      if (i + 1 < chans.size()) {
        EXPECT_TRUE(d.empty()) << "released before the last entry";
      } else {
        ASSERT_EQ(d.size(), 1u);
        EXPECT_EQ(d[0].msg.ins.opcode, Opcode::BENTRY);
        EXPECT_EQ(d[0].msg.addr.msgtag, 100u);
        EXPECT_EQ(d[0].channels, mask);
      }
    }
    // Both accessed bits are clear again: the same tag can be reused.
    EXPECT_FALSE(h.ctl.ram().tc(0, 100).accessed);
    EXPECT_FALSE(h.ctl.ram().bm(0, 100).accessed);
    ++orders;
  } while (std::next_permutation(chans.begin(), chans.end()));
  EXPECT_EQ(orders, 24);
}

TEST(Controller, BarrierEntryFromANonParticipantIsRefusedAndASecondEntryWaitsForTheBarrierToEnd) {
  Harness h;
  h.call(1, settc(7, mask_of({1, 2})));
  EXPECT_EQ(Harness::error_of(h.call(3, gas(Opcode::BENTRY, 7))), Error::not_participant);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 7))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(1, gas(Opcode::BENTRY, 8))), Error::no_mask);
  // A second entry belongs to the next barrier on the tag: it is not serviced
  // (DATA_RDY stays up) while this one is in progress.
  EXPECT_TRUE(h.call(1, gas(Opcode::BENTRY, 7)).empty());
  EXPECT_TRUE(h.ctl.data_ready(1));
  EXPECT_TRUE(h.ctl.held(1));
  // With no broadcast mask the barrier releases its participants; then the
  // held entry finds no barrier initialised on the tag.
  auto all = h.call(2, gas(Opcode::BENTRY, 7));
  auto d = Harness::data(all);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({1, 2}));
  EXPECT_EQ(Harness::error_of(all), Error::no_mask);
  EXPECT_FALSE(h.ctl.data_ready(1));
}

struct ReduceCase {
  Opcode op;
  std::vector<uint64_t> inputs;  // one per channel 1..n
  uint64_t expected;
};

std::string reduce_name(const ::testing::TestParamInfo<ReduceCase>& p) { return std::string(opcode_name(p.param.op)); }

class Reduce : public ::testing::TestWithParam<ReduceCase> {};

TEST_P(Reduce, MatchesALocalComputationInEveryArrivalOrder) {
  const ReduceCase& rc = GetParam();
  const int n = int(rc.inputs.size());
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 1);
  uint64_t all = 0;
  for (int c = 1; c <= n; ++c) all |= channel_bit(c);
  const uint64_t roots = channel_bit(1) | channel_bit(n);  // several roots
  do {
    Harness h;
    // The first channel serviced initialises the masks and the partial result.
    const int first = order[0];
    h.call(first, make(Opcode::LOCK, 1));
    h.call(first, settc(50, all));
    h.call(first, settc(50, roots, 1, true));
    Message init = value(is_64bit(rc.op) ? Opcode::WSRAM64 : Opcode::WSRAM32, 50, rc.inputs[size_t(first - 1)]);
    EXPECT_EQ(Harness::error_of(h.call(first, init)), Error::none);
    h.call(first, make(Opcode::UNLOCK, 1));
    std::vector<Delivery> results;
    for (size_t i = 1; i < order.size(); ++i) {
      auto d = h.call(order[i], value(rc.op, 50, rc.inputs[size_t(order[i] - 1)]));
      EXPECT_EQ(Harness::error_of(d), Error::none);
      for (auto& x : Harness::data(d)) results.push_back(x);
    }
    ASSERT_EQ(results.size(), 1u) << opcode_name(rc.op);
    EXPECT_EQ(results[0].channels, roots);
    EXPECT_EQ(results[0].msg.ins.opcode, rc.op);
    const uint64_t got = is_64bit(rc.op) ? results[0].msg.data64() : results[0].msg.data1;
    EXPECT_EQ(got, rc.expected) << opcode_name(rc.op);
  } while (std::next_permutation(order.begin(), order.end()));
}

namespace {
uint64_t d2u(double d) { return std::bit_cast<uint64_t>(d); }
uint64_t i32(int32_t v) { return static_cast<uint32_t>(v); }
uint64_t i64(int64_t v) { return static_cast<uint64_t>(v); }
}  // namespace

INSTANTIATE_TEST_SUITE_P(
    Controller, Reduce,
    ::testing::Values(
        ReduceCase{Opcode::SUMI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(100)},
        ReduceCase{Opcode::MAXI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(100)},
        ReduceCase{Opcode::MINI32, {i32(5), i32(-7), i32(100), i32(2)}, i32(-7)},
        ReduceCase{Opcode::OR32, {0x1, 0x10, 0x100, 0x1000}, 0x1111},
        ReduceCase{Opcode::AND32, {0xFF0F, 0x0FFF, 0xFFFF, 0xF0FF}, 0x000F},
        ReduceCase{Opcode::EXOR32, {0b1100, 0b1010, 0b0001, 0b0000}, 0b0111},
        ReduceCase{Opcode::SUMI64, {i64(1) << 40, i64(-3), i64(1) << 33, i64(4)}, (i64(1) << 40) + (i64(1) << 33) + 1},
        ReduceCase{Opcode::MAXI64, {i64(-1) << 40, i64(-3), i64(9), i64(4)}, i64(9)},
        ReduceCase{Opcode::MINI64, {i64(-1) << 40, i64(-3), i64(9), i64(4)}, i64(-1) << 40},
        ReduceCase{Opcode::OR64, {1ull << 63, 1, 2, 4}, (1ull << 63) | 7},
        ReduceCase{Opcode::AND64, {~0ull, ~1ull, ~2ull, ~4ull}, ~7ull},
        ReduceCase{Opcode::EXOR64, {1ull << 62, 1ull << 62, 3, 5}, 6},
        ReduceCase{Opcode::SUMF, {d2u(0.5), d2u(0.25), d2u(2.0), d2u(-1.0)}, d2u(1.75)},
        ReduceCase{Opcode::MAXF, {d2u(0.5), d2u(-0.25), d2u(2.0), d2u(-1.0)}, d2u(2.0)},
        ReduceCase{Opcode::MINF, {d2u(0.5), d2u(-0.25), d2u(2.0), d2u(-1.0)}, d2u(-1.0)}),
    reduce_name);

TEST(Controller, ReductionWithoutAnInitialisingWriteStartsFromTheFirstContribution) {
  Harness h;
  h.call(1, settc(3, mask_of({1, 2, 3})));
  h.call(1, settc(3, mask_of({2}), 1, true));
  h.ctl.receive(1, value(Opcode::SUMI64, 3, 10), h.out);
  h.ctl.receive(2, value(Opcode::SUMI64, 3, 20), h.out);
  h.ctl.receive(3, value(Opcode::SUMI64, 3, 30), h.out);
  h.out.clear();
  h.run();
  auto d = Harness::data(h.out);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 60u);
  EXPECT_EQ(d[0].channels, channel_bit(2));
}

// Tasks that disagree on a reduction's function or datatype (SUMI64 against SUMF on one
// tag): the differing contribution is refused with NACK mismatch, the root gets a NACK
// mismatch instead of a sum of mixed bit patterns, and the entries are free again.
TEST(Controller, ContributionsWithDifferentOpcodesEndTheOperationWithAMismatch) {
  Harness h;
  h.call(1, settc(3, mask_of({1, 2, 3})));
  h.call(1, settc(3, mask_of({2}), 1, true));
  EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::SUMI64, 3, 10))), Error::none);
  EXPECT_EQ(Harness::error_of(h.call(2, value(Opcode::SUMF, 3, 20))), Error::mismatch);
  const auto last = h.call(3, value(Opcode::SUMI64, 3, 30));
  ASSERT_TRUE(Harness::data(last).empty()) << "no result from mixed contributions";
  bool root_told = false;
  for (const auto& d : last)
    root_told |= d.msg.ins.opcode == Opcode::NACK && nack_error(d.msg.data1) == Error::mismatch &&
                 d.channels == channel_bit(2) && d.msg.addr.msgtag == 3;
  EXPECT_TRUE(root_told);
  // The tag is free for the next operation, which completes normally.
  EXPECT_EQ(Harness::error_of(h.call(1, settc(3, mask_of({1, 2})))), Error::none);
  h.call(1, settc(3, mask_of({1}), 1, true));
  h.call(1, value(Opcode::SUMI64, 3, 1));
  const auto d = Harness::data(h.call(2, value(Opcode::SUMI64, 3, 2)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 3u);
}

TEST(Controller, AccessedBitMakesTheSecondSpmdInitialiserBackOff) {
  Harness h;
  const uint64_t mask = mask_of({1, 2, 3});
  // Three SPMD tasks race to initialise: each locks and tries SETTC.
  for (int ch : {1, 2, 3}) {
    h.send(ch, make(Opcode::LOCK, 1));
    h.send(ch, settc(20, mask));
    h.send(ch, make(Opcode::UNLOCK, 1));
  }
  h.out.clear();
  h.run();
  int acks = 0, in_use = 0;
  for (const auto& d : h.out) {
    if (d.msg.ins.opcode == Opcode::NACK && (d.msg.data1 >> 8) == uint32_t(Opcode::SETTC)) {
      EXPECT_EQ(nack_error(d.msg.data1), Error::mask_in_use);
      ++in_use;
    }
    if (d.msg.ins.opcode == Opcode::ACK) ++acks;
  }
  EXPECT_EQ(in_use, 2);
  EXPECT_EQ(acks, 7);  // 3 LOCK + 3 UNLOCK + 1 SETTC
  // The entry is free again only after every channel has contributed; a
  // SETTC from a channel that has contributed is for the next operation: it
  // waits until this one is over, then initialises the entry.
  for (int ch : {1, 2}) h.call(ch, gas(Opcode::BENTRY, 20));
  EXPECT_TRUE(h.call(1, settc(20, mask)).empty());
  EXPECT_TRUE(h.ctl.held(1));
  EXPECT_EQ(Harness::error_of(h.call(3, settc(20, mask))), Error::mask_in_use);  // 3 is still pending
  auto d = h.call(3, gas(Opcode::BENTRY, 20));
  EXPECT_EQ(Harness::error_of(d), Error::none);
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](const Delivery& x) { return x.msg.ins.opcode == Opcode::ACK; }), 2);
  EXPECT_TRUE(h.ctl.ram().tc(0, 20).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 20).pending, mask);
}

TEST(Controller, CountedSetInitialisesARangeAllOrNothing) {
  Harness h;
  EXPECT_EQ(Harness::error_of(h.call(1, settc(10, mask_of({1, 2}), 4))), Error::none);
  for (uint32_t t = 10; t < 14; ++t) EXPECT_TRUE(h.ctl.ram().tc(0, t).accessed);
  EXPECT_FALSE(h.ctl.ram().tc(0, 14).accessed);
  // Overlapping range: refused and nothing beyond the overlap is touched.
  EXPECT_EQ(Harness::error_of(h.call(2, settc(12, mask_of({3}), 4))), Error::mask_in_use);
  EXPECT_FALSE(h.ctl.ram().tc(0, 14).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 12).mask, mask_of({1, 2}));
  // An empty mask is a VOID (controller.h "Voiding"): nothing of channel 2's on word 30 to void.
  EXPECT_EQ(Harness::error_of(h.call(2, settc(30, 0))), Error::none);
  EXPECT_FALSE(h.ctl.ram().tc(0, 30).accessed);
  EXPECT_EQ(h.ctl.ram().tc(0, 12).mask, mask_of({1, 2}));
  controller::Config small;
  small.channels = 8;
  Harness s(small);
  EXPECT_EQ(Harness::error_of(s.call(1, settc(0, channel_bit(9)))), Error::bad_mask);
}

// A reduction whose call failed on channel 3 (its contribution never came) keeps the
// others' contributions: channel 3's next contribution would complete it with another
// round's value. Channel 3's VOID (a SETTC with an empty mask) ends it first: the others
// get NACK voided, the entries are free, and the next round's sum is its own.
TEST(Controller, AVoidEndsTheOperationOnItsWordsSoTheNextStartsClean) {
  Harness h;
  const uint64_t all = mask_of({1, 2, 3});
  auto round = [&](uint64_t a, uint64_t b) {
    h.call(1, make(Opcode::LOCK, 1));
    h.call(1, settc(60, all));
    h.call(1, settc(60, mask_of({1}), 1, true));
    EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::SUMI64, 60, a))), Error::none);
    h.call(1, make(Opcode::UNLOCK, 1));
    EXPECT_TRUE(Harness::data(h.call(2, value(Opcode::SUMI64, 60, b))).empty());
  };
  round(10, 20);
  // A channel outside the operation voids nothing of it.
  EXPECT_EQ(Harness::error_of(h.call(4, settc(60, 0))), Error::none);
  EXPECT_TRUE(h.ctl.ram().tc(0, 60).accessed);
  auto voided = h.call(3, settc(60, 0));
  ASSERT_EQ(voided.size(), 2u);
  EXPECT_EQ(voided[0].msg.ins.opcode, Opcode::ACK);
  EXPECT_EQ(voided[1].channels, mask_of({1, 2}));
  EXPECT_EQ(voided[1].msg.addr.msgtag, 60u);
  EXPECT_EQ(nack_error(voided[1].msg.data1), Error::voided);
  EXPECT_FALSE(h.ctl.ram().tc(0, 60).accessed);
  EXPECT_FALSE(h.ctl.ram().bm(0, 60).accessed);
  round(100, 200);
  auto result = Harness::data(h.call(3, value(Opcode::SUMI64, 60, 300)));
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0].channels, mask_of({1}));
  EXPECT_EQ(result[0].msg.data64(), 600u);
  // A VOID from a channel that has contributed already is not held for the operation
  // (its next contribution would be): it ends it at once.
  h.call(1, settc(61, mask_of({1, 2})));
  h.call(1, gas(Opcode::BENTRY, 61));
  auto ended = h.call(1, settc(61, 0));
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[1].channels, mask_of({2}));
  EXPECT_EQ(nack_error(ended[1].msg.data1), Error::voided);
  EXPECT_FALSE(h.ctl.ram().tc(0, 61).accessed);
}

TEST(Controller, MaskEntriesReadBackWithRsram64AndTheMBit) {
  Harness h;
  h.call(1, settc(5, mask_of({1, 2, 3})));
  h.call(1, settc(5, mask_of({1}), 1, true));
  h.call(2, gas(Opcode::BENTRY, 5));
  Message rd = gas(Opcode::RSRAM64, 5);
  rd.ins.m = true;
  auto d = Harness::data(h.call(1, rd));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), mask_of({1, 3}));  // channels yet to contribute
  rd.ins.msel_bcast = true;
  d = Harness::data(h.call(1, rd));
  EXPECT_EQ(d[0].msg.data64(), mask_of({1}));
}

TEST(Controller, BroadcastGoesToTheMaskWithItsSourceAndConsumesTheEntry) {
  Harness h;
  const uint64_t mask = mask_of({2, 3, 4});
  h.call(1, settc(40, mask, 2, true));
  auto d = Harness::data(h.call(1, value(Opcode::BCAST64, 40, 0xABCDEF0123ull)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask);
  EXPECT_EQ(d[0].msg.data64(), 0xABCDEF0123ull);
  EXPECT_EQ(d[0].msg.addr.chno, 1);
  d = Harness::data(h.call(1, value(Opcode::BCAST32, 41, 77)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data1, 77u);
  EXPECT_EQ(Harness::error_of(h.call(1, value(Opcode::BCAST64, 40, 1))), Error::no_mask);
}

TEST(Controller, PartitionsCannotTouchEachOther) {
  Harness h;
  // The operating system puts channels 3 and 4 into partition 1.
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(3, 1), kSupervisor)), Error::none);
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(4, 1), kSupervisor)), Error::none);
  EXPECT_EQ(h.ctl.channel_partition(3), 1);
  EXPECT_EQ(Harness::error_of(h.call_as(1, supervisor_sas_write(5, 99), kSupervisor)), Error::address_range);

  // A message claiming another partition than its channel's is refused.
  EXPECT_EQ(Harness::error_of(h.call(3, gas(Opcode::BENTRY, 1))), Error::partition);
  // A mask naming channels of another partition is refused.
  EXPECT_EQ(Harness::error_of(h.call(1, settc(1, mask_of({1, 3})))), Error::partition);
  // Reading a task space on a channel of another partition is refused.
  Message rd = make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(1, 0));
  rd.ins.z = true;
  rd.ins.ppn = 1;
  rd.addr.chno = 1;
  EXPECT_EQ(Harness::error_of(h.call(3, rd)), Error::partition);

  // The same tag runs two barriers at once, one per partition.
  auto in_p1 = [](Message m) { m.ins.ppn = 1; return m; };
  h.call(1, settc(9, mask_of({1, 2})));
  h.call(3, in_p1(settc(9, mask_of({3, 4}))));
  EXPECT_TRUE(Harness::data(h.call(1, gas(Opcode::BENTRY, 9))).empty());
  EXPECT_TRUE(Harness::data(h.call(3, in_p1(gas(Opcode::BENTRY, 9)))).empty());
  auto d = Harness::data(h.call(4, in_p1(gas(Opcode::BENTRY, 9))));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({3, 4}));
  EXPECT_TRUE(h.ctl.ram().tc(0, 9).accessed);  // partition 0's barrier still waits for channel 2
}

TEST(Controller, SystemSpaceIsWrittenOnlyInSupervisorMode) {
  Harness h;
  Message w = make(Opcode::WSRAM64, 1, Space::SAS, 70);
  w.set_data64(5);
  EXPECT_EQ(Harness::error_of(h.call(1, w)), Error::privilege);
  w.ins.supervisor = true;
  // The in-process sender is a user task: it cannot set U/S either.
  EXPECT_EQ(Harness::error_of(h.call(1, w)), Error::protection);
  EXPECT_EQ(h.ctl.ram().sas(70), 0u);
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, kSupervisor)), Error::none);
  auto d = Harness::data(h.call(2, make(Opcode::RSRAM64, 1, Space::SAS, 70)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 5u);
}

TEST(Controller, MalformedWordsGetANackWithTheirErrorCode) {
  controller::Config c;
  c.gas_words = 64;
  Harness h(c);
  Words w{};
  int n = encode(gas(Opcode::SUMI32, 64), Direction::to_controller, w);  // one past the GAS
  h.ctl.receive_words(6, std::span<const uint32_t>(w.data(), size_t(n)), h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg.ins.opcode, Opcode::NACK);
  EXPECT_EQ(nack_error(h.out[0].msg.data1), Error::address_range);
  EXPECT_EQ(nack_opcode(h.out[0].msg.data1), uint32_t(Opcode::SUMI32));
  EXPECT_EQ(h.out[0].channels, channel_bit(6));
  h.out.clear();
  const uint32_t garbage[] = {0x7FFFFFFFu, 1u};
  h.ctl.receive_words(6, garbage, h.out);
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(nack_error(h.out[0].msg.data1), Error::unknown_opcode);
  EXPECT_FALSE(h.ctl.data_ready(6));  // nothing malformed reaches the processor
}

TEST(Controller, ForwardingToALevelTwoControllerIsRefusedWhenNoneIsAttached) {
  Harness h;
  Message m = gas(Opcode::BENTRY, 1);
  m.ins.x = true;
  EXPECT_EQ(Harness::error_of(h.call(1, m)), Error::channel_range);
}

TEST(Controller, XmitResendsTheLastMessageToThatChannel) {
  Harness h;
  auto probe = Harness::data(h.call(9, make(Opcode::PROBE, 2)));
  ASSERT_EQ(probe.size(), 1u);
  h.out.clear();
  h.send(9, make(Opcode::XMIT, 2));
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg, probe[0].msg);  // the answer went after its ACK
  Message w = make(Opcode::WSRAM32, 2, Space::TAS, Address::tas_tag(2, 0));
  h.call(9, w);
  h.out.clear();
  h.send(9, make(Opcode::XMIT, 2));
  ASSERT_EQ(h.out.size(), 1u);
  EXPECT_EQ(h.out[0].msg.ins.opcode, Opcode::ACK);  // a write has only its ACK
  EXPECT_FALSE(h.ctl.data_ready(9));                // XMIT is the interface's, not the processor's
}

TEST(Controller, CycleClockChargesHallsCosts) {
  model::Timing t;
  Harness h(controller::Config{});
  Message w = make(Opcode::WSRAM64, 0, Space::GAS, 1);
  h.ctl.receive(1, w, t.t_cn_cop, h.out);  // arrives t_CN-COP after the node wrote it
  h.run();
  EXPECT_EQ(h.ctl.cycles(), t.t_cn_cop + t.t_op_int);
  h.call(1, settc(2, channel_bit(1)));
  h.call(1, settc(2, channel_bit(1), 1, true));
  const uint64_t before = h.ctl.cycles();
  auto d = h.call(1, value(Opcode::SUMF, 2, d2u(1.0)));
  EXPECT_EQ(h.ctl.cycles() - before, t.t_op_fp + t.t_cop_cn);
  EXPECT_EQ(Harness::data(d)[0].at_cycle, h.ctl.cycles());
}

// ---- Protection (ch. V: U/S bit, Pid register, task address space protection) ----

TEST(ControllerProtection, ATaskCannotSetTheSupervisorBit) {
  Harness h;
  // A user task trying to move its channel to another partition.
  EXPECT_EQ(Harness::error_of(h.call_as(3, supervisor_sas_write(3, 1), user(1))), Error::protection);
  EXPECT_EQ(h.ctl.channel_partition(3), 0);
  // ... or to reach another partition's global memory with U/S.
  h.call_as(5, supervisor_sas_write(5, 1), kSupervisor);
  Message w = value(Opcode::WSRAM64, 12, 0xBAD);
  w.ins.ppn = 1;
  w.ins.supervisor = true;
  EXPECT_EQ(Harness::error_of(h.call_as(1, w, user(1))), Error::protection);
  EXPECT_EQ(h.ctl.ram().gas(1, 12), 0u);
  Message own = value(Opcode::WSRAM64, 12, 77);
  own.ins.ppn = 1;
  own.ins.tkno = 2;
  EXPECT_EQ(Harness::error_of(h.call_as(5, own, user(2))), Error::none);
  Message r = gas(Opcode::RSRAM64, 12);
  r.ins.ppn = 1;
  r.ins.supervisor = true;
  auto d = h.call_as(1, r, user(1));
  EXPECT_EQ(Harness::error_of(d), Error::protection);
  EXPECT_TRUE(Harness::data(d).empty());
  // The channel's driver (supervisor) may.
  d = Harness::data(h.call_as(1, r, kSupervisor));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 77u);
}

TEST(ControllerProtection, APartitionNumberBeyondThePartitionsIsRefusedEvenFromTheSupervisor) {
  Harness h;  // 4 partitions
  for (uint8_t ppn : {uint8_t(4), uint8_t(15)}) {
    Message w = value(Opcode::WSRAM64, 65535, 1);
    w.ins.ppn = ppn;
    w.ins.supervisor = true;
    EXPECT_EQ(Harness::error_of(h.call_as(1, w, kSupervisor)), Error::partition);
    Message t = make(Opcode::WSRAM64, 0, Space::TAS, Address::tas_tag(15, 255));
    t.ins.ppn = ppn;
    t.ins.supervisor = true;
    t.ins.z = true;
    t.addr.chno = 64;
    EXPECT_EQ(Harness::error_of(h.call_as(1, t, kSupervisor)), Error::partition);
    Message s = settc(65535, channel_bit(1));
    s.ins.ppn = ppn;
    s.ins.supervisor = true;
    EXPECT_EQ(Harness::error_of(h.call_as(1, s, kSupervisor)), Error::partition);
    Message b = gas(Opcode::BENTRY, 3);
    b.ins.ppn = ppn;
    EXPECT_EQ(Harness::error_of(h.call_as(1, b, user(1))), Error::partition);
  }
  EXPECT_EQ(h.ctl.stats().serviced, 8u);
}

TEST(ControllerProtection, ATaskActsOnlyAsItsOwnTaskNumber) {
  Harness h;
  // Task 3 of channel 5 names task 4 in TKNO and TTKNO: refused, nothing written.
  Message w = make(Opcode::WSRAM64, 4, Space::TAS, Address::tas_tag(4, 0));
  w.set_data64(99);
  auto d = h.call_as(5, w, user(3));
  EXPECT_EQ(Harness::error_of(d), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 4, 0), 0u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.ins.tkno, 3);  // the NACK goes to the sender, by its own number
  // Its own number in TKNO but another task's space: refused (owner only).
  Message w2 = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(4, 0));
  EXPECT_EQ(Harness::error_of(h.call_as(5, w2, user(3))), Error::protection);
  // Its own: fine.
  Message w3 = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(3, 0));
  w3.set_data64(5);
  EXPECT_EQ(Harness::error_of(h.call_as(5, w3, user(3))), Error::none);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 0), 5u);
  // Any command with another task's number is refused, reads included.
  EXPECT_EQ(Harness::error_of(h.call_as(5, make(Opcode::PROBE, 4), user(3))), Error::protection);
  Message rmw = make(Opcode::RMW64, 4, Space::TAS, Address::tas_tag(3, 0));
  rmw.set_data64(1);
  EXPECT_EQ(Harness::error_of(h.call_as(5, rmw, user(3))), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 5, 3, 0), 5u);
  // SETTC/SETBM carry a count in that field: not a task number, and the
  // answer carries the sender's number, not the count.
  d = h.call_as(5, settc(8, channel_bit(5), 3), user(3));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.ins.opcode, Opcode::ACK);
  EXPECT_EQ(d[0].msg.ins.tkno, 3);
}

TEST(ControllerProtection, ReadModifyWriteOfAnotherTasksSpaceIsAnAddNeverAStore) {
  // ch. V: only RMW from a task writes other tasks' spaces (cop_rmw's shared counters).
  Harness h;
  Message w = make(Opcode::WSRAM64, 2, Space::TAS, Address::tas_tag(2, 1));
  w.set_data64(40);
  h.call_as(8, w, user(2));
  Message rmw = make(Opcode::RMW64, 6, Space::TAS, Address::tas_tag(2, 1));
  rmw.ins.z = true;
  rmw.addr.chno = 8;
  rmw.set_data64(2);
  auto d = Harness::data(h.call_as(3, rmw, user(6)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 40u);
  EXPECT_EQ(d[0].msg.ins.tkno, 6);
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
  Message store = make(Opcode::WSRAM64, 6, Space::TAS, Address::tas_tag(2, 1));
  store.ins.z = true;
  store.addr.chno = 8;
  store.set_data64(7);
  EXPECT_EQ(Harness::error_of(h.call_as(3, store, user(6))), Error::protection);
  EXPECT_EQ(h.ctl.ram().tas(0, 8, 2, 1), 42u);
}

TEST(ControllerProtection, EveryFieldIsRangeCheckedBeforeUse) {
  controller::Config c;
  c.channels = 8;
  c.tasks_per_channel = 4;
  c.tas_words = 16;
  c.gas_words = 64;
  c.sas_words = 16;
  c.partitions = 2;
  Harness h(c);
  auto tas = [](Opcode op, uint32_t ttkno, uint32_t offset, int chno = 0) {
    Message m = make(op, 1, Space::TAS, Address::tas_tag(ttkno, offset));
    if (chno) {
      m.ins.z = true;
      m.addr.chno = uint8_t(chno);
    }
    return m;
  };
  struct Case {
    Message m;
    Error e;
  };
  Message settc_beyond = settc(60, channel_bit(1), 5);
  Message mask_read = gas(Opcode::RSRAM64, 64);
  mask_read.ins.m = true;
  Message sas_read = make(Opcode::RSRAM64, 1, Space::SAS, 16);
  Message z_without_channel = tas(Opcode::RSRAM64, 1, 0);
  z_without_channel.ins.z = true;
  const Case cases[] = {
      {tas(Opcode::WSRAM64, 4, 0), Error::address_range},        // TTKNO beyond the task spaces
      {tas(Opcode::RSRAM64, 1, 16), Error::address_range},       // TAS offset beyond the space
      {tas(Opcode::RMW64, 1, 0, 9), Error::channel_range},       // a channel the controller lacks
      {z_without_channel, Error::channel_range},
      {value(Opcode::WSRAM64, 64, 1), Error::address_range},     // GAS offset
      {value(Opcode::SUMI64, 100, 1), Error::address_range},
      {value(Opcode::BCAST64, 64, 1), Error::address_range},
      {settc_beyond, Error::address_range},                      // count runs past the GAS
      {mask_read, Error::address_range},
      {sas_read, Error::address_range},
  };
  for (const Case& k : cases) {
    h.out.clear();
    auto d = h.call_as(1, k.m, user(1));
    EXPECT_EQ(Harness::error_of(d), k.e) << to_string(k.m);
    EXPECT_TRUE(Harness::data(d).empty()) << to_string(k.m);
  }
  // The supervisor's commands are checked the same way.
  Message s = supervisor_sas_write(16, 1);
  EXPECT_EQ(Harness::error_of(h.call_as(1, s, kSupervisor)), Error::address_range);
  Message t = tas(Opcode::WSRAM64, 4, 0);
  t.ins.supervisor = true;
  EXPECT_EQ(Harness::error_of(h.call_as(1, t, kSupervisor)), Error::address_range);
  for (uint32_t i = 0; i < c.gas_words; ++i) EXPECT_FALSE(h.ctl.ram().tc(0, i).accessed);
}

// ---- end_task: a task's exit leaves nothing behind ----

TEST(ControllerEndTask, ReleasesItsLockAndDropsOnlyItsQueuedCommands) {
  Harness h;
  h.call_as(1, make(Opcode::LOCK, 2), user(2));
  ASSERT_EQ(h.ctl.locked_channel(), 1);
  h.send_as(2, make(Opcode::PROBE, 1), user(1));   // another channel: frozen by the lock
  Message w = make(Opcode::WSRAM64, 2, Space::TAS, Address::tas_tag(2, 0));
  w.set_data64(1);
  h.send_as(1, w, user(2));                          // the locking task's next command
  h.send_as(1, make(Opcode::PROBE, 3), user(3));    // another task of the channel
  h.out.clear();
  h.ctl.run(h.out);
  EXPECT_TRUE(h.ctl.data_ready(2));  // still frozen: the WSRAM and PROBE of channel 1 ran under the lock
  h.out.clear();
  h.send_as(1, make(Opcode::PROBE, 2), user(2));
  h.send_as(1, make(Opcode::PROBE, 3), user(3));
  EXPECT_EQ(h.ctl.end_task(1, 2, h.out), 0);
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  h.ctl.run(h.out);
  EXPECT_FALSE(h.ctl.data_ready(1));
  EXPECT_FALSE(h.ctl.data_ready(2));
  int acks_for_2 = 0, acks_for_3 = 0;
  for (const auto& d : h.out)
    if (d.link_level && d.to(1)) (d.msg.ins.tkno == 2 ? acks_for_2 : acks_for_3)++;
  EXPECT_EQ(acks_for_2, 0);  // the ended task's PROBE was dropped
  EXPECT_EQ(acks_for_3, 1);
}

TEST(ControllerEndTask, ClearsItsTaskAddressSpaceSoTheNextTaskStartsClean) {
  Harness h;
  for (uint32_t off : {0u, 17u, 255u}) {
    Message w = make(Opcode::WSRAM64, 2, Space::TAS, Address::tas_tag(2, off));
    w.set_data64(0xABC + off);
    h.call_as(7, w, user(2));
  }
  Message other = make(Opcode::WSRAM64, 3, Space::TAS, Address::tas_tag(3, 0));
  other.set_data64(5);
  h.call_as(7, other, user(3));
  EXPECT_EQ(h.ctl.ram().tas(0, 7, 2, 17), 0xABCu + 17);
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(7, 2, h.out), 0);
  for (uint32_t off = 0; off < 256; ++off) EXPECT_EQ(h.ctl.ram().tas(0, 7, 2, off), 0u);
  EXPECT_EQ(h.ctl.ram().tas(0, 7, 3, 0), 5u);  // its neighbour's space is untouched
  // A new task with the number reads zeros.
  auto d = Harness::data(h.call_as(7, make(Opcode::RSRAM64, 2, Space::TAS, Address::tas_tag(2, 17)), user(2)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 0u);
}

namespace {
// libcop's channel part of a barrier: LOCK, SETTC, SETBM, BENTRY, UNLOCK.
void barrier_visit(Harness& h, int ch, uint16_t tkno, uint32_t tag, uint64_t mask) {
  const Sender s = user(tkno);
  h.send_as(ch, make(Opcode::LOCK, tkno), s);
  h.send_as(ch, settc(tag, mask), s);
  h.send_as(ch, settc(tag, mask, 1, true), s);
  h.send_as(ch, gas(Opcode::BENTRY, tag, tkno), s);
  h.send_as(ch, make(Opcode::UNLOCK, tkno), s);
}

// The task_ended NACKs for `tag` among the deliveries, by destination mask.
std::vector<uint64_t> ended_nacks(const std::vector<Delivery>& out, uint32_t tag) {
  std::vector<uint64_t> r;
  for (const auto& d : out)
    if (d.msg.ins.opcode == Opcode::NACK && nack_error(d.msg.data1) == Error::task_ended &&
        d.msg.addr.msgtag == tag)
      r.push_back(d.channels);
  return r;
}
}  // namespace

TEST(ControllerEndTask, AKilledJobLeavesNoTagInUseForTheNext) {
  Harness h;
  const uint64_t mask = mask_of({1, 2, 3});
  barrier_visit(h, 1, 1, 5, mask);  // channel 1's task entered the barrier...
  h.run();
  // ... then the job is killed: every task ends, channels 2 and 3 never entered.
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(1, 1, h.out), 0);  // channel 1 has contributed: the barrier could still end
  EXPECT_TRUE(h.ctl.ram().tc(0, 5).accessed);
  EXPECT_EQ(h.ctl.end_task(2, 1, h.out), 1);  // channel 2 had no other task: it can never enter
  EXPECT_EQ(ended_nacks(h.out, 5), (std::vector<uint64_t>{mask}));
  EXPECT_EQ(h.ctl.end_task(3, 1, h.out), 0);  // already failed
  EXPECT_FALSE(h.ctl.ram().tc(0, 5).accessed);
  EXPECT_FALSE(h.ctl.ram().bm(0, 5).accessed);
  // The next job's barrier on the same tag works.
  h.out.clear();
  for (int ch : {1, 2, 3}) barrier_visit(h, ch, 4, 5, mask);
  h.run();
  EXPECT_EQ(Harness::error_of(h.out), Error::mask_in_use);  // only the SPMD peers' SETTC/SETBM
  auto d = Harness::data(h.out);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.ins.opcode, Opcode::BENTRY);
  EXPECT_EQ(d[0].channels, mask);
}

TEST(ControllerEndTask, FailsAnOperationItSetWhoseContributionItOwedEvenIfItsChannelHasOtherTasks) {
  Harness h;
  h.call_as(1, make(Opcode::PROBE, 1), user(1));  // another live task on channel 1
  h.call_as(2, settc(4, mask_of({1, 2})), user(1));
  h.call_as(2, gas(Opcode::BENTRY, 4, 1), user(1));
  h.call_as(1, settc(4, mask_of({1, 2})), user(2));  // mask_in_use: channel 2's task set it
  h.call_as(1, settc(6, mask_of({1, 2})), user(2));  // task 2 sets tag 6 and then ends
  h.call_as(2, gas(Opcode::BENTRY, 6, 1), user(1));
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(1, 2, h.out), 1);
  EXPECT_EQ(ended_nacks(h.out, 6), (std::vector<uint64_t>{mask_of({1, 2})}));
  EXPECT_TRUE(ended_nacks(h.out, 4).empty());  // task 1 of channel 1 may still enter that one
  EXPECT_TRUE(h.ctl.ram().tc(0, 4).accessed);
  EXPECT_FALSE(h.ctl.ram().tc(0, 6).accessed);
  auto d = Harness::data(h.call_as(1, gas(Opcode::BENTRY, 4, 1), user(1)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({1, 2}));
}

TEST(ControllerEndTask, AContributionItHadQueuedIsLostAndItsOperationFails) {
  Harness h;
  h.call_as(1, make(Opcode::PROBE, 1), user(1));  // channel 1 keeps a live task
  h.call_as(2, settc(9, mask_of({1, 2})), user(1));
  h.call_as(2, settc(9, channel_bit(2), 1, true), user(1));
  h.call_as(2, value(Opcode::SUMI64, 9, 5), user(1));
  // Task 3 of channel 1 has its contribution queued behind a lock of another channel.
  h.call_as(3, make(Opcode::LOCK, 1), user(1));
  Message mine = value(Opcode::SUMI64, 9, 6);
  mine.ins.tkno = 3;
  h.send_as(1, mine, user(3));
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(1, 3, h.out), 1);
  EXPECT_EQ(ended_nacks(h.out, 9), (std::vector<uint64_t>{mask_of({1, 2})}));
  EXPECT_FALSE(h.ctl.data_ready(1));
}

TEST(ControllerEndTask, ABroadcastMaskItSetForABroadcastThatNeverCameIsFreed) {
  Harness h;
  h.call_as(1, settc(30, mask_of({2, 3}), 1, true), user(1));
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(1, 1, h.out), 1);
  EXPECT_EQ(ended_nacks(h.out, 30), (std::vector<uint64_t>{mask_of({2, 3})}));
  EXPECT_EQ(Harness::error_of(h.call_as(4, settc(30, mask_of({2}), 1, true), user(1))), Error::none);
}

TEST(ControllerEndTask, AnOperationThatCanStillCompleteRunsOn) {
  Harness h;
  h.call_as(1, settc(12, mask_of({1, 2})), user(1));
  h.call_as(1, settc(12, mask_of({2}), 1, true), user(1));
  h.call_as(1, value(Opcode::SUMI64, 12, 30), user(1));
  h.out.clear();
  EXPECT_EQ(h.ctl.end_task(1, 1, h.out), 0);  // a non-root that contributed and exited
  EXPECT_TRUE(h.out.empty());
  auto d = Harness::data(h.call_as(2, value(Opcode::SUMI64, 12, 12), user(1)));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].msg.data64(), 42u);
  EXPECT_EQ(d[0].channels, channel_bit(2));
}

// ---- Same-tag serialisation by the accessed bits ----

namespace {
// libcop's channel part of cop_reduce: LOCK, SETTC, SETBM, one contribution per word, UNLOCK.
void reduce_visit(Harness& h, int ch, uint32_t tag, uint64_t tc, uint64_t bm, const std::vector<uint64_t>& words) {
  const Sender s = user(1);
  h.send_as(ch, make(Opcode::LOCK, 1), s);
  h.send_as(ch, settc(tag, tc, int(words.size())), s);
  h.send_as(ch, settc(tag, bm, int(words.size()), true), s);
  for (size_t i = 0; i < words.size(); ++i) h.send_as(ch, value(Opcode::SUMI64, tag + uint32_t(i), words[i]), s);
  h.send_as(ch, make(Opcode::UNLOCK, 1), s);
}

// Every NACK must be a SETTC/SETBM refused as initialised by a peer (libcop's contract).
void expect_only_peer_initialised(const std::vector<Delivery>& out) {
  for (const auto& d : out) {
    if (d.msg.ins.opcode != Opcode::NACK) continue;
    const auto op = static_cast<Opcode>(d.msg.data1 >> 8);
    EXPECT_TRUE((op == Opcode::SETTC || op == Opcode::SETBM) &&
                nack_error(d.msg.data1) == Error::mask_in_use)
        << "unexpected NACK " << error_name(nack_error(d.msg.data1)) << " for " << opcode_name(op);
  }
}
}  // namespace

TEST(ControllerSerialisation, AReduceLoopOnOneTagGivesTheRightSumEveryIterationWhileNonRootsRaceAhead) {
  for (int n : {2, 3, 4}) {
    for (size_t words : {size_t(1), size_t(3)}) {
      SCOPED_TRACE("channels " + std::to_string(n) + ", words " + std::to_string(words));
      Harness h;
      const int iterations = 25;
      const uint32_t tag = 40;
      const uint64_t all = (n == 64 ? ~0ull : (channel_bit(n) << 1) - 1);
      auto contribution = [](int k, int c, size_t w) { return uint64_t(k + 1) * 1000 + uint64_t(c) * 10 + w; };
      auto words_of = [&](int k, int c) {
        std::vector<uint64_t> v;
        for (size_t w = 0; w < words; ++w) v.push_back(contribution(k, c, w));
        return v;
      };
      // The non-roots do not wait for results: they queue every iteration at once.
      for (int c = 2; c <= n; ++c)
        for (int k = 0; k < iterations; ++k) reduce_visit(h, c, tag, all, channel_bit(1), words_of(k, c));
      // The root waits for each result before its next call.
      for (int k = 0; k < iterations; ++k) {
        h.out.clear();
        reduce_visit(h, 1, tag, all, channel_bit(1), words_of(k, 1));
        h.run();
        expect_only_peer_initialised(h.out);
        auto d = Harness::data(h.out);
        ASSERT_EQ(d.size(), words) << "iteration " << k;
        for (const auto& r : d) {
          EXPECT_EQ(r.channels, channel_bit(1));
          const size_t w = r.msg.addr.msgtag - tag;
          ASSERT_LT(w, words);
          uint64_t expected = 0;
          for (int c = 1; c <= n; ++c) expected += contribution(k, c, w);
          EXPECT_EQ(r.msg.data64(), expected) << "iteration " << k << " word " << w;
        }
      }
      for (int c = 1; c <= n; ++c) EXPECT_FALSE(h.ctl.data_ready(c));
      for (uint32_t t = tag; t < tag + words; ++t) EXPECT_FALSE(h.ctl.ram().tc(0, t).accessed);
    }
  }
}

TEST(ControllerSerialisation, ABarrierLoopOnOneTagNeverCountsAFastChannelsNextEntry) {
  Harness h;
  const uint64_t mask = mask_of({1, 2, 3});
  const int iterations = 20;
  // Channels 1 and 2 race ahead; channel 3 enters one barrier at a time.
  for (int k = 0; k < iterations; ++k) {
    barrier_visit(h, 1, 1, 7, mask);
    barrier_visit(h, 2, 1, 7, mask);
  }
  h.out.clear();
  h.run();
  EXPECT_TRUE(Harness::data(h.out).empty());
  for (int k = 0; k < iterations; ++k) {
    // Before channel 3 enters barrier k, channels 1 and 2 are in it and held for the next.
    EXPECT_EQ(h.ctl.ram().tc(0, 7).pending, channel_bit(3)) << "iteration " << k;
    EXPECT_EQ(h.ctl.held(1), k + 1 < iterations);  // its next visit, if it has one, waits
    EXPECT_EQ(h.ctl.held(2), k + 1 < iterations);
    h.out.clear();
    barrier_visit(h, 3, 1, 7, mask);
    h.run();
    expect_only_peer_initialised(h.out);
    auto d = Harness::data(h.out);
    ASSERT_EQ(d.size(), 1u) << "iteration " << k;
    EXPECT_EQ(d[0].msg.ins.opcode, Opcode::BENTRY);
    EXPECT_EQ(d[0].channels, mask);
  }
  EXPECT_FALSE(h.ctl.ram().tc(0, 7).accessed);
  EXPECT_FALSE(h.ctl.data_ready(1));
}

TEST(ControllerSerialisation, ABroadcastOnATagWhoseReductionIsInProgressWaitsForIt) {
  Harness h;
  h.call_as(1, settc(50, mask_of({1, 2})), user(1));
  h.call_as(1, settc(50, mask_of({2}), 1, true), user(1));
  h.call_as(1, value(Opcode::SUMI64, 50, 1), user(1));
  // Channel 1 goes on to broadcast on the same tag: its SETBM would find the
  // reduction's entry and its BCAST would steal the reduction's mask.
  h.out.clear();
  h.send_as(1, make(Opcode::LOCK, 1), user(1));
  h.send_as(1, settc(50, mask_of({3}), 1, true), user(1));
  h.send_as(1, value(Opcode::BCAST64, 50, 777), user(1));
  h.send_as(1, make(Opcode::UNLOCK, 1), user(1));
  h.run();
  EXPECT_TRUE(h.out.empty());
  EXPECT_TRUE(h.ctl.held(1));
  h.send_as(2, value(Opcode::SUMI64, 50, 2), user(1));
  h.run();
  EXPECT_EQ(Harness::error_of(h.out), Error::none);
  auto d = Harness::data(h.out);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].msg.ins.opcode, Opcode::SUMI64);
  EXPECT_EQ(d[0].msg.data64(), 3u);
  EXPECT_EQ(d[0].channels, channel_bit(2));
  EXPECT_EQ(d[1].msg.ins.opcode, Opcode::BCAST64);
  EXPECT_EQ(d[1].msg.data64(), 777u);
  EXPECT_EQ(d[1].channels, channel_bit(3));
}

TEST(ControllerSerialisation, ARepeatInsideALockedSequenceIsRefusedRatherThanStoppingTheController) {
  Harness h;
  h.send_as(1, make(Opcode::LOCK, 1), user(1));
  h.send_as(1, settc(60, mask_of({1, 2})), user(1));
  h.send_as(1, gas(Opcode::BENTRY, 60), user(1));
  h.send_as(1, gas(Opcode::BENTRY, 60), user(1));  // twice while holding the lock
  h.send_as(1, make(Opcode::UNLOCK, 1), user(1));
  h.send_as(2, gas(Opcode::BENTRY, 60), user(1));
  h.out.clear();
  EXPECT_EQ(h.ctl.run(h.out), 6);
  EXPECT_EQ(Harness::error_of(h.out), Error::not_participant);
  EXPECT_EQ(h.ctl.locked_channel(), 0);
  auto d = Harness::data(h.out);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].channels, mask_of({1, 2}));
}

TEST(ControllerProtection, AConfigurationOutsideTheLimitsIsRefusedBeforeAnyBankIsSized) {
  auto with = [](auto change) {
    controller::Config c;
    change(c);
    return c;
  };
  EXPECT_THROW(Controller(with([](auto& c) { c.partitions = 0; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.partitions = -1; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.partitions = 17; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.channels = 0; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.channels = 65; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.tasks_per_channel = 513; })), std::invalid_argument);
  EXPECT_THROW(Controller(with([](auto& c) { c.sas_words = 64; })), std::invalid_argument);
  EXPECT_NO_THROW(Controller(with([](auto& c) { c.partitions = 16; })));
}

TEST(ControllerSerialisation, AReduceLoopGivesTheRightSumsForRandomArrivalAndServiceOrders) {
  std::mt19937 rng(20261123);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 2 + int(rng() % 3);
    const int iterations = 20;
    const uint32_t tag = 9;
    SCOPED_TRACE("trial " + std::to_string(trial) + ", channels " + std::to_string(n));
    Harness h;
    const uint64_t all = (channel_bit(n) << 1) - 1;
    auto contribution = [](int k, int c) { return uint64_t(k + 1) * 100 + uint64_t(c); };
    std::vector<int> sent(size_t(n) + 1, 0);  // iterations each channel has sent
    int results = 0;
    size_t seen = 0;
    int idle = 0;
    while (results < iterations) {
      const int pick = int(rng() % 4);
      bool acted = false;
      if (pick == 0 && sent[1] == results && sent[1] < iterations) {  // the root waits for each result
        reduce_visit(h, 1, tag, all, channel_bit(1), {contribution(sent[1], 1)});
        sent[1]++;
        acted = true;
      } else if (pick == 1) {  // a non-root sends its next call whenever it likes
        const int c = 2 + int(rng() % uint32_t(n - 1));
        if (sent[size_t(c)] < iterations) {
          reduce_visit(h, c, tag, all, channel_bit(1), {contribution(sent[size_t(c)], c)});
          sent[size_t(c)]++;
          acted = true;
        }
      } else {
        acted = h.ctl.step(h.out);
      }
      for (; seen < h.out.size(); ++seen) {
        const Delivery& d = h.out[seen];
        if (d.msg.ins.opcode == Opcode::NACK) {
          expect_only_peer_initialised({d});
          continue;
        }
        if (d.link_level || d.msg.ins.opcode != Opcode::SUMI64) continue;
        uint64_t expected = 0;
        for (int c = 1; c <= n; ++c) expected += contribution(results, c);
        ASSERT_EQ(d.msg.data64(), expected) << "iteration " << results;
        ASSERT_EQ(d.channels, channel_bit(1));
        results++;
      }
      idle = acted ? 0 : idle + 1;
      ASSERT_LT(idle, 1000) << "no progress: stuck at iteration " << results;
    }
    h.run();
    EXPECT_FALSE(h.ctl.ram().tc(0, tag).accessed);
  }
}

// A frame's commands handed to the core in one call as decoded ones (copd's path:
// receive(span, checked)) give exactly what the same commands give received one by
// one unchecked and serviced step by step: every delivery (ACK, NACK naming its
// element, results, broadcasts, their cycles and order), the cycle clock, the poll
// counter and the GAS words. Random bursts on 4 channels: locked reductions and a
// broadcast (cop_reduce, cop_bcast), unlocked element runs (COP_NORMAL writes), and
// elements refused in the middle (another task's TKNO: protection; another opcode:
// mismatch, which ends the operation; a tag with no mask: no_mask).
namespace {

using cop::commands::Burst;

std::vector<uint32_t> words_of(const Message& m, Direction dir) {
  Words w{};
  const int n = encode(m, dir, w);
  return std::vector<uint32_t>(w.begin(), w.begin() + n);
}

void expect_same(const std::vector<Delivery>& a, const std::vector<Delivery>& b, const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(where + " delivery " + std::to_string(i));
    EXPECT_EQ(a[i].channels, b[i].channels);
    EXPECT_EQ(to_string(a[i].msg), to_string(b[i].msg));
    EXPECT_EQ(words_of(a[i].msg, Direction::to_node), words_of(b[i].msg, Direction::to_node));
    EXPECT_EQ(a[i].at_cycle, b[i].at_cycle);
    EXPECT_EQ(a[i].link_level, b[i].link_level);
    EXPECT_EQ(a[i].to_parent, b[i].to_parent);
    EXPECT_EQ(a[i].ends_operation, b[i].ends_operation);
    EXPECT_EQ(a[i].hop.kind, b[i].hop.kind);
    EXPECT_EQ(a[i].hop.origin.tkno, b[i].hop.origin.tkno);
    EXPECT_EQ(a[i].hop.origin.supervisor, b[i].hop.origin.supervisor);
  }
}

}  // namespace

TEST(ControllerRun, FrameInOneCallMatchesElementByElement) {
  constexpr int kChannels = 4;
  controller::Config cfg;
  cfg.channels = kChannels;
  cfg.gas_words = 4096;
  const uint64_t all = (uint64_t{1} << kChannels) - 1;
  std::set<Error> nack_kinds;
  for (uint32_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    // Each channel's frames (task 0 of the channel sends them), as its task's libcop would.
    std::vector<std::vector<Burst>> frames(kChannels);
    uint32_t tag = pick(0, 100);
    int nacks_planted = 0;
    for (int round = 0; round < 3; ++round) {
      const uint32_t n = pick(2, 40);
      const int kind = int(pick(0, 2));
      const int root = int(pick(0, kChannels - 1));
      const Opcode op = kind == 0 ? Opcode::SUMI64 : Opcode::SUMF;
      for (int c = 0; c < kChannels; ++c) {
        const cop::commands::Sender s{0, 0};
        std::vector<uint64_t> words(n);
        for (auto& w : words) w = (uint64_t(pick(0, UINT32_MAX)) << 32) | pick(0, UINT32_MAX);
        if (op == Opcode::SUMF)
          for (auto& w : words) w = std::bit_cast<uint64_t>(double(int32_t(w)) / 8.0);
        Burst b;
        if (kind == 2) {
          if (c == root) b = cop::commands::broadcast(s, Opcode::BCAST64, tag, words, all);
          else b = {cop::commands::command(s, Opcode::LOCK), cop::commands::command(s, Opcode::UNLOCK)};
        } else {
          b = cop::commands::reduction(s, op, tag, words, all, all);
        }
        // An element refused in the middle of the run (its NACK names it).
        if (pick(0, 2) == 0 && b.size() > 4) {
          const size_t at = b.size() - 2 - pick(0, uint32_t(std::min<size_t>(n, b.size() - 3) - 1));
          Message& m = b[at];
          if (is_reduction(m.ins.opcode) || m.ins.opcode == Opcode::BCAST64) {
            switch (pick(0, 2)) {
              case 0: m.ins.tkno = 1; break;                                     // protection
              case 1: if (is_reduction(m.ins.opcode)) m.ins.opcode = Opcode::SUMI64 == m.ins.opcode ? Opcode::MAXI64 : Opcode::SUMI64; break;  // mismatch
              default: m.addr.msgtag = 4000; break;                              // no mask there
            }
            nacks_planted++;
          }
        }
        // Unlocked (COP_NORMAL) element writes to the task's own TAS, between the bursts.
        const uint32_t nw = pick(0, 6);
        for (uint32_t i = 0; i < nw; ++i) {
          Message w = cop::commands::command(s, Opcode::WSRAM64, Space::TAS, Address::tas_tag(0, i));
          set_payload(w, pick(0, 1000));
          b.push_back(w);
        }
        frames[size_t(c)].push_back(b);
      }
      tag += n;
    }
    Controller fast(cfg), slow(cfg);
    std::vector<Delivery> out_fast, out_slow;
    for (int round = 0; round < 3; ++round) {
      // The frames arrive in a random channel order, each before any servicing or after some.
      std::vector<int> order(kChannels);
      std::iota(order.begin(), order.end(), 1);
      std::shuffle(order.begin(), order.end(), rng);
      for (int c : order) {
        const Burst& b = frames[size_t(c - 1)][size_t(round)];
        // copd's path: each command decoded from its words against the core's limits.
        std::vector<Message> decoded;
        for (const Message& m : b) {
          auto d = decode(words_of(m, Direction::to_controller), Direction::to_controller, cfg.limits());
          ASSERT_TRUE(std::holds_alternative<Message>(d)) << to_string(m);
          decoded.push_back(std::get<Message>(d));
        }
        const uint64_t ready = fast.cycles() + 40;
        ASSERT_EQ(fast.cycles(), slow.cycles());
        fast.receive(c, decoded, ready, Sender{false, 0}, out_fast, true);
        for (const Message& m : b) slow.receive(c, m, ready, Sender{false, 0}, out_slow);
        if (pick(0, 1) == 0) {
          fast.run(out_fast);
          while (slow.step(out_slow)) {
          }
        }
      }
      fast.run(out_fast);
      while (slow.step(out_slow)) {
      }
      expect_same(out_fast, out_slow, "round " + std::to_string(round));
      if (::testing::Test::HasFailure()) return;
      EXPECT_EQ(fast.cycles(), slow.cycles());
      EXPECT_EQ(fast.poll_counter(), slow.poll_counter());
      EXPECT_EQ(fast.stats().serviced, slow.stats().serviced);
      EXPECT_EQ(fast.stats().nacks, slow.stats().nacks);
      EXPECT_EQ(fast.stats().broadcasts, slow.stats().broadcasts);
    }
    for (uint32_t w = 0; w < cfg.gas_words; ++w) ASSERT_EQ(fast.ram().gas(0, w), slow.ram().gas(0, w)) << w;
    // The runs were serviced, refused where planted, and results went out.
    EXPECT_GT(fast.stats().serviced, 0u);
    if (nacks_planted > 0) {
      EXPECT_GT(fast.stats().nacks, 0u);
    }
    for (const Delivery& d : out_fast)
      if (d.msg.ins.opcode == Opcode::NACK) nack_kinds.insert(nack_error(d.msg.data1));
    EXPECT_GT(std::count_if(out_fast.begin(), out_fast.end(), [](const Delivery& d) { return !d.link_level; }), 0);
  }
  // The seeds plant each kind of refusal at least once.
  EXPECT_TRUE(nack_kinds.count(Error::protection));
  EXPECT_TRUE(nack_kinds.count(Error::mismatch));
  EXPECT_TRUE(nack_kinds.count(Error::no_mask));
}
