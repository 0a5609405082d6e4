// The link's compact runs (cop/link.h, version 4) and operation identities (version 5): a burst's element commands,
// their ACKs and the words a broadcast gives travel as one header and then the
// data words, decode() gives back exactly the entries encode() was given, and a
// compact entry encode() never makes is refused as a malformed frame.
#include <cop/link.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "lib/commands.h"

namespace {

using namespace cop;
using link::Entry;
using link::EntryKind;
using link::Frame;
using wire::Direction;
using wire::Opcode;

constexpr size_t kCountAt = 10;  // the header's entry count (link.h)

Frame command_frame(const commands::Burst& cmds) {
  Frame f;
  f.type = link::FrameType::command;
  f.channel = 2;
  f.tkno = 1;
  f.seq = 7;
  for (size_t i = 0; i < cmds.size(); ++i)
    f.entries.push_back(link::make_entry(cmds[i], Direction::to_controller, EntryKind::command, f.seq, uint16_t(i)));
  return f;
}

void expect_same(const Frame& a, const Frame& b) {
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const Entry &x = a.entries[i], &y = b.entries[i];
    EXPECT_EQ(x.at_cycle, y.at_cycle) << i;
    EXPECT_EQ(x.seq, y.seq) << i;
    EXPECT_EQ(x.index, y.index) << i;
    EXPECT_EQ(x.kind, y.kind) << i;
    EXPECT_EQ(x.op_id, y.op_id) << i;
    ASSERT_EQ(x.nwords, y.nwords) << i;
    for (int w = 0; w < x.nwords; ++w) EXPECT_EQ(x.words[size_t(w)], y.words[size_t(w)]) << i << " word " << w;
  }
}

uint16_t wire_entries(const std::vector<uint8_t>& bytes) {
  uint16_t n;
  std::memcpy(&n, bytes.data() + kCountAt, 2);
  return n;
}

// The CRC written again after a test changed a byte (the refusal must be the run's, not the checksum's).
void fix_crc(std::vector<uint8_t>& b) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, b.data(), 60);
  static const uint8_t zero[4] = {0, 0, 0, 0};
  c = crc32(c, zero, 4);
  c = crc32(c, b.data() + 64, uInt(b.size() - 64));
  const uint32_t sum = uint32_t(c);
  std::memcpy(b.data() + 60, &sum, 4);
}

// decode_runs (link.h) on the same bytes: the same verdict and reason, and when decoded,
// runs whose elements are decode()'s entries one for one, with the same header; a run's
// elements as messages to a node (element_message, one decode per run) are what
// decoding each element alone gives.
void expect_runs_agree(const std::vector<uint8_t>& bytes) {
  static link::FrameRuns runs;  // kept from call to call, as the node's channel keeps it
  const auto bad = link::decode_runs(bytes, runs);
  const auto whole = link::decode(bytes);
  ASSERT_EQ(bad.has_value(), std::holds_alternative<link::LinkError>(whole));
  if (bad) {
    EXPECT_EQ(bad->code, std::get<link::LinkError>(whole).code);
    EXPECT_EQ(bad->detail, std::get<link::LinkError>(whole).detail);
    return;
  }
  const Frame& f = std::get<Frame>(whole);
  EXPECT_EQ(runs.frame.type, f.type);
  EXPECT_EQ(runs.frame.seq, f.seq);
  EXPECT_EQ(runs.frame.text, f.text);
  EXPECT_TRUE(runs.frame.entries.empty());
  Frame expanded;
  for (const link::EntryRun& r : runs.runs) {
    std::optional<wire::Message> first;
    if (auto m = link::decode_entry(r.first, Direction::to_node); std::holds_alternative<wire::Message>(m))
      first = std::get<wire::Message>(m);
    for (size_t k = 0; k < r.count; ++k) {
      const Entry e = r.element(k);
      for (int w = 0; w < e.nwords; ++w) EXPECT_EQ(r.word(k, size_t(w)), e.words[size_t(w)]);
      const auto alone = link::decode_entry(e, Direction::to_node);
      ASSERT_EQ(first.has_value(), std::holds_alternative<wire::Message>(alone)) << k;
      if (first) {
        EXPECT_EQ(link::element_message(r, *first, k), std::get<wire::Message>(alone)) << k;
      }
      expanded.entries.push_back(e);
    }
  }
  EXPECT_EQ(runs.elements, f.entries.size());
  expect_same(expanded, f);
}

Frame decoded(const std::vector<uint8_t>& bytes) {
  auto r = link::decode(bytes);
  if (auto* e = std::get_if<link::LinkError>(&r)) ADD_FAILURE() << e->detail;
  expect_runs_agree(bytes);
  return std::holds_alternative<Frame>(r) ? std::get<Frame>(r) : Frame{};
}

TEST(LinkCompact, ReductionBurstsTravelAsRunsAndDecodeToTheSameCommands) {
  for (size_t n : {size_t(1), size_t(127), size_t(128), size_t(129), size_t(1900)}) {
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) words[i] = 0x100000000ull * i + 3 * i + 1;
    const commands::Sender s{3, 1};
    commands::Burst all;
    for (const auto& b : commands::reduction_bursts(s, Opcode::SUMI64, 1000, words, 0b1111, 0b1, 128))
      all.insert(all.end(), b.commands.begin(), b.commands.end());
    const Frame f = command_frame(all);
    std::vector<uint8_t> bytes;
    link::encode(f, bytes);
    // A burst is LOCK, SETTC, SETBM, one run of its elements (its header, then each
    // element's two data words), UNLOCK.
    const size_t bursts = (n + 127) / 128;
    EXPECT_LE(wire_entries(bytes), 5 * bursts) << n;
    EXPECT_EQ(link::wire_entries(bytes), wire_entries(bytes)) << n;
    EXPECT_EQ(link::wire_entries(std::span<const uint8_t>(bytes).first(link::kHeaderBytes - 1)), 0u) << n;
    EXPECT_LT(bytes.size(), link::kHeaderBytes + 8 * n + 160 * bursts) << n;
    expect_same(decoded(bytes), f);
  }
}

TEST(LinkCompact, AnswersOfABurstAreOneEntryAndAnErrorNamesItsElement) {
  Frame f;
  f.type = link::FrameType::reply;
  const wire::Message ack = wire::make(Opcode::ACK, 5);
  for (int i = 0; i < 300; ++i)
    f.entries.push_back(link::make_entry(ack, Direction::to_node, EntryKind::answer, 9, uint16_t(i), 1000 + 40 * i));
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  EXPECT_EQ(wire_entries(bytes), 1);
  expect_same(decoded(bytes), f);
  // A NACK for element 123: the runs around it, the NACK its own entry with its index.
  wire::Message nack = wire::make(Opcode::NACK, 5);
  nack.data1 = wire::nack_data(wire::Error::mask_in_use, uint32_t(Opcode::SUMI64));
  f.entries[123] = link::make_entry(nack, Direction::to_node, EntryKind::answer, 9, 123, 1000 + 40 * 123);
  link::encode(f, bytes);
  EXPECT_EQ(wire_entries(bytes), 3);
  const Frame d = decoded(bytes);
  expect_same(d, f);
  auto m = wire::decode(d.entries[123].span(), Direction::to_node);
  ASSERT_TRUE(std::holds_alternative<wire::Message>(m));
  EXPECT_EQ(std::get<wire::Message>(m).ins.opcode, Opcode::NACK);
  EXPECT_EQ(d.entries[123].index, 123);
}

TEST(LinkCompact, BroadcastWordsAndUnevenStampsRoundTrip) {
  Frame f;
  f.type = link::FrameType::reply;
  for (int i = 0; i < 2000; ++i) {
    wire::Message m = wire::make(Opcode::BCAST64, 0, wire::Space::GAS, uint32_t(65536 - 2000 + i));
    m.addr.chno = 3;
    m.ins.ppn = 1;
    wire::set_payload(m, uint64_t(i) * 0x9E3779B97F4A7C15ull);
    // The stamps in even steps but for a few (a run ends there, nothing is lost).
    const uint64_t at = 5000 + 70ull * uint64_t(i) + (i % 500 == 17 ? 3 : 0);
    f.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, at));
  }
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  EXPECT_LT(bytes.size(), link::kHeaderBytes + 9 * 2000);  // 8 bytes a word and a few headers
  expect_same(decoded(bytes), f);
}

// libcop's array calls (direct access) pack whole bursts by their encoded bytes
// (lib/channel.cpp frames_of): a 16 KB array is one frame, within the frame limit and
// kMaxElements; a longer one several, none over; each frame's bursts whole.
TEST(LinkCompact, ArraysPackIntoFramesByTheirEncodedBytes) {
  const commands::Sender s{2, 0};
  for (size_t n : {size_t(2048), size_t(7000), size_t(20000)}) {
    std::vector<uint64_t> words(n, 0x0123456789ABCDEFull);
    const auto bursts = commands::broadcast_bursts(s, Opcode::BCAST64, 0, words, 0b1110, 128);
    const size_t budget = link::kMaxFrameBytes - link::kHeaderBytes - 4096;
    const auto frames = commands::pack(bursts, size_t(link::kMaxElements), budget,
                                       [](const commands::Burst& b) { return link::encoded_bytes(b); });
    if (n == 2048) {
      EXPECT_EQ(frames.size(), 1u);
    }
    size_t elements = 0;
    for (const auto& fr : frames) {
      const Frame f = command_frame(fr.commands);
      std::vector<uint8_t> bytes;
      link::encode(f, bytes);
      EXPECT_LE(bytes.size(), link::kMaxFrameBytes) << n;
      EXPECT_EQ(link::encoded_bytes(fr.commands), bytes.size() - link::kHeaderBytes) << n;
      EXPECT_LE(fr.commands.size(), size_t(link::kMaxElements)) << n;
      EXPECT_EQ(fr.commands.front().ins.opcode, Opcode::LOCK);
      EXPECT_EQ(fr.commands.back().ins.opcode, Opcode::UNLOCK);
      expect_same(decoded(bytes), f);
      elements += fr.words;
    }
    EXPECT_EQ(elements, n);
  }
}

// A frame of one compact run of `n` elements (a SUMI64 on consecutive words), its
// run header at `run` in the bytes.
std::vector<uint8_t> one_run(int n, size_t& run, uint32_t first_tag = 10) {
  const commands::Sender s{1, 0};
  commands::Burst b;
  std::vector<uint64_t> words(size_t(n), 42);
  commands::append_elements(b, s, Opcode::SUMI64, first_tag, words);
  std::vector<uint8_t> bytes;
  link::encode(command_frame(b), bytes);
  run = link::kHeaderBytes + link::kEntryHeaderBytes;
  return bytes;
}

void expect_refused(std::vector<uint8_t> bytes, const char* what) {
  fix_crc(bytes);
  expect_runs_agree(bytes);
  auto r = link::decode(bytes);
  ASSERT_TRUE(std::holds_alternative<link::LinkError>(r)) << what;
  const auto& e = std::get<link::LinkError>(r);
  EXPECT_EQ(e.code, wire::Error::word_count) << what;
  EXPECT_FALSE(e.detail.empty()) << what;
}

TEST(LinkCompact, MalformedRunsAreRefused) {
  size_t run = 0;
  const std::vector<uint8_t> good = one_run(16, run);
  ASSERT_EQ(wire_entries(good), 1);
  ASSERT_EQ(good[link::kHeaderBytes + 14], 0x80);  // a compact command entry
  decoded(good);
  {
    auto b = good;
    b[run] = 0, b[run + 1] = 0;
    expect_refused(b, "count 0");
  }
  {
    auto b = good;
    b[run] = 1, b[run + 1] = 0;
    expect_refused(b, "count 1");
  }
  {
    auto b = good;
    b[run] = 17;  // one element more than the words that follow
    expect_refused(b, "count beyond the frame");
  }
  {
    auto b = good;
    b[run] = 0xFF, b[run + 1] = 0xFF;
    expect_refused(b, "count beyond kMaxEntries");
  }
  {
    auto b = good;
    b[run + 2] |= 4;
    expect_refused(b, "unknown flag");
  }
  {
    auto b = good;
    b[run + 3] = 1;
    expect_refused(b, "reserved byte");
  }
  {
    // The run's first MSGTAG near the top: the 16th element's would overflow into CHNO.
    size_t at = 0;
    auto b = one_run(16, at, 0x7FFF0);
    decoded(b);  // 0x7FFF0 + 15 = 0x7FFFF: the last MSGTAG, fine
    b[at + 8 + 4] = 0xF8;  // address word's low byte: MSGTAG 0x7FFF8, +15 overflows
    expect_refused(b, "address overflow");
  }
  {
    // Index 0xFFF8 stepping over 16 elements.
    auto b = good;
    b[link::kHeaderBytes + 12] = 0xF8, b[link::kHeaderBytes + 13] = 0xFF;
    expect_refused(b, "index overflow");
  }
  {
    // Cycles: first stamp near the top with a step.
    auto b = good;
    std::memset(b.data() + link::kHeaderBytes, 0xFF, 8);
    b[run + 4] = 1;
    expect_refused(b, "cycle overflow");
  }
  {
    // The address step on an entry of one word (an ACK has no address word).
    Frame f;
    f.type = link::FrameType::reply;
    for (int i = 0; i < 4; ++i)
      f.entries.push_back(link::make_entry(wire::make(Opcode::ACK, 5), Direction::to_node, EntryKind::answer, 1,
                                           uint16_t(i)));
    std::vector<uint8_t> b;
    link::encode(f, b);
    ASSERT_EQ(wire_entries(b), 1);
    if (f.entries[0].nwords < 2) {
      b[run + 2] |= 2;
      expect_refused(b, "address step without an address word");
    }
  }
}

// encoded_bytes counts what encode writes (it no longer writes them): bursts of every
// shape libcop sends, runs and single entries, with and without identities.
TEST(LinkCompact, EncodedBytesAreWhatEncodeWrites) {
  const commands::Sender s{3, 1, wire::make_identity(2, 0x5151)}, plain{3, 1};
  std::vector<uint64_t> words(300);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 7 * i + (i % 3 ? 0 : 0x100000000ull);
  std::vector<commands::Burst> bursts{commands::barrier(s, 40, 0b11),
                                      commands::reduction(s, Opcode::SUMI32, 100, words, 0b11, 0b1),
                                      commands::broadcast(plain, Opcode::BCAST64, 0x7FF00, words, 0b10),
                                      commands::tas_access(s, Opcode::WSRAM64, false, {2, 1, 5}, words, true, true),
                                      commands::tas_access(s, Opcode::RSRAM32, false, {2, 1, 900}, words)};
  commands::Burst mixed;
  for (const auto& b : bursts) mixed.insert(mixed.end(), b.begin(), b.end());
  bursts.push_back(mixed);
  for (size_t i = 0; i < bursts.size(); ++i) {
    std::vector<uint8_t> bytes;
    link::encode(command_frame(bursts[i]), bytes);
    EXPECT_EQ(link::encoded_bytes(bursts[i]), bytes.size() - link::kHeaderBytes) << "burst " << i;
  }
}

// The same for random sequences (issue 36: encoded_bytes makes the entries one at a time,
// copying the run's first where the instruction and address but MSGTAG repeat): runs that
// break on a changed channel, controller, identity, opcode, TKNO or PPN, on a MSGTAG that
// does not step or repeats, at the MSGTAG's top, and runs of one tag. (An entry copied
// without its MSGTAG, or a shape test without the channel: this fails.)
// A random command sequence: runs that break on a changed channel, controller, identity,
// opcode, TKNO or PPN, on a MSGTAG that does not step or repeats, at the MSGTAG's top,
// and runs of one tag.
commands::Burst random_burst(std::mt19937_64& rng) {
  commands::Burst b;
  const size_t n = 1 + rng() % 300;
  uint32_t tag = rng() % 4 ? uint32_t(rng() % 1000) : 0x7FFF0;
  wire::Message m = commands::command({3, 1, 0}, Opcode::BCAST64, wire::Space::GAS, tag);
  while (b.size() < n) {
    switch (rng() % 12) {
      case 0: m.addr.chno = uint8_t(rng() % 3); break;
      case 1: m.addr.cntno = uint8_t(rng() % 2); break;
      case 2: m.op_id = rng() % 2 ? 0 : wire::make_identity(uint32_t(rng() % 3), 0x5151); break;
      case 3: m.ins.opcode = rng() % 2 ? Opcode::BCAST64 : Opcode::BCAST32; break;
      case 4: m.ins.tkno = uint16_t(rng() % 2 + 3); break;
      case 5: m.ins.ppn = uint8_t(rng() % 2); break;
      case 6: m.addr.msgtag = uint32_t(rng() % 0x80000); break;
      case 7: break;  // the same tag again
      default: m.addr.msgtag = (m.addr.msgtag + 1) & 0x7FFFF;
    }
    m.set_data64(rng());
    b.push_back(m);
  }
  return b;
}

TEST(LinkCompact, EncodedBytesAreWhatEncodeWritesForAnySequence) {
  std::mt19937_64 rng(3636);
  for (int round = 0; round < 400; ++round) {
    const commands::Burst b = random_burst(rng);
    std::vector<uint8_t> bytes;
    link::encode(command_frame(b), bytes);
    ASSERT_EQ(link::encoded_bytes(b), bytes.size() - link::kHeaderBytes) << "round " << round;
  }
}

// encode_commands (a task's frame, issue 36: one walk over its commands, no Entry each)
// writes the bytes encode writes for append_entries' entries of the same commands, MAC
// and CRC included: libcop's bursts of every shape, mixed, and random sequences. And a
// frame sealed again with another ack and session (a resend) is the one encode writes
// with them. (A data word taken from the wrong command, a run cut elsewhere, or a MAC
// not computed again over the new fields: this fails.)
TEST(LinkCompact, EncodeCommandsWritesWhatEncodeWrites) {
  const link::Key key = [] { link::Key k{}; for (size_t i = 0; i < k.size(); ++i) k[i] = uint8_t(3 * i + 1); return k; }();
  const commands::Sender s{3, 1, wire::make_identity(2, 0x5151)}, plain{3, 1};
  std::vector<uint64_t> words(300);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0x0123456789ABCDEFull * (i + 1);
  std::vector<commands::Burst> bursts{commands::barrier(s, 40, 0b11),
                                      commands::reduction(s, Opcode::SUMI32, 100, words, 0b11, 0b1),
                                      commands::reduction(s, Opcode::SUMF, 0x7FF00, words, 0b11, 0),
                                      commands::broadcast(plain, Opcode::BCAST64, 0x7FF00, words, 0b10),
                                      commands::tas_access(s, Opcode::WSRAM64, false, {2, 1, 5}, words, true, true),
                                      commands::tas_access(s, Opcode::RSRAM32, false, {2, 1, 900}, words), commands::Burst{}};
  commands::Burst mixed;
  for (const auto& b : bursts) mixed.insert(mixed.end(), b.begin(), b.end());
  bursts.push_back(mixed);
  std::mt19937_64 rng(3637);
  for (int round = 0; round < 300; ++round) bursts.push_back(random_burst(rng));
  for (size_t i = 0; i < bursts.size(); ++i) {
    Frame f = command_frame({});
    f.seq = 40 + uint32_t(i), f.ack = 5, f.session = 77, f.cycles = 1234;
    f.entries.clear();
    link::append_entries(bursts[i], Direction::to_controller, EntryKind::command, f.seq, 0, f.entries);
    std::vector<uint8_t> want, got;
    link::encode(f, want, &key);
    f.entries.clear();  // not read
    const size_t n = link::encode_commands(f, bursts[i], got, &key);
    EXPECT_EQ(n, got.size());
    ASSERT_EQ(got, want) << "burst " << i;
    link::append_entries(bursts[i], Direction::to_controller, EntryKind::command, f.seq, 0, f.entries);
    f.ack = 9, f.session = 78;
    link::encode(f, want, &key);
    link::reseal(got, 9, 78, &key);
    ASSERT_EQ(got, want) << "burst " << i << " sealed again";
    ASSERT_TRUE(link::verify(got, key));
  }
}

// append_entries makes every entry make_entry makes, message by message: bursts of
// every shape, and messages that share an instruction but not the channel or the
// controller in their address word.
TEST(LinkCompact, AppendEntriesMakesWhatMakeEntryMakes) {
  const commands::Sender s{3, 1, wire::make_identity(2, 0x5151)};
  std::vector<uint64_t> words(200);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 0x0123456789ABCDEFull * (i + 1);
  commands::Burst all = commands::reduction(s, Opcode::SUMI64, 0x7FFA0, words, 0b11, 0b1);
  for (const auto& b : {commands::broadcast(s, Opcode::BCAST32, 300, words, 0b10), commands::barrier(s, 40, 0b11),
                        commands::tas_access(s, Opcode::RMW64, true, {2, 1, 5}, words, true, true)})
    all.insert(all.end(), b.begin(), b.end());
  for (size_t i = 0; i < 40; ++i) {
    wire::Message m = commands::command(s, Opcode::RSRAM64, wire::Space::TAS, uint32_t(i));
    m.ins.z = true;
    m.addr.chno = uint8_t(1 + i % 3);  // the same instruction, another channel now and then
    m.addr.cntno = uint8_t(i / 20);
    all.push_back(m);
  }
  for (auto dir : {Direction::to_controller, Direction::to_node}) {
    std::vector<Entry> made{link::make_entry(wire::make(Opcode::ACK, 1), dir, EntryKind::answer)};
    link::append_entries(all, dir, EntryKind::command, 9, 5, made);
    ASSERT_EQ(made.size(), all.size() + 1);
    for (size_t i = 0; i < all.size(); ++i) {
      const Entry e = link::make_entry(all[i], dir, EntryKind::command, 9, uint16_t(5 + i));
      const Entry& x = made[i + 1];
      EXPECT_TRUE(x.index == e.index && x.seq == e.seq && x.kind == e.kind && x.nwords == e.nwords &&
                  x.words == e.words && x.op_id == e.op_id && x.at_cycle == e.at_cycle)
          << "message " << i << " " << wire::to_string(all[i]);
    }
  }
}

// More elements than kMaxElements in one frame, each run of them well formed: refused
// by decode and decode_runs alike, whether the run or a single entry after the runs
// is the one too many.
TEST(LinkCompact, FramesOfMoreThanMaxElementsAreRefused) {
  const int half = link::kMaxElements / 2;
  Frame f;
  f.type = link::FrameType::reply;
  const wire::Message ack = wire::make(Opcode::ACK, 5);
  for (int i = 0; i < 2 * half; ++i)  // two runs (the seq changes half-way), kMaxElements in all
    f.entries.push_back(link::make_entry(ack, Direction::to_node, EntryKind::answer, i < half ? 1 : 2, uint16_t(i)));
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  ASSERT_EQ(wire_entries(bytes), 2);
  EXPECT_EQ(decoded(bytes).entries.size(), size_t(link::kMaxElements));
  f.entries.push_back(link::make_entry(wire::make(Opcode::XMIT, 5), Direction::to_node, EntryKind::answer, 3, 0));
  link::encode(f, bytes);
  ASSERT_EQ(wire_entries(bytes), 3);
  expect_refused(bytes, "a single entry after kMaxElements elements");
  f.entries.pop_back();
  f.entries.push_back(link::make_entry(ack, Direction::to_node, EntryKind::answer, 2, uint16_t(2 * half)));
  link::encode(f, bytes);
  ASSERT_EQ(wire_entries(bytes), 2);
  expect_refused(bytes, "a run that takes the frame beyond kMaxElements");
}

// A broadcast's words and a burst's answers with a NACK among them: decode_runs gives
// one record per run, the NACK its own, and the data words where they lie.
TEST(LinkCompact, RunsKeepABurstAsOneRecord) {
  Frame f;
  f.type = link::FrameType::reply;
  f.seq = 4;
  for (int i = 0; i < 2048; ++i) {
    wire::Message m = wire::make(Opcode::BCAST64, 0, wire::Space::GAS, uint32_t(100 + i));
    m.addr.chno = 2;
    m.op_id = wire::make_identity(3, 0xABCD);
    wire::set_payload(m, uint64_t(i) * 0x9E3779B97F4A7C15ull);
    f.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, 10 + 8ull * uint64_t(i)));
  }
  for (int i = 0; i < 300; ++i) {
    wire::Message a = wire::make(i == 200 ? Opcode::NACK : Opcode::ACK, 5);
    if (i == 200) a.data1 = wire::nack_data(wire::Error::mask_in_use, uint32_t(Opcode::SETBM));
    f.entries.push_back(link::make_entry(a, Direction::to_node, EntryKind::answer, 9, uint16_t(i)));
  }
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  link::FrameRuns runs;
  ASSERT_FALSE(link::decode_runs(bytes, runs).has_value());
  ASSERT_EQ(runs.runs.size(), 4u);  // the words, ACKs 0..199, the NACK, ACKs 201..299
  EXPECT_EQ(runs.runs[0].count, 2048);
  EXPECT_EQ(runs.runs[0].first.op_id, wire::make_identity(3, 0xABCD));
  EXPECT_EQ(runs.runs[2].count, 1);
  EXPECT_EQ(runs.runs[2].first.index, 200);
  EXPECT_EQ(runs.runs[3].count, 99);
  EXPECT_EQ(runs.runs[3].element(98).index, 299);
  const auto first = std::get<wire::Message>(link::decode_entry(runs.runs[0].first, Direction::to_node));
  for (size_t k = 0; k < 2048; ++k) {
    const wire::Message m = link::element_message(runs.runs[0], first, k);
    EXPECT_EQ(m.addr.msgtag, 100 + k);
    EXPECT_EQ(wire::payload(m), uint64_t(k) * 0x9E3779B97F4A7C15ull) << k;
  }
  expect_runs_agree(bytes);
}

// Issue 34: a message's operation identity travels in its entry (8 bytes, only when not
// 0) and once per compact run; a run never joins elements of two identities; a flagged
// identity of 0 or one cut off is refused.
TEST(LinkIdentity, IdentitiesRoundTripOncePerRun) {
  commands::Sender a{1, 0, wire::make_identity(7, 0xC0FFEE)}, b{1, 0, wire::make_identity(8, 0xC0FFEE)};
  commands::Burst burst;
  std::vector<uint64_t> words(16, 42);
  commands::append_elements(burst, a, Opcode::SUMI64, 10, words);
  commands::append_elements(burst, b, Opcode::SUMI64, 30, words);
  burst.push_back(commands::command(a, Opcode::LOCK));  // no identity on a LOCK
  const Frame f = command_frame(burst);
  EXPECT_EQ(f.entries[0].op_id, a.op_id);
  EXPECT_EQ(f.entries.back().op_id, 0u);
  std::vector<uint8_t> bytes;
  link::encode(f, bytes);
  EXPECT_EQ(wire_entries(bytes), 3) << "two runs (one per identity) and the LOCK";
  expect_same(decoded(bytes), f);
  // Without identities the same burst is 16 bytes shorter: 8 per run.
  commands::Burst plain;
  commands::append_elements(plain, commands::Sender{1, 0}, Opcode::SUMI64, 10, words);
  commands::append_elements(plain, commands::Sender{1, 0}, Opcode::SUMI64, 30, words);
  plain.push_back(commands::command(a, Opcode::LOCK));
  EXPECT_EQ(link::encoded_bytes(burst), link::encoded_bytes(plain) + 2 * link::kIdentityBytes);
  {
    auto z = bytes;
    std::memset(z.data() + link::kHeaderBytes + link::kEntryHeaderBytes, 0, 8);
    expect_refused(z, "identity flag with identity 0");
  }
  {
    Frame one;
    one.type = link::FrameType::reply;
    wire::Message m = wire::make(Opcode::BCAST64, 0, wire::Space::GAS, 5);
    m.op_id = 99;
    one.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast));
    std::vector<uint8_t> c;
    link::encode(one, c);
    c.resize(link::kHeaderBytes + link::kEntryHeaderBytes + 4);
    const uint32_t payload = uint32_t(c.size() - link::kHeaderBytes);
    std::memcpy(c.data() + 56, &payload, 4);
    expect_refused(c, "identity cut off");
    const auto back = std::get<wire::Message>(link::decode_entry(decoded(bytes).entries[0], Direction::to_controller));
    EXPECT_EQ(back.op_id, a.op_id);
  }
}

}  // namespace

namespace {

// Every header field and the text, beside expect_same's entries.
void expect_same_header(const Frame& a, const Frame& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.channel, b.channel);
  EXPECT_EQ(a.tkno, b.tkno);
  EXPECT_EQ(a.seq, b.seq);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.info, b.info);
  EXPECT_EQ(a.nonce, b.nonce);
  EXPECT_EQ(a.ack, b.ack);
  EXPECT_EQ(a.session, b.session);
  EXPECT_EQ(a.mac, b.mac);
  EXPECT_EQ(a.text, b.text);
}

}  // namespace

// decode(bytes, into), as copd decodes frame after frame into one Frame: a frame decoded
// into a Frame that held a longer one (a 2000-element burst, then a short frame, then
// a refused one, then the burst again) is exactly what decode(bytes) gives, nothing of
// the frame before left in it.
TEST(LinkCompact, DecodingIntoOneFrameAgainLeavesNothingOfTheFrameBefore) {
  Frame big;
  big.type = link::FrameType::reply;
  big.channel = 3;
  big.seq = 41;
  big.ack = 9;
  big.session = 5;
  big.cycles = 123456;
  big.info = {1, 2, 3, 4};
  big.nonce = 77;
  big.text = "some text";
  for (int i = 0; i < 2000; ++i) {
    wire::Message m = wire::make(Opcode::BCAST64, 0, wire::Space::GAS, uint32_t(60000 + i));
    wire::set_payload(m, uint64_t(i) * 0x9E3779B97F4A7C15ull + 1);
    big.entries.push_back(link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, 5000 + 70ull * uint64_t(i)));
  }
  Frame small;
  small.type = link::FrameType::command;
  small.channel = 2;
  small.tkno = 1;
  small.seq = 8;
  small.entries.push_back(link::make_entry(wire::make(Opcode::ACK, 1), Direction::to_controller, EntryKind::command, 8, 0));
  std::vector<uint8_t> big_bytes, small_bytes;
  link::encode(big, big_bytes);
  link::encode(small, small_bytes);
  std::vector<uint8_t> bad = big_bytes;
  bad[link::kHeaderBytes + 20] ^= 0xFF;  // damaged on the way: the CRC refuses it
  Frame into;
  for (const auto* bytes : {&big_bytes, &small_bytes, &bad, &big_bytes, &small_bytes}) {
    const auto whole = link::decode(*bytes);
    const auto err = link::decode(*bytes, into);
    ASSERT_EQ(err.has_value(), std::holds_alternative<link::LinkError>(whole));
    if (err) continue;
    expect_same(into, std::get<Frame>(whole));
    expect_same_header(into, std::get<Frame>(whole));
  }
  expect_same(into, small);
}

namespace {

// zlib's crc32 of `bytes` continued from `prior`: the independent reference for link::crc32.
uint32_t zlib_crc(std::span<const uint8_t> bytes, uint32_t prior = 0) {
  return uint32_t(crc32(prior, bytes.data(), uInt(bytes.size())));
}

// The frame's CRC-32 (ISA-L, link.h) gives zlib's values: every length 0..300 at every
// alignment 0..7, large buffers, continued from a CRC before, and the check value.
TEST(LinkChecksum, Crc32IsZlibsForEveryLengthAndAlignment) {
  const std::string check = "123456789";
  EXPECT_EQ(link::crc32({reinterpret_cast<const uint8_t*>(check.data()), check.size()}), 0xCBF43926u);
  EXPECT_EQ(link::crc32({}), 0u);
  std::vector<uint8_t> buf((1u << 20) + 300);
  uint64_t x = 0x243F6A8885A308D3ull;
  for (uint8_t& b : buf) b = uint8_t((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  const std::span<const uint8_t> all(buf);
  for (size_t at = 0; at < 8; ++at)
    for (size_t n = 0; n <= 300; ++n) ASSERT_EQ(link::crc32(all.subspan(at, n)), zlib_crc(all.subspan(at, n))) << at << " " << n;
  for (size_t n : {size_t(4096), size_t(16495), size_t(65536 + 7), size_t(1) << 20, buf.size()})
    EXPECT_EQ(link::crc32(all.first(n)), zlib_crc(all.first(n))) << n;
  for (size_t cut : {size_t(0), size_t(1), size_t(60), size_t(64), size_t(1000)}) {
    const uint32_t before = link::crc32(all.first(cut));
    EXPECT_EQ(link::crc32(all.subspan(cut, 20000), before), zlib_crc(all.subspan(cut, 20000), zlib_crc(all.first(cut))));
    EXPECT_EQ(link::crc32(all.subspan(cut, 20000), before), link::crc32(all.first(cut + 20000)));
  }
}

// An encoded frame's checksum field is zlib's CRC of the frame with that field as zero
// (link.h), for payloads of every length the text makes from 0 to 300 bytes more.
TEST(LinkChecksum, EncodedFramesCarryZlibsCrc) {
  Frame f = command_frame(commands::barrier(commands::Sender{1, 0}, 5, 0xF));
  std::vector<uint8_t> bytes;
  for (size_t n = 0; n <= 300; ++n) {
    f.text.assign(n, char('a' + n % 26));
    link::encode(f, bytes);
    uint32_t field;
    std::memcpy(&field, bytes.data() + 60, 4);
    std::vector<uint8_t> zeroed = bytes;
    std::memset(zeroed.data() + 60, 0, 4);
    ASSERT_EQ(field, zlib_crc(zeroed)) << n;
    ASSERT_FALSE(std::holds_alternative<link::LinkError>(link::decode(bytes))) << n;
  }
}

}  // namespace

namespace {

// Random ElementRuns (and their elements), the kinds copd sends and edge cases: runs
// that continue one another across ElementRuns (a run cut in pieces), singles that make a
// run, indexes and MSGTAGs at their limits, more than UINT16_MAX elements, steps beyond
// 32 bits, data words from a shared array or from the first element.
std::vector<link::ElementRun> random_element_runs(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  std::vector<link::ElementRun> rs;
  const int pieces = 1 + int(pick(6));
  for (int i = 0; i < pieces; ++i) {
    link::ElementRun r;
    Entry& e = r.first;
    e.kind = EntryKind(pick(3));
    e.seq = pick(2);
    e.nwords = uint8_t(1 + pick(4));
    e.op_id = pick(3) == 0 ? 0 : 0xABC0 + pick(2);
    for (auto& w : e.words) w = uint32_t(rng());
    e.words[0] = 0x1000 + pick(2);
    const uint32_t tag_room = pick(4) == 0 ? pick(40) : 100000;  // MSGTAG close to its limit
    e.words[1] = (e.words[1] & ~wire::field::kMsgtag.put(~0u)) | wire::field::kMsgtag.put(wire::field::kMsgtag.mask() - tag_room);
    e.index = uint16_t(pick(4) == 0 ? 0xFFFF - pick(40) : pick(3000));
    e.at_cycle = pick(1000);
    r.count = pick(5) == 0 ? 1 : (pick(8) == 0 ? 70000 + pick(100) : 1 + pick(300));
    r.step = pick(6) == 0 ? (uint64_t(1) << 32) + pick(3) : pick(4);
    r.index_step = pick(3) != 0;
    r.address_step = pick(3) != 0;
    if (e.nwords >= 3 && pick(3) != 0) {
      auto data = std::make_shared<std::vector<uint64_t>>(r.count + 10);
      for (auto& v : *data) v = (uint64_t(rng()) << 32) | rng();
      r.data = data;
      r.data_at = pick(10);
    }
    // Cut in pieces (each continues the one before), or whole.
    for (size_t at = 0; at < r.count;) {
      const size_t n = std::min<size_t>(r.count - at, pick(3) == 0 ? 1 + pick(r.count) : r.count);
      rs.push_back(r.slice(at, n));
      // Sometimes a piece whose first element continues the run and whose next do not.
      if (pick(4) == 0) rs.back().step += 1;
      if (pick(6) == 0) rs.back().index_step = !rs.back().index_step;
      if (pick(6) == 0) rs.back().address_step = !rs.back().address_step;
      at += n;
    }
  }
  return rs;
}

}  // namespace

// copd's reply path (issue 36) hands its answers, results and broadcast words to the
// encoder as runs: the bytes must be those of the same elements one Entry each.
TEST(LinkCompact, ElementRunsEncodeAsTheirElements) {
  const link::Key key{1, 2, 3};
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    const auto rs = random_element_runs(seed);
    Frame f;
    f.type = link::FrameType::reply;
    f.channel = 3;
    f.seq = seed;
    f.text = seed % 2 ? "" : "t";
    for (const auto& r : rs)
      for (size_t k = 0; k < r.count; ++k) f.entries.push_back(r.element(k));
    std::vector<uint8_t> whole, runs;
    link::encode(f, whole, seed % 3 ? &key : nullptr);
    Frame header = f;
    header.entries.clear();
    link::encode(header, rs, runs, seed % 3 ? &key : nullptr);
    ASSERT_EQ(runs, whole) << "seed " << seed << ": " << rs.size() << " runs, " << f.entries.size() << " elements";
    if (f.entries.size() <= size_t(link::kMaxElements)) {
      auto back = link::decode(runs);
      ASSERT_TRUE(std::holds_alternative<Frame>(back)) << seed;
      expect_same(std::get<Frame>(back), f);
    }
  }
}

TEST(LinkCompact, AnElementRunSliceIsItsElements) {
  for (uint32_t seed = 1; seed <= 50; ++seed)
    for (const auto& r : random_element_runs(seed)) {
      const size_t from = r.count / 3, n = r.count - from;
      const auto s = r.slice(from, n);
      for (size_t k = 0; k < n; k += 1 + k / 4) {
        const Entry a = s.element(k), b = r.element(from + k);
        ASSERT_EQ(a.at_cycle, b.at_cycle);
        ASSERT_EQ(a.index, b.index);
        ASSERT_EQ(a.words, b.words);
      }
    }
}
