// cop/controller: end_task (a task's exit leaves nothing behind) and same-tag
// serialisation by the accessed bits.
#include "controller_harness.h"

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
