// libFuzzer target: the COP message decoder (cop/wire.h), both directions.
//
// Input: byte 0 picks the direction (bit 0) and, when bit 1 is set, smaller
// address limits (bits 2..7); the rest is 0..5 little-endian words (a fifth word
// is always malformed). Invariants: a decoded message passes validate() and
// encodes back to exactly the words it came from (every bit of the layout in
// wire.h is a field); what decodes under smaller limits decodes under the
// defaults; a refusal is one of the wire's own error codes (1..5) with a reason.
#include <cop/wire.h>

#include <cstring>
#include <vector>

#include "check.h"

using namespace cop::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  const Direction dir = (mode & 1) ? Direction::to_node : Direction::to_controller;
  Limits limits;
  if (mode & 2) {
    const int k = mode >> 2;  // 0..63
    limits.channels = 1 + k;
    limits.tasks_per_channel = 1u + uint32_t(k % 16);
    limits.tas_words = 1u + uint32_t(k * 7 % 256);
    limits.gas_words = 1u + uint32_t(k * 97);
    limits.sas_words = uint32_t(limits.channels) + 1u + uint32_t(k % 8);
  }
  std::vector<uint32_t> words((size - 1) / 4);
  if (words.size() > 5) return 0;
  if (!words.empty()) std::memcpy(words.data(), data + 1, words.size() * 4);

  auto r = decode(words, dir, limits);
  if (auto* m = std::get_if<Message>(&r)) {
    FUZZ_CHECK(!validate(*m, dir, limits), "decoded message fails validate: %s", to_string(*m).c_str());
    Words back{};
    const int n = encode(*m, dir, back);
    FUZZ_CHECK(n == int(words.size()), "encode gives %d words, decoded from %zu", n, words.size());
    for (int i = 0; i < n; ++i)
      FUZZ_CHECK(back[size_t(i)] == words[size_t(i)], "word %d re-encodes as %#x, was %#x", i, back[size_t(i)],
                 words[size_t(i)]);
    FUZZ_CHECK(word_count(m->ins.opcode, dir) == n, "word count");
    auto again = decode(std::span<const uint32_t>(back.data(), size_t(n)), dir, limits);
    FUZZ_CHECK(std::holds_alternative<Message>(again) && std::get<Message>(again) == *m, "re-decode differs");
    if (mode & 2) FUZZ_CHECK(std::holds_alternative<Message>(decode(words, dir)), "refused under default limits");
    (void)to_string(*m);
  } else {
    const DecodeError& e = std::get<DecodeError>(r);
    const auto code = static_cast<int>(e.code);
    FUZZ_CHECK(code >= 1 && code <= 5, "decode error code %d is not a wire error", code);
    FUZZ_CHECK(!e.detail.empty(), "decode error without a reason");
    FUZZ_CHECK(!error_name(e.code).empty(), "unnamed error");
  }
  return 0;
}
