// The node's channel decodes a message to a node once per shape (cop/driver/channel.h
// ToNodeMessages): for every entry, whatever came before it, the message it gives is the
// one wire::decode gives, and it refuses exactly what wire::decode refuses.
#include <gtest/gtest.h>

#include <random>

#include "driver/channel.h"

namespace {

using namespace cop;

TEST(ToNodeMessages, EveryEntryGivesWhatDecodingItAloneGives) {
  std::mt19937_64 rng(36);
  // A pool of instruction and address words (valid and not: random opcodes, CHNO above
  // 64, word counts that disagree, Z without a channel), so shapes repeat and alternate.
  std::vector<uint32_t> word0s, word1s;
  for (int i = 0; i < 12; ++i) word0s.push_back(uint32_t(rng()));
  for (wire::Opcode op : {wire::Opcode::ACK, wire::Opcode::NACK, wire::Opcode::BCAST64, wire::Opcode::SUMI32,
                          wire::Opcode::BENTRY, wire::Opcode::RSRAM64}) {
    wire::Words w{};
    wire::Message m = wire::make(op, 5);
    m.ins.ppn = 2;
    word0s.push_back(uint32_t(wire::encode(m, wire::Direction::to_node, w) ? w[0] : 0));
  }
  for (int i = 0; i < 6; ++i) word1s.push_back(uint32_t(rng()));
  for (uint32_t chno : {0u, 3u, 64u, 65u}) word1s.push_back(wire::field::kChno.put(chno) | 100);
  driver::ToNodeMessages messages;
  for (int i = 0; i < 200000; ++i) {
    link::Entry e;
    e.nwords = uint8_t(1 + rng() % 4);
    e.words[0] = word0s[rng() % word0s.size()];
    e.words[1] = (word1s[rng() % word1s.size()] & ~0x7FFFFu) | uint32_t(rng() % 0x80000);
    e.words[2] = uint32_t(rng());
    e.words[3] = uint32_t(rng());
    e.op_id = rng() % 3 ? 0 : rng();
    for (size_t w = e.nwords; w < 4; ++w) e.words[w] = 0;
    const auto alone = link::decode_entry(e, wire::Direction::to_node);
    const wire::Message* m = messages.of(e);
    ASSERT_EQ(m != nullptr, std::holds_alternative<wire::Message>(alone)) << i;
    if (m) {
      ASSERT_EQ(*m, std::get<wire::Message>(alone)) << i;
    }
  }
}

}  // namespace
