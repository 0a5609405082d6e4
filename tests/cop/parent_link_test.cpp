// The entries between a level-1 and a level-2 copd (controller/parent_link.h):
// each carries the controller core's Hop beside the words, and what goes in
// comes out again after the link's encoding; an entry whose hop kind is not
// one of the core's is refused, not guessed.
#include "controller/parent_link.h"

#include <gtest/gtest.h>

#include <cop/link.h>

#include <variant>
#include <vector>

using namespace cop;
using namespace cop::controller;

namespace {

wire::Limits limits() {
  Config c;
  c.channels = 2;
  wire::Limits l = c.limits();
  l.channels = wire::kChannels;
  return l;
}

// Through a frame's bytes, as the link carries it.
link::Entry across_the_link(const link::Entry& e) {
  link::Frame f;
  f.type = link::FrameType::reply;
  f.entries.push_back(e);
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  auto decoded = link::decode(bytes);
  EXPECT_TRUE(std::holds_alternative<link::Frame>(decoded));
  return std::get<link::Frame>(decoded).entries.at(0);
}

}  // namespace

TEST(ParentLink, EveryHopKindAndOriginSurvivesTheLink) {
  wire::Message contribution = wire::make(wire::Opcode::BENTRY, 0, wire::Space::GAS, 77);
  contribution.ins.x = true;
  contribution.addr.cntno = 5;
  wire::Message ack = wire::make(wire::Opcode::ACK, 1023);
  wire::Message read = wire::make(wire::Opcode::RSRAM64, 17, wire::Space::TAS, 3);
  read.ins.x = read.ins.z = true;
  read.addr.cntno = 9;
  read.addr.chno = 64;
  wire::Message result = wire::make(wire::Opcode::BCAST64, 2, wire::Space::GAS, 300);
  result.set_data64(0xC0FFEE);
  const struct {
    Hop hop;
    wire::Message msg;
  } cases[] = {
      {Hop{Hop::command, Sender{false, 0, 5, 0}}, contribution},
      {Hop{Hop::answer, Sender{true, 1023, 63, 64}}, ack},
      {Hop{Hop::command, Sender{false, 17, 9, 33}}, read},
      {Hop{Hop::none, {}}, result},
      {Hop{Hop::release, {}}, result},
  };
  for (const auto& c : cases) {
    const Delivery d{0, c.msg, 12345, false, true, c.hop};
    const auto back = level_delivery(across_the_link(level_entry(d)), true, limits());
    ASSERT_TRUE(back.has_value()) << int(c.hop.kind);
    EXPECT_EQ(back->hop.kind, c.hop.kind);
    EXPECT_EQ(back->hop.origin.supervisor, c.hop.origin.supervisor);
    EXPECT_EQ(back->hop.origin.tkno, c.hop.origin.tkno);
    EXPECT_EQ(back->hop.origin.cntno, c.hop.origin.cntno);
    EXPECT_EQ(back->hop.origin.chno, c.hop.origin.chno);
    EXPECT_EQ(back->at_cycle, 12345u);
    EXPECT_TRUE(back->to_parent);
    EXPECT_EQ(back->msg.ins.opcode, c.msg.ins.opcode);
    EXPECT_EQ(back->msg.ins.x, c.msg.ins.x);
    EXPECT_EQ(back->msg.addr.msgtag, c.msg.addr.msgtag);
    EXPECT_EQ(back->msg.addr.cntno, c.msg.addr.cntno);
    EXPECT_EQ(back->msg.data64(), c.msg.data64());
    // ACK and NACK are the interface's (link level); everything else is not.
    EXPECT_EQ(back->link_level, c.msg.ins.opcode == wire::Opcode::ACK);
  }
}

TEST(ParentLink, AnUnknownHopKindOrUndecodableWordsAreRefused) {
  const Delivery d{0, wire::make(wire::Opcode::ACK, 1), 0, true, false, Hop{Hop::answer, Sender{false, 1, 0, 1}}};
  link::Entry e = level_entry(d);
  e.seq = (e.seq & 0x00FFFFFFu) | (9u << 24);  // no such hop kind
  EXPECT_FALSE(level_delivery(e, false, limits()).has_value());
  link::Entry bad = level_entry(d);
  bad.nwords = 0;  // no instruction word
  EXPECT_FALSE(level_delivery(bad, false, limits()).has_value());
}
