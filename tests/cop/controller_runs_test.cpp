// Runs (issue 36, controller.h Config::runs): the same command frames through three
// cores, (A) every element its own command (the element path), (B) bursts queued as
// runs (receive_run) with the run path off, (C) the same with it on, must give the
// same deliveries (channels, words, at_cycle, order, flags) once C's run deliveries are
// unpacked (expand_runs), the same modelled cycles and the same counts. Bursts of
// several lengths, broadcasts and reductions, partitions, a held operation, errors in
// the middle of a burst, unlocked bursts of two channels interleaved, a task ending
// with a run queued, the deadlock timer, and random mixes of all of them.
#include "controller_harness.h"

#include <fmt/format.h>

#include <bit>
#include <functional>
#include <limits>
#include <span>

namespace {

using cop::controller::Config;

Sender task(uint16_t tkno = 1) { return Sender{false, tkno}; }

std::string describe(const Delivery& d) {
  return fmt::format("to {:#x} {} at {} link {} up {} ends {} hop {}/{}{}", d.channels, to_string(d.msg), d.at_cycle,
                     d.link_level, d.to_parent, d.ends_operation, int(d.hop.kind), d.hop.origin.tkno,
                     d.run ? fmt::format(" run {}", d.run) : "");
}

struct Three {
  Controller a, b, c;
  std::vector<Delivery> out_a, out_b, out_c;
  size_t runs_seen = 0;  // run deliveries of two elements or more C gave

  static Config with_runs(Config cfg, bool runs) {
    cfg.runs = runs;
    return cfg;
  }
  explicit Three(Config cfg = {}) : a(with_runs(cfg, false)), b(with_runs(cfg, false)), c(with_runs(cfg, true)) {}

  void each(const std::function<void(Controller&, std::vector<Delivery>&)>& f) {
    f(a, out_a);
    f(b, out_b);
    f(c, out_c);
  }
  // One frame of `cmds` from `from` on `channel`: A one command each, B and C in runs.
  void send(int channel, const std::vector<Message>& cmds, Sender from) {
    const uint64_t ready = a.cycles();
    a.receive(channel, cmds, ready, from, out_a, false);
    for (Controller* ctl : {&b, &c}) {
      auto& out = ctl == &b ? out_b : out_c;
      for (size_t i = 0; i < cmds.size();) {
        size_t n = 1;
        while (i + n < cmds.size() && Controller::continues_run(cmds[i + n - 1], cmds[i + n])) ++n;
        if (n == 1) {
          ctl->receive(channel, cmds[i], ready, from, out, false);
        } else {
          std::vector<uint64_t> data;
          for (size_t k = 0; k < n; ++k) data.push_back(cmds[i + k].data64());
          ctl->receive_run(channel, cmds[i], data, ready, from, false);
        }
        i += n;
      }
    }
  }
  void run() {
    each([](Controller& ctl, std::vector<Delivery>& out) { ctl.run(out); });
    check();
  }
  // A's deliveries are B's and C's unpacked; the cores' clocks and counts agree, and
  // what each would resend on an XMIT (the interface's last message to each channel).
  void check() {
    for (int ch = 1; ch <= a.config().channels; ++ch)
      each([&](Controller& x, std::vector<Delivery>& out) { x.receive(ch, make(Opcode::XMIT), x.cycles(), task(), out); });
    for (const Delivery& d : out_c) runs_seen += d.run >= 2 ? 1 : 0;
    const auto eb = Controller::expand_runs(out_b);
    const auto ec = Controller::expand_runs(out_c);
    ASSERT_EQ(eb.size(), out_a.size());
    ASSERT_EQ(ec.size(), out_a.size());
    for (size_t i = 0; i < out_a.size(); ++i) {
      ASSERT_EQ(describe(eb[i]), describe(out_a[i])) << "delivery " << i;
      ASSERT_EQ(describe(ec[i]), describe(out_a[i])) << "delivery " << i;
      ASSERT_EQ(ec[i].msg, out_a[i].msg);
      ASSERT_EQ(ec[i].hop.origin.supervisor, out_a[i].hop.origin.supervisor);
    }
    ASSERT_EQ(a.cycles(), b.cycles());
    ASSERT_EQ(a.cycles(), c.cycles());
    // The same RAM: every GAS word (results, partial results, broadcast words) and mask
    // entry; the counts of joined entries that let the poll counter skip reading them hold.
    ASSERT_TRUE(a.ram().joined_counts_hold());
    ASSERT_TRUE(a.ram().accessed_bits_hold());
    for (Controller* x : {&b, &c}) {
      ASSERT_TRUE(x->ram().joined_counts_hold());
      ASSERT_TRUE(x->ram().accessed_bits_hold());
      for (int p = 0; p < a.ram().partitions(); ++p)
        for (uint32_t w = 0; w < a.config().gas_words; ++w) {
          const auto ppn = uint8_t(p);
          ASSERT_EQ(x->ram().gas(ppn, w), a.ram().gas(ppn, w)) << "partition " << p << " word " << w;
          ASSERT_EQ(x->ram().tc(ppn, w).accessed, a.ram().tc(ppn, w).accessed) << "partition " << p << " word " << w;
          ASSERT_EQ(x->ram().tc(ppn, w).pending, a.ram().tc(ppn, w).pending) << "partition " << p << " word " << w;
          ASSERT_EQ(x->ram().bm(ppn, w).accessed, a.ram().bm(ppn, w).accessed) << "partition " << p << " word " << w;
        }
    }
    for (Controller* x : {&b, &c}) {
      ASSERT_EQ(x->stats().serviced, a.stats().serviced);
      ASSERT_EQ(x->stats().nacks, a.stats().nacks);
      ASSERT_EQ(x->stats().broadcasts, a.stats().broadcasts);
      ASSERT_EQ(x->poll_counter(), a.poll_counter());
      ASSERT_EQ(x->locked_channel(), a.locked_channel());
      for (int ch = 1; ch <= a.config().channels; ++ch) ASSERT_EQ(x->held(ch), a.held(ch)) << "channel " << ch;
    }
    out_a.clear();
    out_b.clear();
    out_c.clear();
  }
};

commands::Sender lib_sender(uint16_t tkno = 1, uint8_t ppn = 0, uint64_t op_id = 0) {
  return commands::Sender{tkno, ppn, op_id};
}

std::vector<Message> flat(const std::vector<commands::ArrayBurst>& bursts) {
  std::vector<Message> all;
  for (const auto& b : bursts) all.insert(all.end(), b.commands.begin(), b.commands.end());
  return all;
}

std::vector<uint64_t> words(size_t n, uint64_t seed) {
  std::vector<uint64_t> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = seed * 0x9E3779B97F4A7C15ull + i * 0x100000001ull;
  return w;
}

TEST(ControllerRuns, BroadcastBurstsOfSeveralLengthsAsTheElementPath) {
  Three t;
  uint32_t tag = 10;
  for (size_t n : {1u, 2u, 5u, 127u, 128u, 129u, 300u}) {
    for (uint64_t mask : {mask_of({2, 3}), mask_of({1, 2, 3})}) {
      for (Opcode op : {Opcode::BCAST64, Opcode::BCAST32}) {
        const auto w = words(n, tag);
        t.send(1, flat(commands::broadcast_bursts(lib_sender(), op, tag, w, mask, 128)), task());
        t.run();
        tag += uint32_t(n);
      }
    }
  }
  EXPECT_GT(t.runs_seen, 10u);  // the run path was taken
}

TEST(ControllerRuns, ReductionBurstsOfThreeChannelsAsTheElementPath) {
  Three t;
  uint32_t tag = 0;
  for (size_t n : {1u, 3u, 128u, 200u}) {
    for (Opcode op : {Opcode::SUMI64, Opcode::SUMF, Opcode::MAXI32}) {
      for (uint64_t root : {mask_of({1}), mask_of({3}), mask_of({1, 2, 3}), uint64_t{0}}) {
        const uint64_t all = mask_of({1, 2, 3});
        // The three frames queued at once: the round robin and the locks interleave them.
        for (int ch : {2, 1, 3})
          t.send(ch, flat(commands::reduction_bursts(lib_sender(), op, tag, words(n, uint64_t(ch)), all, root, 128)),
                 task());
        t.run();
        tag += uint32_t(n);
      }
    }
  }
  EXPECT_GT(t.runs_seen, 10u);
}

// The broadcast-mask entries' accessed bits (data_ram.h, beside the entries: SETBM's all or
// nothing reads them) follow the entries: masks freed by a reduction's last contributions
// (the run path's loop), by a broadcast's words, and a SETBM refused part-way (nothing set:
// the words after the one in use are free, read back with RSRAM64 M as the bits say).
TEST(ControllerRuns, BroadcastMaskAccessedBitsFollowTheEntries) {
  Three t;
  const uint64_t all = mask_of({1, 2, 3}), two = mask_of({2, 3});
  for (int ch : {2, 1, 3})
    t.send(ch, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 0, words(200, uint64_t(ch)), all,
                                               mask_of({1}), 128)), task());
  t.run();
  t.send(1, flat(commands::broadcast_bursts(lib_sender(), Opcode::BCAST64, 300, words(150, 9), two, 128)), task());
  t.run();
  EXPECT_GT(t.runs_seen, 2u);
  t.send(1, {settc(150, two, 100, true)}, task());
  t.send(1, {settc(100, two, 100, true)}, task());  // words 150..199 in use: refused
  t.each([&](Controller& x, std::vector<Delivery>& out) {
    x.run(out);
    ASSERT_EQ(Harness::error_of(out), Error::mask_in_use);
    for (uint32_t w : {0u, 99u, 100u, 149u, 150u, 249u, 250u, 300u, 449u}) {
      Message rd = gas(Opcode::RSRAM64, w);
      rd.ins.m = true;
      rd.ins.msel_bcast = true;
      std::vector<Delivery> got;
      x.receive(1, rd, x.cycles(), task(), got, false);
      x.run(got);
      got = Harness::data(got);
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].msg.ins.opcode, Opcode::RSRAM64);
      EXPECT_EQ(got[0].msg.data64(), w >= 150 && w < 250 ? two : 0) << "word " << w;
      EXPECT_EQ(x.ram().bm_accessed_in(0, w, 1), w >= 150 && w < 250) << "word " << w;
    }
    EXPECT_FALSE(x.ram().bm_accessed_in(0, 0, 150));
    EXPECT_FALSE(x.ram().bm_accessed_in(0, 250, 250));
  });
  t.check();
  // The freed words take a new SETBM: the bits said free as the entries do.
  t.send(1, {settc(0, two, 150, true), settc(250, two, 200, true)}, task());
  t.each([](Controller& x, std::vector<Delivery>& out) {
    x.run(out);
    EXPECT_EQ(Harness::error_of(out), Error::none);
    EXPECT_TRUE(x.ram().accessed_bits_hold());
  });
  t.check();
}

// The run path's loop is specialised per reduction function and payload width (runs.cpp,
// plain_contributions): every function, on values that tell them apart (signs, the high
// half of a 32-bit word's carrier, NaN, -0.0, infinities), gives the element path's
// results, and the local computation's.
TEST(ControllerRuns, EveryReductionFunctionAsTheElementPath) {
  const Opcode ops[] = {Opcode::SUMI32, Opcode::MAXI32, Opcode::MINI32, Opcode::OR32,   Opcode::AND32,
                        Opcode::EXOR32, Opcode::SUMI64, Opcode::MAXI64, Opcode::MINI64, Opcode::OR64,
                        Opcode::AND64,  Opcode::EXOR64, Opcode::SUMF,   Opcode::MAXF,   Opcode::MINF};
  const uint64_t specials[] = {0,
                               ~uint64_t{0},
                               0x80000000ull,
                               0x7FFFFFFFull,
                               0xFFFFFFFF00000001ull,
                               std::bit_cast<uint64_t>(-0.0),
                               std::bit_cast<uint64_t>(1.5),
                               std::bit_cast<uint64_t>(-2.25),
                               std::bit_cast<uint64_t>(std::numeric_limits<double>::quiet_NaN()),
                               std::bit_cast<uint64_t>(std::numeric_limits<double>::infinity()),
                               std::bit_cast<uint64_t>(-std::numeric_limits<double>::infinity())};
  Three t;
  uint32_t tag = 0;
  const uint64_t all = mask_of({1, 2, 3});
  for (Opcode op : ops) {
    SCOPED_TRACE(std::string(opcode_name(op)));
    const size_t n = 150;
    std::vector<std::vector<uint64_t>> w(4);
    for (int ch : {1, 2, 3}) {
      w[size_t(ch)] = words(n, uint64_t(ch) + tag);
      for (size_t i = 0; i < n; i += 3) w[size_t(ch)][i] = specials[(i / 3 + size_t(ch) * 5) % std::size(specials)];
    }
    for (int ch : {3, 1, 2})
      t.send(ch, flat(commands::reduction_bursts(lib_sender(), op, tag, w[size_t(ch)], all, all, 128)), task());
    // Channel 3's burst is serviced first (its LOCK first in the round robin after 1 and
    // 2 are queued: poll order 1, 2, 3 from 0): the result is combine(combine(w1, w2), w3)
    // in the order the element path took; the local computation for the integer functions,
    // whose order does not matter, and the element path's for all.
    t.each([](Controller& c, std::vector<Delivery>& out) { c.run(out); });
    if (!is_floating(op)) {
      size_t results = 0;
      for (const Delivery& d : t.out_a) {
        if (d.link_level || d.msg.ins.opcode != op) continue;
        const size_t i = d.msg.addr.msgtag - tag;
        uint64_t want = payload(value(op, 0, w[1][i]));
        for (int ch : {2, 3}) want = combine(op, want, payload(value(op, 0, w[size_t(ch)][i])));
        ASSERT_EQ(payload(d.msg), want) << "word " << i;
        ++results;
      }
      EXPECT_EQ(results, n);
    }
    t.check();
    if (::testing::Test::HasFatalFailure()) return;
    tag += uint32_t(n);
  }
  EXPECT_GT(t.runs_seen, 15u);
}

TEST(ControllerRuns, PartitionsAndAHeldOperationAsTheElementPath) {
  Config cfg;
  cfg.partitions = 4;
  Three t(cfg);
  // Channels 1-3 have task 1 in job partition 2; channel 3's task 2 is in partition 0.
  t.each([](Controller& c, std::vector<Delivery>&) {
    for (int ch : {1, 2, 3}) c.set_task_partition(ch, 1, 2);
  });
  const uint64_t all = mask_of({1, 2, 3});
  const auto r1 = flat(commands::reduction_bursts(lib_sender(1, 2), Opcode::SUMI64, 40, words(150, 1), all, all, 128));
  const auto r2 = flat(commands::reduction_bursts(lib_sender(1, 2), Opcode::SUMI64, 40, words(150, 2), all, all, 128));
  // Channel 1 contributes twice on the same words: its second call is held until 2 and 3 are in.
  t.send(1, r1, task());
  t.send(1, r2, task());
  t.send(2, r1, task());
  // Another job's broadcast on channel 3 (partition 0) passes channel 3's held commands.
  t.send(3, flat(commands::broadcast_bursts(lib_sender(2, 0), Opcode::BCAST64, 40, words(140, 3), all, 128)), task(2));
  t.run();
  t.send(3, r1, task());
  t.run();
  t.send(2, r2, task());
  t.send(3, r2, task());
  t.run();
  // A run naming another partition than its task's: refused element by element.
  t.send(2, flat(commands::reduction_bursts(lib_sender(1, 1), Opcode::SUMI64, 60, words(20, 4), all, all, 128)), task());
  t.run();
  EXPECT_GT(t.runs_seen, 4u);
}

// A LOCK waits when any command of its sequence would repeat an operation in progress
// (poll.cpp, waits): for a run, any of its elements, not only its first.
TEST(ControllerRuns, ALockWaitsForARunWhoseLaterElementRepeatsAsTheElementPath) {
  Three t;
  const uint64_t both = mask_of({1, 2});
  t.send(1, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 10, words(5, 1), both, both, 128)), task());
  t.run();
  std::vector<Message> seq{commands::command(lib_sender(), Opcode::LOCK)};
  commands::append_elements(seq, lib_sender(), Opcode::SUMI64, 5, words(10, 2));
  seq.push_back(commands::command(lib_sender(), Opcode::UNLOCK));
  t.send(1, seq, task());
  t.run();
  EXPECT_TRUE(t.c.held(1));  // word 10 is in progress and channel 1 is in already
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 10, words(5, 3), both, both, 128)), task());
  t.run();
  EXPECT_FALSE(t.c.held(1));
}

// The poll counter reads only the entries of words where a channel may have joined an
// operation in progress (data_ram.h, DataRam::joined): a channel in an operation on some
// words is not held for a locked sequence on others, and is for one whose last element
// reaches them, however far apart.
TEST(ControllerRuns, ALockIsHeldOnlyForTheWordsItsChannelHasJoinedAsTheElementPath) {
  Config cfg;
  cfg.gas_words = 8192;
  Three t(cfg);
  const uint64_t both = mask_of({1, 2});
  // Channel 1 in operations on words 3000-3004 and 5000-5001, waiting for channel 2.
  for (uint32_t at : {3000u, 5000u})
    t.send(1, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, at, words(at == 3000 ? 5 : 2, 1), both,
                                              both, 128)),
           task());
  t.run();
  auto locked = [](uint32_t tag, size_t n) {
    std::vector<Message> seq{commands::command(lib_sender(), Opcode::LOCK)};
    commands::append_elements(seq, lib_sender(), Opcode::SUMI64, tag, words(n, tag));
    seq.push_back(commands::command(lib_sender(), Opcode::UNLOCK));
    return seq;
  };
  // Words below, between and above them: serviced (refused not_participant: no SETTC).
  for (uint32_t at : {10u, 3005u, 4000u, 5002u}) {
    t.send(1, locked(at, 200), task());
    t.run();
    EXPECT_FALSE(t.c.held(1)) << "words from " << at;
    EXPECT_EQ(t.c.ram().joined(0, 1).count, 7u);
  }
  // A run whose last element is word 3000, and one whose first is word 5001: held.
  t.send(1, locked(2801, 200), task());
  t.run();
  EXPECT_TRUE(t.c.held(1));
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 3000, words(5, 2), both, both, 128)), task());
  t.run();
  EXPECT_FALSE(t.c.held(1));  // 3000-3004 complete; channel 1 still in 5000-5001
  EXPECT_EQ(t.c.ram().joined(0, 1).count, 2u);
  t.send(1, locked(5001, 3), task());
  t.run();
  EXPECT_TRUE(t.c.held(1));
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 5000, words(2, 2), both, both, 128)), task());
  t.run();
  EXPECT_FALSE(t.c.held(1));
  EXPECT_EQ(t.c.ram().joined(0, 1).count, 0u);
  EXPECT_EQ(t.c.ram().joined(0, 1).hi, 0u);
}

TEST(ControllerRuns, ErrorsInTheMiddleOfABurstAsTheElementPath) {
  Three t;
  const uint64_t all = mask_of({1, 2, 3});
  // A broadcast mask set for the first 50 of 120 words only: the rest NACK no_mask.
  std::vector<Message> cast;
  cast.push_back(commands::command(lib_sender(), Opcode::LOCK));
  cast.push_back(commands::mask_command(lib_sender(), Opcode::SETBM, 100, mask_of({2, 3}), 50));
  commands::append_elements(cast, lib_sender(), Opcode::BCAST64, 100, words(120, 7));
  cast.push_back(commands::command(lib_sender(), Opcode::UNLOCK));
  t.send(1, cast, task());
  t.run();
  // A reduction whose word 30 already has another function's contribution: mismatch there.
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 200, words(60, 1), all, all, 128)), task());
  t.run();
  std::vector<Message> other;
  other.push_back(commands::command(lib_sender(), Opcode::LOCK));
  other.push_back(commands::mask_command(lib_sender(), Opcode::SETTC, 230, all, 1));
  commands::append_elements(other, lib_sender(), Opcode::MAXI64, 230, words(1, 9));
  other.push_back(commands::command(lib_sender(), Opcode::UNLOCK));
  t.send(3, other, task());
  t.run();
  for (int ch : {1, 3})
    t.send(ch, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 200, words(60, 2), all, all, 128)), task());
  t.run();
  // A task claiming another's number: every element refused (protection).
  t.send(1, flat(commands::broadcast_bursts(lib_sender(5), Opcode::BCAST64, 300, words(40, 3), all, 128)), task());
  t.run();
  EXPECT_GT(t.runs_seen, 2u);
}

TEST(ControllerRuns, UnlockedBurstsOfTwoChannelsInterleaveAsTheElementPath) {
  Three t;
  const uint64_t all = mask_of({1, 2});
  for (int ch : {1, 2}) {
    std::vector<Message> b;
    b.push_back(commands::mask_command(lib_sender(), Opcode::SETTC, 500, all, 64));
    commands::append_elements(b, lib_sender(), Opcode::SUMI32, 500, words(64, uint64_t(ch)));
    t.send(ch, b, task());
  }
  t.run();
  // Unlocked broadcasts of two channels to each other.
  for (int ch : {1, 2}) {
    std::vector<Message> b;
    const uint32_t tag = 600 + uint32_t(ch) * 100;
    b.push_back(commands::mask_command(lib_sender(), Opcode::SETBM, tag, all, 80));
    commands::append_elements(b, lib_sender(), Opcode::BCAST64, tag, words(80, uint64_t(ch)));
    t.send(ch, b, task());
  }
  t.run();
}

TEST(ControllerRuns, ATaskEndingOrTheDeadlockTimerWithARunQueuedAsTheElementPath) {
  Config cfg;
  cfg.lock_limit_us = 100;
  Three t(cfg);
  const uint64_t all = mask_of({1, 2, 3});
  t.send(1, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 0, words(100, 1), all, all, 128)), task());
  t.run();
  // Channel 2's burst queued behind a held LOCK of channel 3 that never unlocks.
  std::vector<Message> lock{commands::command(lib_sender(), Opcode::LOCK)};
  t.send(3, lock, task());
  t.run();
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 0, words(100, 2), all, all, 128)), task());
  t.run();
  // Channel 3's own burst after its LOCK was taken back: refused lock_timeout up to its UNLOCK.
  t.each([](Controller& c, std::vector<Delivery>& out) { c.tick(1000, out); });
  t.check();
  t.send(3, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 0, words(100, 3), all, all, 128)), task());
  t.run();
  // A task ends with a run queued (its contributions are lost: the operation is voided).
  t.send(1, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 300, words(90, 1), all, all, 128)), task());
  t.run();
  std::vector<Message> unlocked;
  unlocked.push_back(commands::command(lib_sender(), Opcode::LOCK));
  t.send(3, unlocked, task());
  t.run();
  t.send(2, flat(commands::reduction_bursts(lib_sender(), Opcode::SUMI64, 300, words(90, 2), all, all, 128)), task());
  t.each([](Controller& c, std::vector<Delivery>& out) { c.end_task(2, 1, out); });
  t.check();
  t.each([](Controller& c, std::vector<Delivery>& out) { c.end_task(3, 1, out); });
  t.check();
  t.run();
}

// Random mixes: bursts of random kinds, lengths, masks and senders, some with the mask
// missing for part of the words, queued at random and run now and then.
TEST(ControllerRuns, RandomMixesAsTheElementPath) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    Config cfg;
    cfg.channels = 4;
    cfg.gas_words = 4096;
    Three t(cfg);
    auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
    const Opcode ops[] = {Opcode::BCAST64, Opcode::BCAST32, Opcode::SUMI64, Opcode::SUMF, Opcode::MINI32};
    for (int round = 0; round < 30; ++round) {
      const int ch = int(pick(4)) + 1;
      const Opcode op = ops[pick(5)];
      const uint32_t tag = pick(8) * 300;
      const size_t n = 1 + pick(3) == 1 ? 1 + pick(3) : 1 + pick(290);
      uint64_t mask = (1 + pick(15)) & 0xF;
      const uint64_t all = 0xF;
      const auto w = words(n, rng());
      std::vector<Message> cmds;
      if (op == Opcode::BCAST64 || op == Opcode::BCAST32) {
        if (pick(4) == 0) {  // part of the words without a mask
          cmds.push_back(commands::command(lib_sender(), Opcode::LOCK));
          cmds.push_back(commands::mask_command(lib_sender(), Opcode::SETBM, tag, mask, int(1 + pick(uint32_t(n)))));
          commands::append_elements(cmds, lib_sender(), op, tag, w);
          cmds.push_back(commands::command(lib_sender(), Opcode::UNLOCK));
        } else {
          cmds = flat(commands::broadcast_bursts(lib_sender(), op, tag, w, mask, 1 + pick(200)));
        }
      } else {
        cmds = flat(commands::reduction_bursts(lib_sender(), op, tag, w, all, pick(2) ? mask : 0, 1 + pick(200)));
      }
      t.send(ch, cmds, task());
      if (pick(3) == 0) t.run();
      if (pick(20) == 0) t.each([&](Controller& c, std::vector<Delivery>& out) { c.end_task(ch, 1, out); });
      if (::testing::Test::HasFatalFailure()) return;
    }
    t.run();
  }
}

}  // namespace

namespace {

// The joined counts (data_ram.h) gathered over a loop of entry changes (DataRam::Gathered,
// as plain_contributions and set_tc_range use them) end as the changes one by one leave
// them: the counts exact, each range holding its channel's joined words, an empty range
// for a count of 0; whatever the changes, channels joining and leaving in any order.
TEST(ControllerRuns, JoinedCountsGatheredOverALoopHoldForAnyChanges) {
  std::mt19937 rng(7);
  cop::controller::DataRam ram(4, 1, 1, 300, 8, 2);
  for (int loop = 0; loop < 20000; ++loop) {
    const auto ppn = uint8_t(rng() % 2);
    const uint32_t span = loop % 2 ? 300 : 5;  // few words: the same ones joined and left
    cop::controller::DataRam::Gathered g(ppn);
    const int changes = 1 + int(rng() % 12);
    for (int k = 0; k < changes; ++k) {
      const auto w = uint32_t(rng() % span);
      const uint64_t mask = rng() % 4, pending = mask & (rng() % 4);
      const bool accessed = rng() % 4 != 0;
      ram.update_tc(w, [&](cop::controller::TcEntry& e) {
        e.mask = mask;
        e.pending = pending;
        e.accessed = accessed;
      }, g);
    }
    ram.apply(g);
    ASSERT_TRUE(ram.joined_counts_hold()) << "loop " << loop;
  }
  // Channel 1 in word 0; within one loop it joins word 3 and leaves it, and then channel 2
  // leaves word 5: channel 1's count passes 0 while its join of word 3 is still gathered,
  // and its range must still hold word 0.
  cop::controller::DataRam one(4, 1, 1, 16, 8, 1);
  auto set = [](uint64_t mask, bool accessed) {
    return [=](cop::controller::TcEntry& e) {
      e.mask = mask;
      e.pending = 0;
      e.accessed = accessed;
    };
  };
  one.update_tc(0, 0, set(1, true));
  one.update_tc(0, 5, set(2, true));
  cop::controller::DataRam::Gathered g(0);
  one.update_tc(3, set(1, true), g);
  one.update_tc(3, set(1, false), g);
  one.update_tc(5, set(2, false), g);
  one.apply(g);
  EXPECT_TRUE(one.joined_counts_hold());
  EXPECT_EQ(one.joined(0, 1).count, 1u);
  EXPECT_EQ(one.joined(0, 1).lo, 0u);
  EXPECT_EQ(one.joined(0, 2).count, 0u);
}

}  // namespace
