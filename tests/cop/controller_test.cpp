// cop/controller: the poll counter, locking and the deadlock timer, a vacant channel's
// operation voided, task address spaces and barriers. The other opcodes' effects are in
// controller_reduce_test.cpp, protection in controller_protection_test.cpp, end_task and
// same-tag serialisation in controller_serialisation_test.cpp, whole frames in
// controller_run_test.cpp (one binary, test_cop_controller).
#include "controller_harness.h"

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

// A held command holds its own task's later commands, not another task's of the same
// partition on the channel (issue 34): the operation it waits for may need the other
// task's contribution queued behind it (two tasks of one job a node, difftest seed 9).
TEST(Controller, AHeldCommandOfOneTaskDoesNotHoldAnotherTasksOnTheChannel) {
  Harness h;
  h.call_as(1, settc(7, mask_of({1, 2})), user(1));
  EXPECT_EQ(Harness::error_of(h.call_as(1, gas(Opcode::BENTRY, 7, 1), user(1))), Error::none);
  // Task 1's next entry on tag 7 waits for the barrier in progress.
  EXPECT_TRUE(h.call_as(1, gas(Opcode::BENTRY, 7, 1), user(1)).empty());
  EXPECT_TRUE(h.ctl.held(1));
  // Task 2's command behind it is serviced all the same (its own barrier on tag 9 of
  // channel 1 alone: its exit comes out), while task 1's stays held.
  h.call_as(1, settc(9, mask_of({1})), user(2));
  EXPECT_TRUE(h.ctl.ram().tc(0, 9).accessed);
  auto exit = Harness::data(h.call_as(1, gas(Opcode::BENTRY, 9, 2), user(2)));
  ASSERT_EQ(exit.size(), 1u);
  EXPECT_EQ(exit[0].msg.addr.msgtag, 9u);
  EXPECT_TRUE(h.ctl.held(1));
  // Channel 2's entry ends barrier 7; then task 1's held entry finds none on the tag.
  EXPECT_EQ(Harness::error_of(h.call(2, gas(Opcode::BENTRY, 7))), Error::no_mask);
  EXPECT_FALSE(h.ctl.data_ready(1));
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
