// libFuzzer target: the link frame decoder (cop/link.h, cop/link/frame.cpp).
//
// Input: byte 0 is a mode; the rest is a datagram. With mode bit 0 set the
// datagram is first made to pass the outer checks (padded to a header, magic,
// version, payload length and CRC-32 written in) so the fuzzer reaches the entry
// parser instead of stopping at the checksum; with it clear the bytes go in raw.
// Invariants: a decoded frame encodes to bytes (x itself, unless its entries came
// grouped otherwise than the encoder groups them into compact runs, link.h) that
// re-decode equal and encode again to themselves (every byte of the layout is a
// field, the MAC included); encoded
// under a key it verifies under that key only, and not once a byte of it
// changes; a refusal is a checksum or word-count error with a reason; the
// entries' COP messages decode without harm; decoding into a Frame kept from the
// input before (copd's way) gives the same verdict and frame; decode_runs (the node's
// way, runs kept whole) gives the same verdict and reason, its runs' elements are the
// entries, and a run's messages derived from its first (element_message) are what each
// element decodes to alone; encoded_bytes counts what encode writes for the decoded
// messages; append_entries makes each decoded message's entry as
// make_entry does; encode from ElementRuns (copd's reply path: the decoded runs, or
// every entry alone) gives encode's bytes; encode_commands (a task's command frame) gives
// encode's bytes for the decoded messages' entries, and reseal encode's for new ack and session.
#include <cop/link.h>
#include <zlib.h>

#include <cstring>
#include <memory>
#include <vector>

#include "check.h"

using namespace cop;
using link::Frame;

namespace {

bool same(const Frame& a, const Frame& b) {
  if (a.type != b.type || a.channel != b.channel || a.tkno != b.tkno || a.seq != b.seq || a.cycles != b.cycles ||
      a.info != b.info || a.nonce != b.nonce || a.ack != b.ack || a.session != b.session || a.mac != b.mac ||
      a.text != b.text || a.entries.size() != b.entries.size())
    return false;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const auto &x = a.entries[i], &y = b.entries[i];
    if (x.at_cycle != y.at_cycle || x.seq != y.seq || x.index != y.index || x.kind != y.kind ||
        x.nwords != y.nwords || x.op_id != y.op_id)
      return false;
    for (int w = 0; w < x.nwords; ++w)
      if (x.words[size_t(w)] != y.words[size_t(w)]) return false;
  }
  return true;
}

// decode_runs' runs against decode's frame `f`: header, every element, and each run's
// messages to a node.
void check_runs(const link::FrameRuns& runs, const Frame& f) {
  Frame expanded = runs.frame;
  FUZZ_CHECK(runs.frame.entries.empty(), "decode_runs left entries in its frame");
  for (const link::EntryRun& r : runs.runs) {
    FUZZ_CHECK(r.count >= 1, "a run of no elements");
    auto first = link::decode_entry(r.first, wire::Direction::to_node);
    for (size_t k = 0; k < r.count; ++k) {
      const link::Entry e = r.element(k);
      for (int w = 0; w < e.nwords; ++w) FUZZ_CHECK(r.word(k, size_t(w)) == e.words[size_t(w)], "run word");
      auto alone = link::decode_entry(e, wire::Direction::to_node);
      FUZZ_CHECK(first.index() == alone.index(), "element %zu of a run decodes otherwise than its first", k);
      if (auto* m = std::get_if<wire::Message>(&alone))
        FUZZ_CHECK(link::element_message(r, std::get<wire::Message>(first), k) == *m, "element_message %zu", k);
      expanded.entries.push_back(e);
    }
  }
  FUZZ_CHECK(runs.elements == f.entries.size(), "decode_runs counts %zu elements, decode %zu", runs.elements,
             f.entries.size());
  FUZZ_CHECK(same(expanded, f), "decode_runs' elements differ from decode's entries");
}

// encode from ElementRuns gives the bytes encode gives the frame's entries: decode_runs'
// runs as ElementRuns (their data words from one shared array), and each entry alone.
void check_element_runs(const link::FrameRuns& runs, const Frame& f) {
  std::vector<uint8_t> want, got;
  link::encode(f, want);
  Frame header = f;
  header.entries.clear();
  std::vector<link::ElementRun> rs;
  for (const link::EntryRun& r : runs.runs) {
    link::ElementRun e(r.first);
    e.count = r.count;
    e.step = r.step;
    e.index_step = (r.flags & link::kRunIndexStep) != 0;
    e.address_step = (r.flags & link::kRunAddressStep) != 0;
    if (r.count > 1 && r.data_words() > 0) {
      auto d = std::make_shared<std::vector<uint64_t>>(r.count);
      for (size_t k = 0; k < r.count; ++k)
        (*d)[k] = r.word(k, 2) | (r.data_words() > 1 ? uint64_t(r.word(k, 3)) << 32 : 0);
      e.data = d;
    }
    rs.push_back(std::move(e));
  }
  link::encode(header, rs, got);
  FUZZ_CHECK(got == want, "encode from the decoded runs differs from encode");
  rs.clear();
  for (const link::Entry& e : f.entries) rs.emplace_back(e);
  link::encode(header, rs, got);
  FUZZ_CHECK(got == want, "encode from single-element runs differs from encode");
}

// The outer fields the decoder checks first, made right (the layout of cop/link.h).
void make_outer_valid(std::vector<uint8_t>& b) {
  if (b.size() < link::kHeaderBytes) b.resize(link::kHeaderBytes, 0);
  std::memcpy(b.data(), &link::kMagic, 4);
  b[4] = link::kVersion;
  // Payload length at 56, CRC-32 at 60 (over everything, itself as zero), MAC at 64.
  const uint32_t payload = uint32_t(b.size() - link::kHeaderBytes);
  std::memcpy(b.data() + 56, &payload, 4);
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, b.data(), 60);
  static const uint8_t zero[4] = {0, 0, 0, 0};
  c = crc32(c, zero, 4);
  c = crc32(c, b.data() + 64, uInt(b.size() - 64));
  const uint32_t sum = uint32_t(c);
  std::memcpy(b.data() + 60, &sum, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > link::kMaxFrameBytes + 1) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] & 1) make_outer_valid(bytes);

  auto r = link::decode(bytes);
  // decode(bytes, into) into one Frame kept from input to input (as copd decodes every
  // datagram): the same verdict, and the same frame, whatever the Frame held before.
  static Frame kept;
  const auto kept_err = link::decode(bytes, kept);
  FUZZ_CHECK(kept_err.has_value() == std::holds_alternative<link::LinkError>(r), "decode into a kept Frame disagrees");
  // decode_runs (the node's way: runs kept whole): the same verdict and reason, and the
  // runs' elements are decode's entries; a run's elements as messages to a node, derived
  // from its first element's message (element_message), are what each decodes to alone.
  static link::FrameRuns runs;
  const auto runs_err = link::decode_runs(bytes, runs);
  FUZZ_CHECK(runs_err.has_value() == std::holds_alternative<link::LinkError>(r), "decode_runs disagrees");
  if (runs_err) {
    const link::LinkError& e = std::get<link::LinkError>(r);
    FUZZ_CHECK(runs_err->code == e.code && runs_err->detail == e.detail, "decode_runs refuses otherwise: %s / %s",
               runs_err->detail.c_str(), e.detail.c_str());
  } else {
    check_runs(runs, std::get<Frame>(r));
    check_element_runs(runs, std::get<Frame>(r));
  }
  if (auto* f = std::get_if<Frame>(&r)) {
    FUZZ_CHECK(same(kept, *f), "a frame decoded into a kept Frame differs");
    FUZZ_CHECK(f->entries.size() <= 0xFFFF, "entry count");
    std::vector<uint8_t> out;
    const size_t n = link::encode(*f, out);
    // Entries may have come in another grouping than the encoder's (single entries it
    // packs into a compact run, runs split elsewhere): the encoder's own bytes then
    // differ from x, decode to the same frame and encode again to themselves.
    FUZZ_CHECK(n == out.size(), "encode's size %zu is not its output's %zu", n, out.size());
    auto again = link::decode(out);
    FUZZ_CHECK(std::holds_alternative<Frame>(again), "re-decode refused: %s",
               std::get<link::LinkError>(again).detail.c_str());
    FUZZ_CHECK(same(std::get<Frame>(again), *f), "re-decoded frame differs");
    std::vector<uint8_t> out2;
    link::encode(std::get<Frame>(again), out2);
    FUZZ_CHECK(out2 == out, "the encoding of a decoded frame does not come back byte for byte");
    // The MAC: under the key it was made with, and under no other; any byte changed breaks it.
    link::Key key{}, other{};
    for (size_t i = 0; i < key.size(); ++i) {
      key[i] = uint8_t(i * 7 + 1);
      other[i] = uint8_t(i * 7 + 2);
    }
    std::vector<uint8_t> macd;
    link::encode(*f, macd, &key);
    FUZZ_CHECK(link::verify(macd, key), "a frame MACed under a key does not verify under it");
    FUZZ_CHECK(!link::verify(macd, other), "a frame verifies under another key");
    const size_t at = size_t(data[0]) * 131 % macd.size();
    if (at < 60 || at >= 64) {  // a MACed byte or the MAC (not the CRC, whose bytes are not MACed)
      macd[at] ^= 0x01;
      FUZZ_CHECK(!link::verify(macd, key), "a frame with byte %zu changed still verifies", at);
    }
    (void)link::frame_type_name(f->type);
    std::vector<wire::Message> decoded;  // the entries' messages that decode, in order
    for (const link::Entry& e : f->entries) {
      FUZZ_CHECK(e.nwords >= 1 && e.nwords <= wire::kMaxWords, "entry with %d words", e.nwords);
      const auto dir = e.kind == link::EntryKind::command ? wire::Direction::to_controller : wire::Direction::to_node;
      auto m = wire::decode(e.span(), dir);
      if (auto* msg = std::get_if<wire::Message>(&m)) {
        decoded.push_back(*msg);
        decoded.back().op_id = e.op_id;
        // An entry made from the decoded message is the entry's own words again.
        link::Entry again_e = link::make_entry(*msg, dir, e.kind, e.seq, e.index, e.at_cycle);
        FUZZ_CHECK(again_e.nwords == e.nwords && again_e.words == e.words, "make_entry differs");
      }
    }
    // append_entries (a burst's entries, one encoding per instruction) makes what make_entry
    // makes, message by message, whatever messages came in the frame.
    for (auto dir : {wire::Direction::to_controller, wire::Direction::to_node}) {
      std::vector<link::Entry> made;
      link::append_entries(decoded, dir, link::EntryKind::command, 5, 3, made);
      FUZZ_CHECK(made.size() == decoded.size(), "append_entries made %zu entries", made.size());
      for (size_t i = 0; i < decoded.size(); ++i) {
        const link::Entry one = link::make_entry(decoded[i], dir, link::EntryKind::command, 5, uint16_t(3 + i));
        const link::Entry& x = made[i];
        FUZZ_CHECK(x.words == one.words && x.nwords == one.nwords && x.index == one.index && x.seq == one.seq &&
                       x.kind == one.kind && x.op_id == one.op_id && x.at_cycle == one.at_cycle,
                   "append_entries differs from make_entry at message %zu", i);
      }
    }
    // encoded_bytes (counted without making the entries, issue 36) is what encode writes for
    // the same messages as a command frame's entries.
    {
      Frame cmd;
      cmd.type = link::FrameType::command;
      cmd.seq = 1;  // the entries' seq (encode_commands gives them the frame's)
      link::append_entries(decoded, wire::Direction::to_controller, link::EntryKind::command, 1, 0, cmd.entries);
      std::vector<uint8_t> bytes;
      link::encode(cmd, bytes);
      FUZZ_CHECK(link::encoded_bytes(decoded) == bytes.size() - link::kHeaderBytes, "encoded_bytes %zu, encode %zu",
                 link::encoded_bytes(decoded), bytes.size() - link::kHeaderBytes);
      // encode_commands (a task's frame written from its commands in one walk) gives those
      // bytes, and sealed again with other ack and session fields, encode's for them.
      std::vector<uint8_t> direct;
      link::encode_commands(cmd, decoded, direct);
      FUZZ_CHECK(direct == bytes, "encode_commands differs from encode");
      cmd.ack = 7, cmd.session = 9;
      link::encode(cmd, bytes);
      link::reseal(direct, 7, 9);
      FUZZ_CHECK(direct == bytes, "reseal differs from encode");
    }
  } else {
    const link::LinkError& e = std::get<link::LinkError>(r);
    FUZZ_CHECK(e.code == wire::Error::checksum || e.code == wire::Error::word_count, "link error code %d",
               int(e.code));
    FUZZ_CHECK(!e.detail.empty(), "link error without a reason");
  }
  return 0;
}
