// libcop's elements as Data RAM words (cop/lib/elements.h): the whole-array conversions
// (to_words, from_words, issue 36) give exactly what the per-element ones give, for
// every datatype, every length 0..300 and every start, in both directions.
#include <gtest/gtest.h>
#include <pvm3.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "lib/elements.h"

namespace {

using namespace cop::lib;

TEST(Elements, WholeArraysConvertAsElementByElement) {
  std::vector<uint8_t> bytes(8 * 400);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint8_t& b : bytes) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  for (int type : {PVM_INT, PVM_UINT, PVM_FLOAT, PVM_LONG, PVM_ULONG, PVM_DOUBLE}) {
    for (size_t at : {size_t(0), size_t(1), size_t(7), size_t(64)}) {
      for (size_t n = 0; n <= 300; ++n) {
        std::vector<uint64_t> whole(n), each(n);
        to_words(bytes.data(), at, type, whole);
        for (size_t i = 0; i < n; ++i) each[i] = to_word(bytes.data(), at + i, type);
        ASSERT_EQ(whole, each) << "to_words type " << type << " at " << at << " n " << n;
        // Back into two copies of the bytes, the words changed so that every element is written.
        std::vector<uint8_t> a = bytes, b = bytes;
        for (uint64_t& w : whole) w = ~w;
        from_words(a.data(), at, type, whole);
        for (size_t i = 0; i < n; ++i) from_word(b.data(), at + i, type, whole[i]);
        ASSERT_EQ(a, b) << "from_words type " << type << " at " << at << " n " << n;
        if (n > 0) {
          ASSERT_NE(std::memcmp(a.data(), bytes.data(), a.size()), 0) << type << " " << n;
        }
      }
    }
  }
}

// copy_payloads (a frame's results copied out, its width looked up per opcode, issue 36)
// gives wire::payload of each message: runs of 32- and 64-bit opcodes one after another
// and alternating, every value's high half set (a 32-bit result taken 64 bits wide, or a
// width kept from the opcode before: this fails).
TEST(Elements, PayloadsCopyAsWirePayloadReadsThem) {
  using cop::wire::Opcode;
  const Opcode ops[] = {Opcode::SUMI32, Opcode::SUMI64, Opcode::BCAST32, Opcode::BCAST64, Opcode::SUMF};
  std::vector<cop::wire::Message> got;
  uint64_t x = 77;
  for (size_t i = 0; i < 600; ++i) {
    const Opcode op = i < 200 ? ops[(i / 50) % 5] : ops[(x >> 33) % 5];
    cop::wire::Message m = cop::wire::make(op, 1, cop::wire::Space::GAS, uint32_t(i));
    m.set_data64((x = x * 6364136223846793005ull + 1442695040888963407ull) | 0x8000000100000000ull);
    got.push_back(m);
  }
  for (size_t n : {size_t(0), size_t(1), size_t(199), size_t(600)}) {
    std::vector<uint64_t> out(n, 0x5A5A);
    copy_payloads(got, out);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], cop::wire::payload(got[i])) << "message " << i << " of " << n;
  }
}

}  // namespace
