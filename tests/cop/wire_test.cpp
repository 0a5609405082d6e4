// cop/wire: round trips of every opcode and every rejection decode promises.
#include <cop/link.h>
#include <cop/wire.h>
#include <gtest/gtest.h>

#include "link/fault.h"

#include <vector>

using namespace cop::wire;

namespace {

const Opcode kAll[] = {
    Opcode::BENTRY, Opcode::LOCK,    Opcode::UNLOCK,  Opcode::XMIT,    Opcode::PROBE,   Opcode::ACK,
    Opcode::NACK,   Opcode::BCAST32, Opcode::BCAST64, Opcode::SETBM,   Opcode::SETTC,   Opcode::SUMI32,
    Opcode::MAXI32, Opcode::MINI32,  Opcode::OR32,    Opcode::AND32,   Opcode::EXOR32,  Opcode::RSRAM32,
    Opcode::WSRAM32, Opcode::RMW32,  Opcode::SUMI64,  Opcode::MAXI64,  Opcode::MINI64,  Opcode::SUMF,
    Opcode::MAXF,   Opcode::MINF,    Opcode::OR64,    Opcode::AND64,   Opcode::EXOR64,  Opcode::RSRAM64,
    Opcode::WSRAM64, Opcode::RMW64,
};

Message sample(Opcode op, Direction dir) {
  Message m = make(op, 37, Space::GAS, 1234);
  m.ins.ppn = 3;
  m.ins.supervisor = true;
  m.addr.cntno = 5;
  m.addr.chno = 17;
  const int n = word_count(op, dir);
  if (n >= 3) m.data1 = 0xDEADBEEF;
  if (n >= 4) m.data2 = 0x01234567;
  if (n < 2) m.addr = Address{};
  if (op == Opcode::SETTC || op == Opcode::SETBM) m.set_count(16);
  return m;
}

Error decode_error(std::span<const uint32_t> w, Direction dir, const Limits& l = {}) {
  auto r = decode(w, dir, l);
  if (std::holds_alternative<Message>(r)) return Error::none;
  return std::get<DecodeError>(r).code;
}

}  // namespace

TEST(Wire, TableOneOpcodesHaveTheThesisBitPatterns) {
  EXPECT_EQ(static_cast<int>(Opcode::RSRAM32), 0b1011100);
  EXPECT_EQ(static_cast<int>(Opcode::SUMF), 0b1110100);
  EXPECT_EQ(static_cast<int>(Opcode::SETTC), 0b0111111);
  EXPECT_EQ(static_cast<int>(Opcode::BCAST64), 0b0111100);
  for (Opcode op : kAll) EXPECT_EQ(opcode_from_name(opcode_name(op)), op);
  EXPECT_TRUE(is_64bit(Opcode::BCAST64));
  EXPECT_FALSE(is_64bit(Opcode::SUMI32));
  EXPECT_TRUE(is_64bit(Opcode::SUMF));
  EXPECT_TRUE(is_floating(Opcode::MINF));
  EXPECT_FALSE(is_floating(Opcode::MINI64));
}

TEST(Wire, EveryOpcodeRoundTripsInEachDirectionItTravels) {
  int round_trips = 0;
  for (Direction dir : {Direction::to_controller, Direction::to_node}) {
    for (Opcode op : kAll) {
      if (word_count(op, dir) == 0) continue;
      Message m = sample(op, dir);
      if (dir == Direction::to_controller && (op == Opcode::RSRAM64)) m.ins.m = true;
      Words w{};
      const int n = encode(m, dir, w);
      ASSERT_EQ(n, word_count(op, dir)) << opcode_name(op);
      auto r = decode(std::span<const uint32_t>(w.data(), size_t(n)), dir);
      ASSERT_TRUE(std::holds_alternative<Message>(r))
          << opcode_name(op) << ": " << std::get<DecodeError>(r).detail;
      EXPECT_EQ(std::get<Message>(r), m) << to_string(m);
      ++round_trips;
    }
  }
  EXPECT_GT(round_trips, 50);
}

TEST(Wire, FieldsLandInTheDocumentedBits) {
  Message m = make(Opcode::SUMI64, 0x2AB, Space::GAS, 0x12345);
  m.ins.supervisor = true;
  m.ins.ppn = 0xA;
  m.addr.cntno = 0x21;
  m.addr.chno = 64;
  Words w{};
  ASSERT_EQ(encode(m, Direction::to_controller, w), 4);
  EXPECT_EQ(w[0] >> 31, 1u);                  // U/S
  EXPECT_EQ((w[0] >> 23) & 0x7F, 0b1110000u);  // OPCODE
  EXPECT_EQ((w[0] >> 19) & 3, 3u);             // WC = 4 words
  EXPECT_EQ((w[0] >> 17) & 3, 1u);             // SPACE = GAS
  EXPECT_EQ((w[0] >> 12) & 0xF, 0xAu);         // PPN
  EXPECT_EQ(w[0] & 0x3FF, 0x2ABu);             // TKNO
  EXPECT_EQ(w[1] >> 26, 0x21u);                // CNTNO
  EXPECT_EQ((w[1] >> 19) & 0x7F, 64u);         // CHNO
  EXPECT_EQ(w[1] & 0x7FFFF, 0x12345u);         // MSGTAG
  EXPECT_EQ(Address::tas_tag(3, 7), (3u << 10) | 7u);
  // The whole words, computed by hand from the layout in wire.h (U/S, OPCODE
  // 1110000, WC 3, SPACE 1, PPN 1010, TKNO 1010101011; CNTNO 100001, CHNO
  // 1000000, MSGTAG 0x12345).
  EXPECT_EQ(w[0], 0xB81AA2ABu);
  EXPECT_EQ(w[1], 0x86012345u);
}

// The accessors for undecoded words read back exactly what encode wrote.
TEST(Wire, RawFieldAccessorsReadWhatEncodeWrote) {
  Message m = make(Opcode::RSRAM64, 0x155, Space::TAS, Address::tas_tag(0x1F0, 0x3C1));
  m.ins.ppn = 0x9;
  m.addr.chno = 33;
  Words w{};
  ASSERT_EQ(encode(m, Direction::to_controller, w), 2);
  EXPECT_EQ(instruction_opcode(w[0]), 0b1111100u);
  EXPECT_EQ(instruction_tkno(w[0]), 0x155u);
  EXPECT_EQ(instruction_ppn(w[0]), 0x9u);
  EXPECT_EQ(address_chno(w[1]), 33u);
  EXPECT_EQ(address_msgtag(w[1]), (0x1F0u << 10) | 0x3C1u);
  // By hand: OPCODE 1111100 at 29..23, WC 1 at 20..19, PPN 1001, TKNO 0x155.
  EXPECT_EQ(w[0], (0b1111100u << 23) | (1u << 19) | (0x9u << 12) | 0x155u);
  EXPECT_EQ(instruction_opcode(0xFFFFFFFFu), 0x7Fu);
  EXPECT_EQ(instruction_tkno(0xFFFFFFFFu), kMaxTkno);
  EXPECT_EQ(instruction_ppn(0xFFFFFFFFu), kMaxPpn);
  EXPECT_EQ(address_chno(0xFFFFFFFFu), 0x7Fu);
  EXPECT_EQ(address_msgtag(0xFFFFFFFFu), kMaxMsgtag);
}

// The fields of each word are disjoint and cover it; put/get round trip at the widths.
TEST(Wire, FieldsTileTheirWordsAndRoundTrip) {
  const Field instruction[] = {field::kSupervisor, field::kX, field::kOpcode, field::kM, field::kZ, field::kWordCount,
                               field::kSpace, field::kMsel, field::kPpn, field::kReserved, field::kTkno};
  const Field address[] = {field::kCntno, field::kChno, field::kMsgtag};
  for (auto fields : {std::span<const Field>(instruction), std::span<const Field>(address)}) {
    uint32_t covered = 0;
    for (const Field& f : fields) {
      EXPECT_EQ(covered & f.put(~0u), 0u) << "field " << f.hi << ".." << f.lo << " overlaps";
      covered |= f.put(~0u);
      EXPECT_EQ(f.get(f.put(f.mask())), f.mask());
      EXPECT_EQ(f.put(f.mask() + 1), 0u) << "a value wider than the field spills over";
      EXPECT_EQ(f.get(f.put(f.mask() / 2 + 1)), f.mask() / 2 + 1);
    }
    EXPECT_EQ(covered, 0xFFFFFFFFu);
  }
  EXPECT_EQ(field::kMsgtag.mask(), kMaxMsgtag);
  EXPECT_EQ(field::kTkno.mask(), kMaxTkno);
  EXPECT_EQ(field::kPpn.mask(), kMaxPpn);
  EXPECT_EQ(field::kCntno.mask(), kMaxCntno);
  EXPECT_EQ(field::kTtkno.mask(), kMaxTtkno);
  EXPECT_EQ(field::kTasOffset.mask(), kMaxTasOffset);
}

TEST(Wire, TaskAddressSpaceTagSplitsIntoTaskAndOffset) {
  for (uint32_t task : {0u, 1u, 0x155u, kMaxTtkno})
    for (uint32_t offset : {0u, 7u, 0x2AAu, kMaxTasOffset}) {
      const Address a{0, 0, Address::tas_tag(task, offset)};
      EXPECT_EQ(a.ttkno(), task);
      EXPECT_EQ(a.tas_offset(), offset);
    }
  EXPECT_EQ(Address::tas_tag(kMaxTtkno, kMaxTasOffset), kMaxMsgtag);
  EXPECT_EQ(Address::tas_tag(0x101, 0x2), 0x40402u);
}

TEST(Wire, NackDataCarriesTheErrorCodeAndTheRefusedOpcode) {
  // By hand: code 6 in bits 7..0, RSRAM64 (1111100) in bits 14..8.
  EXPECT_EQ(nack_data(Error::protection, Opcode::RSRAM64), 0x7C06u);
  EXPECT_EQ(nack_data(Error::unknown_opcode, 0u), 1u);
  EXPECT_EQ(nack_data(Error::word_count, 0xFFu), 0x7F02u) << "only the 7 opcode bits are kept";
  for (int code = 0; code <= int(Error::task_ended); ++code)
    for (Opcode op : kAll) {
      const uint32_t d = nack_data(Error(code), op);
      EXPECT_EQ(nack_error(d), Error(code));
      EXPECT_EQ(nack_opcode(d), uint32_t(op));
    }
  // On the wire: a NACK message to a node keeps both through encode and decode.
  Message nack = make(Opcode::NACK, 5, Space::GAS, 77);
  nack.data1 = nack_data(Error::mask_in_use, Opcode::SETTC);
  Words w{};
  const int n = encode(nack, Direction::to_node, w);
  auto r = decode(std::span<const uint32_t>(w.data(), size_t(n)), Direction::to_node);
  ASSERT_TRUE(std::holds_alternative<Message>(r));
  EXPECT_EQ(nack_error(std::get<Message>(r).data1), Error::mask_in_use);
  EXPECT_EQ(nack_opcode(std::get<Message>(r).data1), uint32_t(Opcode::SETTC));
}

// A node's fault salt.
TEST(Wire, NodeFaultSalt) {
  EXPECT_EQ(cop::link::node_fault_salt(3, 5), 0x30005u);
  EXPECT_NE(cop::link::node_fault_salt(1, 2), cop::link::node_fault_salt(2, 1));
}

TEST(Wire, RejectsUnknownOpcode) {
  Words w{};
  Message m = make(Opcode::LOCK);
  encode(m, Direction::to_controller, w);
  w[0] = (w[0] & ~(0x7Fu << 23)) | (0b1001111u << 23);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 1), Direction::to_controller), Error::unknown_opcode);
  // An opcode that exists but never travels this way is refused too.
  Message wr = make(Opcode::WSRAM32, 1, Space::TAS, 0);
  encode(wr, Direction::to_controller, w);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 3), Direction::to_node), Error::unknown_opcode);
}

TEST(Wire, RejectsWrongWordCount) {
  Words w{};
  Message m = make(Opcode::SUMF, 1, Space::GAS, 4);
  encode(m, Direction::to_controller, w);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 3), Direction::to_controller), Error::word_count);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(), Direction::to_controller), Error::word_count);
  std::vector<uint32_t> five(5, 0);
  EXPECT_EQ(decode_error(five, Direction::to_controller), Error::word_count);
  // WC field that disagrees with the opcode, even when the length matches it.
  w[0] &= ~(3u << 19);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 4), Direction::to_controller), Error::word_count);
}

TEST(Wire, RejectsReservedBits) {
  Words w{};
  Message m = make(Opcode::BENTRY, 1, Space::GAS, 4);
  encode(m, Direction::to_controller, w);
  Words bad = w;
  bad[0] |= 1u << 10;
  EXPECT_EQ(decode_error(std::span<const uint32_t>(bad.data(), 2), Direction::to_controller), Error::reserved_bits);
  bad = w;
  bad[0] |= 3u << 17;  // SPACE = 3
  EXPECT_EQ(decode_error(std::span<const uint32_t>(bad.data(), 2), Direction::to_controller), Error::reserved_bits);
  bad = w;
  bad[0] |= 1u << 22;  // M on BENTRY
  EXPECT_EQ(decode_error(std::span<const uint32_t>(bad.data(), 2), Direction::to_controller), Error::reserved_bits);
}

TEST(Wire, RejectsOutOfRangeChannel) {
  Words w{};
  Message m = make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(2, 3));
  m.ins.z = true;
  m.addr.chno = 65;
  encode(m, Direction::to_controller, w);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 2), Direction::to_controller), Error::channel_range);
  m.addr.chno = 0;  // Z with no channel
  encode(m, Direction::to_controller, w);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 2), Direction::to_controller), Error::channel_range);
  m.addr.chno = 9;  // beyond an 8-channel controller
  Limits small;
  small.channels = 8;
  encode(m, Direction::to_controller, w);
  EXPECT_EQ(decode_error(std::span<const uint32_t>(w.data(), 2), Direction::to_controller, small), Error::channel_range);
}

TEST(Wire, RejectsOutOfRangeAddress) {
  Limits l;
  l.gas_words = 100;
  l.tas_words = 16;
  l.tasks_per_channel = 4;
  l.sas_words = 70;
  Words w{};
  auto check = [&](Message m) {
    const int n = encode(m, Direction::to_controller, w);
    return decode_error(std::span<const uint32_t>(w.data(), size_t(n)), Direction::to_controller, l);
  };
  EXPECT_EQ(check(make(Opcode::SUMI32, 1, Space::GAS, 99)), Error::none);
  EXPECT_EQ(check(make(Opcode::SUMI32, 1, Space::GAS, 100)), Error::address_range);
  Message settc = make(Opcode::SETTC, 0, Space::GAS, 90);
  settc.set_count(10);
  settc.set_data64(1);
  EXPECT_EQ(check(settc), Error::none);
  settc.set_count(11);  // runs past the end of the GAS
  EXPECT_EQ(check(settc), Error::address_range);
  EXPECT_EQ(check(make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(3, 15))), Error::none);
  EXPECT_EQ(check(make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(4, 0))), Error::address_range);
  EXPECT_EQ(check(make(Opcode::RSRAM32, 1, Space::TAS, Address::tas_tag(0, 16))), Error::address_range);
  EXPECT_EQ(check(make(Opcode::RSRAM32, 1, Space::SAS, 70)), Error::address_range);
  EXPECT_EQ(check(make(Opcode::BENTRY, 1, Space::TAS, 0)), Error::address_range);  // collectives live in GAS
}

TEST(Wire, OpcodeLookupKnowsExactlyTableOnesOpcodes) {
  // is_opcode/word_count use a table indexed by the 7-bit value: every value is
  // an opcode exactly when it is one of kAll, and only those have word counts.
  int found = 0;
  for (uint32_t v = 0; v < 256; ++v) {
    bool listed = false;
    for (Opcode op : kAll) listed |= static_cast<uint32_t>(op) == v;
    EXPECT_EQ(is_opcode(v), listed) << v;
    if (v < 128 && !listed) {
      EXPECT_EQ(word_count(static_cast<Opcode>(v), Direction::to_controller), 0) << v;
      EXPECT_EQ(opcode_name(static_cast<Opcode>(v)), "?") << v;
    }
    found += listed;
  }
  EXPECT_EQ(found, int(std::size(kAll)));
  EXPECT_EQ(word_count(Opcode::SUMF, Direction::to_controller), 4);
  EXPECT_EQ(word_count(Opcode::SETTC, Direction::to_node), 0);
}

TEST(Wire, EveryErrorCodeHasItsOwnName) {
  std::vector<std::string_view> names;
  for (int e = 0; e <= static_cast<int>(Error::task_ended); ++e) {
    const std::string_view n = error_name(static_cast<Error>(e));
    EXPECT_NE(n, "unknown error") << e;
    for (std::string_view other : names) EXPECT_NE(n, other) << e;
    names.push_back(n);
  }
  EXPECT_EQ(static_cast<int>(Error::task_ended), 19);
}
