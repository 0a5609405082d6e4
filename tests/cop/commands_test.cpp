// cop/lib/commands: every burst libcop sends, encoded as it goes on the wire
// and decoded again with cop/wire's decoder, carries the fields the call means
// (seed 000 ch. V; field layout in cop/wire.h).
#include "lib/commands.h"

#include <gtest/gtest.h>

#include <bit>
#include <variant>
#include <vector>

namespace {

using namespace cop::commands;  // Burst, Sender, TasTarget and the builders
using cop::wire::Direction;
using cop::wire::Message;
using cop::wire::Opcode;
using cop::wire::Space;

constexpr Sender kTask{37, 5};  // TKNO 37 in partition 5

// The message as the controller decodes it from its words.
Message on_the_wire(const Message& m) {
  cop::wire::Words w{};
  const int n = cop::wire::encode(m, Direction::to_controller, w);
  EXPECT_GT(n, 0) << cop::wire::to_string(m);
  auto decoded = cop::wire::decode(std::span<const uint32_t>(w.data(), size_t(n)), Direction::to_controller);
  if (const auto* e = std::get_if<cop::wire::DecodeError>(&decoded)) {
    ADD_FAILURE() << cop::wire::to_string(m) << ": " << e->detail;
    return Message{};
  }
  return std::get<Message>(decoded);
}

std::vector<Message> decoded(const Burst& b) {
  std::vector<Message> out;
  for (const Message& m : b) out.push_back(on_the_wire(m));
  return out;
}

std::vector<Opcode> opcodes(const std::vector<Message>& ms) {
  std::vector<Opcode> ops;
  for (const Message& m : ms) ops.push_back(m.ins.opcode);
  return ops;
}

void expect_from_task(const Message& m) {
  EXPECT_EQ(m.ins.tkno, kTask.tkno) << cop::wire::to_string(m);
  EXPECT_EQ(m.ins.ppn, kTask.ppn) << cop::wire::to_string(m);
  EXPECT_FALSE(m.ins.supervisor);
}

void expect_mask(const Message& m, Opcode op, uint32_t tag, uint64_t mask, int count) {
  EXPECT_EQ(m.ins.opcode, op);
  EXPECT_EQ(m.ins.space, Space::GAS);
  EXPECT_EQ(m.addr.msgtag, tag);
  EXPECT_EQ(m.data64(), mask);
  EXPECT_EQ(m.count(), count);  // COUNT-1 in the TKNO field (Figure 14)
  EXPECT_EQ(m.ins.ppn, kTask.ppn);
}

TEST(Commands, CommandCarriesTheSendersPidRegisterAndPartition) {
  const Message m = on_the_wire(cop::commands::command(kTask, Opcode::BENTRY, Space::GAS, 4711));
  EXPECT_EQ(m.ins.opcode, Opcode::BENTRY);
  EXPECT_EQ(m.ins.space, Space::GAS);
  EXPECT_EQ(m.addr.msgtag, 4711u);
  expect_from_task(m);
  expect_from_task(on_the_wire(cop::commands::command(kTask, Opcode::PROBE)));
}

TEST(Commands, MaskCommandCarriesCountMinusOneAndTheMask) {
  const uint64_t mask = 0x8000000000000001ull;  // channels 1 and 64
  expect_mask(on_the_wire(mask_command(kTask, Opcode::SETTC, 300, mask, 1)), Opcode::SETTC, 300, mask, 1);
  expect_mask(on_the_wire(cop::commands::mask_command(kTask, Opcode::SETBM, 300, mask, 1024)), Opcode::SETBM, 300, mask,
              1024);
}

TEST(Commands, MasksForMoreThan1024WordsAreSplitAtTheCountFieldsWidth) {
  Burst b;
  cop::commands::append_masks(b, kTask, Opcode::SETTC, 1000, 0b1011, 2500);
  const auto ms = decoded(b);
  ASSERT_EQ(ms.size(), 3u);
  expect_mask(ms[0], Opcode::SETTC, 1000, 0b1011, 1024);
  expect_mask(ms[1], Opcode::SETTC, 2024, 0b1011, 1024);
  expect_mask(ms[2], Opcode::SETTC, 3048, 0b1011, 452);
}

TEST(Commands, BarrierIsTheSpmdBurstOfChapterFive) {
  const uint64_t mask = 0b1111;
  const auto ms = decoded(cop::commands::barrier(kTask, 12, mask));
  EXPECT_EQ(opcodes(ms),
            (std::vector<Opcode>{Opcode::LOCK, Opcode::SETTC, Opcode::SETBM, Opcode::BENTRY, Opcode::UNLOCK}));
  ASSERT_EQ(ms.size(), 5u);
  expect_mask(ms[1], Opcode::SETTC, 12, mask, 1);
  expect_mask(ms[2], Opcode::SETBM, 12, mask, 1);
  EXPECT_EQ(ms[3].addr.msgtag, 12u);
  for (size_t i : {0u, 3u, 4u}) expect_from_task(ms[i]);
}

TEST(Commands, ReductionCarriesOneValuePerWordAndTheRootsMask) {
  const std::vector<uint64_t> words = {1, 0xFFFFFFFFFFFFFFFFull, std::bit_cast<uint64_t>(-2.5)};
  const auto ms = decoded(cop::commands::reduction(kTask, Opcode::SUMI64, 40, words, 0b111, 0b100));
  EXPECT_EQ(opcodes(ms), (std::vector<Opcode>{Opcode::LOCK, Opcode::SETTC, Opcode::SETBM, Opcode::SUMI64,
                                              Opcode::SUMI64, Opcode::SUMI64, Opcode::UNLOCK}));
  ASSERT_EQ(ms.size(), 7u);
  expect_mask(ms[1], Opcode::SETTC, 40, 0b111, 3);
  expect_mask(ms[2], Opcode::SETBM, 40, 0b100, 3);
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(ms[3 + i].addr.msgtag, 40 + i);
    EXPECT_EQ(cop::wire::payload(ms[3 + i]), words[i]);
    expect_from_task(ms[3 + i]);
  }
}

TEST(Commands, ReductionWithoutRootsHasNoBroadcastMaskAnd32BitValuesKeepTheLowHalf) {
  const std::vector<uint64_t> words = {0x1234567890ull, 7};
  const auto ms = decoded(cop::commands::reduction(kTask, Opcode::SUMI32, 8, words, 0b11, 0));
  EXPECT_EQ(opcodes(ms),
            (std::vector<Opcode>{Opcode::LOCK, Opcode::SETTC, Opcode::SUMI32, Opcode::SUMI32, Opcode::UNLOCK}));
  ASSERT_EQ(ms.size(), 5u);
  EXPECT_EQ(ms[2].data1, 0x34567890u);
  EXPECT_EQ(ms[3].data1, 7u);
}

TEST(Commands, BroadcastSetsTheReceiversMaskThenSendsEveryWord) {
  const std::vector<uint64_t> words = {10, 20};
  const auto ms = decoded(cop::commands::broadcast(kTask, Opcode::BCAST64, 3000, words, 0b1010));
  EXPECT_EQ(opcodes(ms), (std::vector<Opcode>{Opcode::LOCK, Opcode::SETBM, Opcode::BCAST64, Opcode::BCAST64,
                                              Opcode::UNLOCK}));
  ASSERT_EQ(ms.size(), 5u);
  expect_mask(ms[1], Opcode::SETBM, 3000, 0b1010, 2);
  EXPECT_EQ(ms[2].addr.msgtag, 3000u);
  EXPECT_EQ(ms[3].addr.msgtag, 3001u);
  EXPECT_EQ(cop::wire::payload(ms[2]), 10u);
  EXPECT_EQ(cop::wire::payload(ms[3]), 20u);
}

TEST(Commands, TaskAddressSpaceAccessNamesTheChannelTaskAndOffset) {
  const std::vector<uint64_t> words = {5, 6, 7};
  const TasTarget at{9, 3, 100};  // channel 9, task 3's space, words 100..102
  const auto writes = decoded(cop::commands::tas_access(kTask, Opcode::WSRAM64, false, at, words));
  ASSERT_EQ(writes.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const Message& m = writes[i];
    EXPECT_EQ(m.ins.opcode, Opcode::WSRAM64);
    EXPECT_EQ(m.ins.space, Space::TAS);
    EXPECT_TRUE(m.ins.z);  // CHNO in the address word names the channel
    EXPECT_FALSE(m.ins.m);
    EXPECT_EQ(m.addr.chno, 9);
    EXPECT_EQ(m.addr.ttkno(), 3u);
    EXPECT_EQ(m.addr.tas_offset(), 100 + i);
    EXPECT_EQ(cop::wire::payload(m), words[i]);
    expect_from_task(m);
  }
  // A read carries no data; its words are ignored.
  const auto reads = decoded(cop::commands::tas_access(kTask, Opcode::RSRAM64, false, at, words));
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(reads[2].addr.tas_offset(), 102u);
  EXPECT_EQ(reads[2].data64(), 0u);
}

TEST(Commands, UrgentFloatingRmwIsLockedAndAddsInTheFpUnit) {
  const std::vector<uint64_t> words = {std::bit_cast<uint64_t>(1.5)};
  const auto ms = decoded(cop::commands::tas_access(kTask, Opcode::RMW64, true, TasTarget{2, 1, 0}, words, true, true));
  EXPECT_EQ(opcodes(ms), (std::vector<Opcode>{Opcode::LOCK, Opcode::RMW64, Opcode::UNLOCK}));
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_TRUE(ms[1].ins.m);
  EXPECT_EQ(std::bit_cast<double>(cop::wire::payload(ms[1])), 1.5);
  // A long urgent array is several bursts: the lock opens in the first and closes in the last.
  EXPECT_EQ(opcodes(decoded(cop::commands::tas_access(kTask, Opcode::RMW64, false, TasTarget{2, 1, 0}, words, true,
                                                      false))),
            (std::vector<Opcode>{Opcode::LOCK, Opcode::RMW64}));
}

// An array of 300 elements as libcop sends it: bursts of at most 128 element
// commands, each whole between its own LOCK and UNLOCK, on consecutive words.
TEST(Commands, ReductionBurstsSplitAtPerBurst) {
  std::vector<uint64_t> words(300);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 1000 + i;
  const auto bursts = reduction_bursts(kTask, Opcode::SUMI64, 500, words, 0b1110, 0b0010, 128);
  ASSERT_EQ(bursts.size(), 3u);
  const uint32_t counts[] = {128, 128, 44};
  for (size_t b = 0; b < 3; ++b) {
    const auto m = decoded(bursts[b].commands);
    EXPECT_EQ(bursts[b].tag, 500u + 128u * b);
    EXPECT_EQ(bursts[b].count, counts[b]);
    ASSERT_EQ(m.size(), counts[b] + 4);  // LOCK, SETTC, SETBM, elements, UNLOCK
    EXPECT_EQ(m.front().ins.opcode, Opcode::LOCK);
    EXPECT_EQ(m.back().ins.opcode, Opcode::UNLOCK);
    EXPECT_EQ(m[1].count(), int(counts[b]));
    for (uint32_t i = 0; i < counts[b]; ++i) {
      EXPECT_EQ(m[3 + i].addr.msgtag, bursts[b].tag + i);
      EXPECT_EQ(cop::wire::payload(m[3 + i]), words[128 * b + i]);
    }
  }
}

// Bursts packed into frames: never split, frames within the limit, the words each
// frame covers contiguous, every command once in order.
TEST(Commands, PackKeepsBurstsWhole) {
  std::vector<uint64_t> words(2100, 7);
  const auto bursts = broadcast_bursts(kTask, Opcode::BCAST64, 0, words, 0b110, 128);
  ASSERT_EQ(bursts.size(), 17u);
  const auto frames = pack(bursts, 2000);
  ASSERT_EQ(frames.size(), 2u);  // 15 bursts of 131 commands (1965), then 2
  size_t burst = 0;
  uint32_t next_tag = 0;
  for (const FramedBursts& f : frames) {
    EXPECT_LE(f.commands.size(), 2000u);
    EXPECT_EQ(f.first_tag, next_tag);
    size_t at = 0;
    while (at < f.commands.size()) {
      ASSERT_LT(burst, bursts.size());
      const Burst& b = bursts[burst++].commands;
      ASSERT_LE(at + b.size(), f.commands.size()) << "a burst split across frames";
      for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(f.commands[at + i].addr.msgtag, b[i].addr.msgtag);
      at += b.size();
    }
    next_tag = f.first_tag + f.words;
  }
  EXPECT_EQ(burst, bursts.size());
  EXPECT_EQ(next_tag, 2100u);
  // A port that carries fewer commands (normal mode's 255): one full burst (131
  // commands) a frame, the last short one (55) joining the one before it.
  EXPECT_EQ(pack(bursts, 255).size(), 16u);
}

// pack_into (libcop's frames kept between array calls, issue 36) gives what pack gives,
// whatever the storage held from the call before: more frames, fewer, longer ones, none.
// (A frame's commands not cleared, or the call before's frames left after this call's:
// this fails.)
TEST(Commands, PackIntoKeptStorageIsPack) {
  std::vector<uint64_t> big(3000, 7), small(300, 9);
  const auto many = broadcast_bursts(kTask, Opcode::BCAST64, 0, big, 0b110, 128);
  const auto few = reduction_bursts(kTask, Opcode::SUMI64, 40, small, 0b11, 0b1, 128);
  const auto count = [](const Burst& b) { return 8 * b.size(); };
  std::vector<FramedBursts> kept;
  for (const auto* bursts : {&many, &few, &many, &many, &few}) {
    for (size_t most : {size_t(255), size_t(2000)}) {
      pack_into(kept, *bursts, most, 9000, count);
      const auto want = pack(*bursts, most, 9000, count);
      ASSERT_EQ(kept.size(), want.size());
      for (size_t f = 0; f < want.size(); ++f) {
        EXPECT_EQ(kept[f].first_tag, want[f].first_tag);
        EXPECT_EQ(kept[f].words, want[f].words);
        EXPECT_EQ(kept[f].commands, want[f].commands) << "frame " << f;
      }
    }
  }
  pack_into(kept, {}, 255);
  EXPECT_TRUE(kept.empty());
}

}  // namespace
