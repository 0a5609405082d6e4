// copd's run path (issue 36, server.h ServerConfig::runs): the same command frames,
// sent by raw nodes (tests/cop/driver_harness.h) to a real copd with --runs 1 and to
// one with --runs 0, must give every channel the same reply entries (kind, seq, index,
// at_cycle, words, operation identity) after each frame sent, in the same order among its
// answers and among its broadcast entries (the run path sends a burst's ACKs to a
// sender that also receives its words, a reduction's or a broadcast's root, as the ACK
// run and then the words' run, where the element path interleaves them), frame boundaries aside:
// broadcast and reduction bursts of several lengths, an error in the middle of a
// burst, a held operation, and resends of frames (answered from the task's cache).
// The reductions' results are checked against a local computation too.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "driver_harness.h"

namespace {

using cop::link::Entry;
using cop::link::EntryKind;
using cop::link::Frame;
using cop::testing::Stack;
using cop::wire::Message;
using cop::wire::Opcode;

constexpr int kChannels = 3;
constexpr uint16_t kTkno = 1;
constexpr uint64_t kAll = 0b111;

std::string describe(const Entry& e) {
  std::string w;
  for (uint32_t x : e.span()) w += fmt::format(" {:08x}", x);
  return fmt::format("kind {} seq {} index {} at {} id {:x} words{}", int(e.kind), e.seq, e.index, e.at_cycle, e.op_id,
                     w);
}

std::vector<uint64_t> words(size_t n, uint64_t seed) {
  std::vector<uint64_t> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = seed * 1000003u + i * 7919u;
  return w;
}

std::vector<Message> flat(const std::vector<cop::commands::ArrayBurst>& bursts) {
  std::vector<Message> all;
  for (const auto& b : bursts) all.insert(all.end(), b.commands.begin(), b.commands.end());
  return all;
}

// Three raw nodes on one copd; every reply entry each channel got, in order.
class Cluster {
 public:
  explicit Cluster(bool runs) : stack_(0, kChannels, {"--runs", runs ? "1" : "0"}) {
    for (int c = 1; c <= kChannels; ++c) {
      nodes_.push_back(std::make_unique<RawNode>(stack_));
      RawNode& n = *nodes_.back();
      if (!n.register_channel(uint16_t(c)) || !n.enrol(kTkno, token(c))) throw std::runtime_error("no channel");
    }
  }
  static uint64_t token(int c) { return 0x70C3E000u + uint64_t(c); }
  // A command frame of channel c's task; `expect`: the entries each channel then gets.
  void send(int c, uint32_t seq, const std::vector<Message>& cmds, const std::map<int, size_t>& expect) {
    RawNode& n = node(c);
    n.send(n.command(seq, cmds, kTkno, token(c)));
    sent_[c] = n.last_sent;  // (its ACKs of reply frames are sent after it)
    collect(expect);
  }
  // The channel's last frame again (the task's transmit timer: a resend).
  void resend(int c, const std::map<int, size_t>& expect) {
    node(c).send_raw(sent_.at(c));
    collect(expect);
  }
  const std::vector<Entry>& got(int c) const { return got_.at(c); }
  // How many entries channel c had got after each frame sent (or resent).
  const std::vector<size_t>& marks(int c) const { return marks_.at(c); }
  // The elements of each reply frame channel c got, in order.
  const std::vector<size_t>& frames(int c) { return frames_[c]; }

 private:
  RawNode& node(int c) { return *nodes_[size_t(c - 1)]; }
  void collect(const std::map<int, size_t>& expect) {
    for (const auto& [c, n] : expect) {
      auto& list = got_[c];
      const size_t want = list.size() + n;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (list.size() < want && std::chrono::steady_clock::now() < until)
        if (auto f = node(c).receive(200); f && f->type == cop::link::FrameType::reply) {
          list.insert(list.end(), f->entries.begin(), f->entries.end());
          frames_[c].push_back(f->entries.size());
        }
      ASSERT_EQ(list.size(), want) << "channel " << c;
    }
    for (int c = 1; c <= kChannels; ++c) marks_[c].push_back(got_[c].size());
  }
  Stack stack_;
  std::vector<std::unique_ptr<RawNode>> nodes_;
  std::map<int, std::vector<Entry>> got_;
  std::map<int, std::vector<size_t>> marks_;
  std::map<int, std::vector<size_t>> frames_;
  std::map<int, std::vector<uint8_t>> sent_;  // each channel's last command frame
};

cop::commands::Sender task(uint32_t call) { return {kTkno, 0, cop::wire::make_identity(1, call)}; }

// The script both copds get.
void play(Cluster& k) {
  // A 300-word broadcast in bursts of 128 (LOCK, SETBM, elements, UNLOCK): to all.
  const auto cast = flat(cop::commands::broadcast_bursts(task(1), Opcode::BCAST64, 0, words(300, 1), kAll, 128));
  k.send(1, 1, cast, {{1, cast.size() + 300}, {2, 300}, {3, 300}});
  // A 200-word integer sum to channel 1 (the results when the last is in).
  for (int c = 1; c <= kChannels; ++c) {
    const auto r =
        flat(cop::commands::reduction_bursts(task(2), Opcode::SUMI64, 400, words(200, uint64_t(c)), kAll, 0b001, 128));
    std::map<int, size_t> expect{{c, r.size()}};
    if (c == kChannels) expect[1] += 200;
    k.send(c, 1 + (c == 1), r, expect);
  }
  // A broadcast whose mask covers 50 of its 120 words: the rest NACK no_mask.
  std::vector<Message> part{cop::commands::command(task(3), Opcode::LOCK)};
  part.push_back(cop::commands::mask_command(task(3), Opcode::SETBM, 700, 0b101, 50));
  cop::commands::append_elements(part, task(3), Opcode::BCAST32, 700, words(120, 3));
  part.push_back(cop::commands::command(task(3), Opcode::UNLOCK));
  k.send(2, 2, part, {{2, part.size()}, {1, 50}, {3, 50}});
  k.resend(2, {{2, part.size()}});  // answered from the cache, not executed again
  // Channel 1's second sum on the same words waits for the first to complete.
  const auto first = flat(cop::commands::reduction_bursts(task(4), Opcode::SUMF, 1000, words(100, 4), kAll, kAll, 128));
  const auto again = flat(cop::commands::reduction_bursts(task(5), Opcode::SUMF, 1000, words(100, 5), kAll, kAll, 128));
  k.send(1, 3, first, {{1, first.size()}});
  k.send(1, 4, again, {});
  k.resend(1, {{1, 1}});  // held: an in-progress answer only
  k.send(2, 3, first, {{2, first.size()}});
  k.send(3, 2, first, {{1, 100 + again.size()}, {2, 100}, {3, first.size() + 100}});
  k.resend(1, {{1, again.size()}});  // a resend of the held frame, now done: its answers (runs) from the cache
  k.send(2, 4, again, {{2, again.size()}});
  k.send(3, 3, again, {{1, 100}, {2, 100}, {3, again.size() + 100}});
  // A 16 KB broadcast in one burst: its ACKs and words (more than a reply frame's
  // kMaxEntries) split across reply frames, then resent from the cache.
  const auto big = flat(cop::commands::broadcast_bursts(task(6), Opcode::BCAST64, 3000, words(2048, 6), kAll, 2048));
  k.send(1, 5, big, {{1, big.size() + 2048}, {2, 2048}, {3, 2048}});
  k.resend(1, {{1, big.size()}});
  // A burst that runs past the GAS (65536 words): its last 10 elements NACK address_range,
  // its first 10 go as a run.
  std::vector<Message> edge{cop::commands::command(task(8), Opcode::LOCK)};
  edge.push_back(cop::commands::mask_command(task(8), Opcode::SETBM, 65526, kAll, 10));
  cop::commands::append_elements(edge, task(8), Opcode::BCAST64, 65526, words(20, 8));
  edge.push_back(cop::commands::command(task(8), Opcode::UNLOCK));
  k.send(1, 6, edge, {{1, edge.size() + 10}, {2, 10}, {3, 10}});
}

// The results (broadcast entries with a reduction opcode) channel c got on words [tag, tag + n).
std::map<uint32_t, uint64_t> results(const std::vector<Entry>& got, Opcode op, uint32_t tag, uint32_t n) {
  std::map<uint32_t, uint64_t> r;
  for (const Entry& e : got) {
    if (e.kind != EntryKind::broadcast) continue;
    const Message m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
    if (m.ins.opcode == op && m.addr.msgtag >= tag && m.addr.msgtag < tag + n) r[m.addr.msgtag] = m.data64();
  }
  return r;
}

// The entries of `all` of kind `kind` (describe's first field), in order.
std::vector<std::string> of_kind(const std::vector<std::string>& all, EntryKind kind) {
  std::vector<std::string> r;
  const std::string prefix = fmt::format("kind {} ", int(kind));
  for (const auto& d : all)
    if (d.starts_with(prefix)) r.push_back(d);
  return r;
}

TEST(CopdRuns, TheSameFramesGiveTheSameRepliesWithAndWithoutRuns) {
  std::map<int, std::vector<std::string>> seen[2];
  std::map<int, std::vector<size_t>> marks[2];
  for (int runs = 0; runs < 2; ++runs) {
    Cluster k(runs == 1);
    play(k);
    if (HasFatalFailure()) return;
    for (int c = 1; c <= kChannels; ++c) {
      for (const Entry& e : k.got(c)) seen[runs][c].push_back(describe(e));
      marks[runs][c] = k.marks(c);
    }
    // The integer sum at channel 1, element by element, against the local one.
    const auto sums = results(k.got(1), Opcode::SUMI64, 400, 200);
    ASSERT_EQ(sums.size(), 200u);
    for (uint32_t i = 0; i < 200; ++i) {
      uint64_t want = 0;
      for (int c = 1; c <= kChannels; ++c) want += words(200, uint64_t(c))[i];
      ASSERT_EQ(sums.at(400 + i), want) << "word " << i;
    }
    // The burst past the GAS: its last 10 elements NACK address_range.
    size_t beyond = 0;
    for (const Entry& e : k.got(1)) {
      if (e.kind != EntryKind::answer || e.seq != 6) continue;
      const Message m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
      if (m.ins.opcode == Opcode::NACK && cop::wire::nack_error(m.data1) == cop::wire::Error::address_range) ++beyond;
    }
    EXPECT_EQ(beyond, 10u) << "runs " << runs;
  }
  for (int c = 1; c <= kChannels; ++c) {
    ASSERT_EQ(seen[1][c].size(), seen[0][c].size()) << "channel " << c;
    ASSERT_EQ(marks[1][c], marks[0][c]) << "channel " << c;
    // After each frame sent, the same entries.
    for (size_t step = 0, from = 0; step < marks[0][c].size(); from = marks[0][c][step++]) {
      const auto at = [&](int r) {
        std::vector<std::string> v(seen[r][c].begin() + long(from), seen[r][c].begin() + long(marks[0][c][step]));
        std::sort(v.begin(), v.end());
        return v;
      };
      ASSERT_EQ(at(1), at(0)) << "channel " << c << " after frame " << step;
    }
    // In the same order among the answers, and among the broadcast entries.
    for (EntryKind kind : {EntryKind::answer, EntryKind::broadcast}) {
      const auto a = of_kind(seen[0][c], kind), b = of_kind(seen[1][c], kind);
      ASSERT_EQ(b.size(), a.size()) << "channel " << c << " kind " << int(kind);
      for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(b[i], a[i]) << "channel " << c << " kind " << int(kind) << " entry " << i;
    }
  }
}

// The run path's reply to a sender that receives the burst's words too: the ACK run, then
// the words' run (two compact entries), not one entry per element.
TEST(CopdRuns, ARootGetsItsAcksAndItsWordsAsTwoRuns) {
  Cluster k(true);
  const auto big = flat(cop::commands::broadcast_bursts(task(7), Opcode::BCAST64, 5000, words(512, 7), kAll, 512));
  k.send(1, 1, big, {{1, big.size() + 512}, {2, 512}, {3, 512}});
  if (HasFatalFailure()) return;
  const auto& got = k.got(1);
  // The burst's 512 element ACKs together, then its 512 words together (LOCK's and
  // SETBM's ACKs before them, UNLOCK's after).
  const auto first_word = size_t(std::find_if(got.begin(), got.end(), [](const Entry& e) { return e.kind == EntryKind::broadcast; }) - got.begin());
  ASSERT_GE(first_word, 512u);
  ASSERT_LE(first_word + 512, got.size());
  for (size_t i = first_word - 512; i < first_word; ++i) EXPECT_EQ(got[i].kind, EntryKind::answer) << i;
  for (size_t i = first_word; i < first_word + 512; ++i) EXPECT_EQ(got[i].kind, EntryKind::broadcast) << i;
  EXPECT_EQ(got.size(), big.size() + 512);
}

// A root's reply to its 16 KB broadcast burst (2048 ACKs and 2048 words, more than
// kMaxEntries elements) is one reply frame of compact runs, not one per kMaxEntries
// elements; a reply of more than a frame's kMaxElements elements (a 6000-word burst's
// root: 12000 and more) goes in frames of at most kMaxElements each, every element there
// and every word the one sent.
TEST(CopdRuns, ARootsBurstReplyIsOneFrameWhenItFits) {
  for (const uint32_t n : {2048u, 6000u}) {
    Cluster k(true);
    const auto sent = words(n, 9);
    const auto big = flat(cop::commands::broadcast_bursts(task(9), Opcode::BCAST64, 100, sent, kAll, n));
    k.send(1, 1, big, {{1, big.size() + n}, {2, n}, {3, n}});
    if (HasFatalFailure()) return;
    const auto& frames = k.frames(1);
    const size_t total = big.size() + n;
    EXPECT_EQ(frames.size(), (total + size_t(cop::link::kMaxElements) - 1) / size_t(cop::link::kMaxElements)) << n;
    for (size_t e : frames) EXPECT_LE(e, size_t(cop::link::kMaxElements)) << n;
    // The words, as sent, at every channel.
    for (int c = 1; c <= kChannels; ++c) {
      std::map<uint32_t, uint64_t> got;
      for (const Entry& e : k.got(c)) {
        if (e.kind != EntryKind::broadcast) continue;
        const Message m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
        got[m.addr.msgtag] = m.data64();
      }
      ASSERT_EQ(got.size(), size_t(n)) << "channel " << c;
      for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(got.at(100 + i), sent[i]) << "channel " << c << " word " << i;
    }
  }
}

}  // namespace
