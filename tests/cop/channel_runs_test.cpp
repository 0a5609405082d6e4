// A task's channel takes copd's runs as runs (cop/driver/channel.h take_answer_run,
// take_result_run; issue 36): a run of ACKs as one range of indices, a run of results
// written to the awaited array in one pass. Every answer and every result must still be
// taken exactly once, at its index or tag, only the call's own; what is not the call's is
// filed in the window's buffer for later. Each test has a scripted controller (a UDP socket) send
// reply frames whose entries encode groups into compact runs, and checks the client
// against what it computes here.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "driver/channel.h"
#include "link/auth.h"
#include "link/udp.h"

namespace {

using namespace cop;
using driver::Answer;
using link::Entry;
using link::EntryKind;
using wire::Direction;
using wire::Error;
using wire::Message;
using wire::Opcode;

constexpr uint16_t kTkno = 3;
constexpr uint32_t kSession = 7;

// The node's channel and a copd that only sends what the test tells it to.
struct Link {
  link::UdpSocket copd{link::parse_endpoint("127.0.0.1:0", 0)};
  link::UdpSocket node{link::parse_endpoint("127.0.0.1:0", 0)};
  std::unique_ptr<driver::Window> window = std::make_unique<driver::Window>();
  link::Key down{};
  std::unique_ptr<driver::ChannelClient> client;
  uint32_t reply_seq = 1;

  explicit Link(int wait_timeout_ms = 0) {
    node.connect(copd.local());
    copd.connect(node.local());
    driver::init_window(window.get(), ::getpid(), 1);
    window->rx_session.store(kSession);
    window->rx_next.store(1);
    window->last_heard_ns.store(driver::monotonic_ns());
    for (size_t i = 0; i < down.size(); ++i) down[i] = uint8_t(5 * i + 1);
    driver::LinkOptions o;
    o.ack_timeout_ms = 5000;  // no resend in a test: every reply is sent before the wait
    o.dead_ms = 60000;
    o.wait_timeout_ms = wait_timeout_ms;
    client = std::make_unique<driver::ChannelClient>(window.get(), node.fd(), kTkno, link::Key{}, down, o);
  }
  // A reply frame of `entries` in the channel's stream (encode groups them into runs).
  void reply(std::vector<Entry> entries) {
    link::Frame f;
    f.type = link::FrameType::reply;
    f.channel = 1;
    f.tkno = kTkno;
    f.seq = reply_seq++;
    f.session = kSession;
    f.entries = std::move(entries);
    std::vector<uint8_t> bytes;
    const link::Key k = link::session_key(down, kSession);
    link::encode(f, bytes, &k);
    ASSERT_TRUE(link::send_datagram(copd.fd(), bytes));
  }
};

Entry answer(Opcode op, uint32_t seq, uint16_t index, uint64_t at_cycle, uint32_t code = 0) {
  Message m = wire::make(op, kTkno);
  m.data1 = code;
  return link::make_entry(m, Direction::to_node, EntryKind::answer, seq, index, at_cycle);
}

Entry bcast_word(uint32_t tag, uint64_t value, uint64_t op_id, uint64_t at_cycle, uint8_t ppn = 0) {
  Message m = wire::make(Opcode::BCAST64, 0, wire::Space::GAS, tag);
  m.addr.chno = 2;
  m.ins.ppn = ppn;
  m.op_id = op_id;
  m.set_data64(value);
  return link::make_entry(m, Direction::to_node, EntryKind::broadcast, 0, 0, at_cycle);
}

std::vector<Message> burst(size_t n) {
  std::vector<Message> cmds;
  for (size_t i = 0; i < n; ++i) {
    Message m = wire::make(Opcode::BCAST64, kTkno, wire::Space::GAS, uint32_t(100 + i));
    m.set_data64(i);
    cmds.push_back(m);
  }
  return cmds;
}

// The frame's answers in runs out of order, overlapping (a resend's duplicates) and
// around a NACK: each index keeps the first answer that came for it, and the window's
// modelled time is the latest of those taken. (A run taking an index already answered
// overwrote the NACK and counted one answer twice: this fails.)
TEST(ChannelRuns, AnswerRunsTakeEachIndexOnceWhateverTheirOrder) {
  Link l;
  constexpr size_t n = 303;
  ASSERT_EQ(l.client->send_only(burst(n)), Error::none);
  std::map<size_t, std::pair<Error, uint64_t>> want;  // the first answer of each index
  std::vector<Entry> a{answer(Opcode::NACK, 1, 7, 40, uint32_t(Error::mismatch))};
  want[7] = {Error::mismatch, 40};
  for (uint16_t i = 150; i < n; ++i) a.push_back(answer(Opcode::ACK, 1, i, 1000 + 2u * i));
  for (size_t i = 150; i < n; ++i) want.emplace(i, std::pair{Error::none, 1000 + 2u * i});
  std::vector<Entry> b;
  for (uint16_t i = 0; i < 200; ++i) b.push_back(answer(Opcode::ACK, 1, i, 5000 + 3u * i));
  for (size_t i = 0; i < 200; ++i) want.emplace(i, std::pair{Error::none, 5000 + 3u * i});
  l.reply(a);
  l.reply(b);
  l.reply({answer(Opcode::ACK, 1, 300, 9000)});  // a late duplicate, single
  std::vector<Answer> got;
  ASSERT_EQ(l.client->finish(got), Error::none);
  ASSERT_EQ(got.size(), n);
  uint64_t latest = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i].error, want.at(i).first) << i;
    EXPECT_EQ(got[i].at_cycle, want.at(i).second) << i;
    EXPECT_FALSE(got[i].has_data) << i;
    latest = std::max(latest, want.at(i).second);
  }
  EXPECT_EQ(l.window->modelled_cycles.load(), latest);
}

// Answers are not cleared per frame (issue 36): a frame whose answers did not all come
// gives the default answer for those, never an earlier frame's. (Without finish()'s
// defaults the second frame showed the first frame's NACKs: this fails.)
TEST(ChannelRuns, AnAnswerThatNeverCameIsNotAnEarlierFrames) {
  Link l(100);
  constexpr size_t n = 64;
  ASSERT_EQ(l.client->send_only(burst(n)), Error::none);
  std::vector<Entry> nacks;
  for (uint16_t i = 0; i < n; ++i) nacks.push_back(answer(Opcode::NACK, 1, i, 10 + i, uint32_t(Error::mismatch)));
  l.reply(nacks);
  std::vector<Answer> got;
  ASSERT_EQ(l.client->finish(got), Error::none);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i].error, Error::mismatch) << i;
  ASSERT_EQ(l.client->send_only(burst(n)), Error::none);
  std::vector<Entry> half;
  for (uint16_t i = 0; i < n / 2; ++i) half.push_back(answer(Opcode::ACK, 2, i, 500 + i));
  l.reply(half);
  EXPECT_EQ(l.client->finish(got), Error::timeout);
  ASSERT_EQ(got.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i].error, Error::none) << i;
    EXPECT_EQ(got[i].at_cycle, i < n / 2 ? 500 + i : 0) << i;
  }
}

// A broadcast's words in runs: only the awaited tags of the call's own operation are
// taken, each once, at its place; an older round's run is dropped; a later round's, the
// tags beyond the wait and a second copy of a tag are filed, in order, and taken by the
// waits they are for. (A run written without its tag range, its identity or the tags
// already in took wrong words or lost filed ones: this fails.)
TEST(ChannelRuns, ResultRunsTakeOnlyTheAwaitedTagsOfTheCall) {
  Link l;
  const uint64_t id = wire::make_identity(9, 0x00AB0001);
  const uint64_t older = wire::make_identity(8, 0x00AB0001), later = wire::make_identity(10, 0x00AB0001);
  std::vector<Entry> a;
  for (uint32_t t = 100; t < 150; ++t) a.push_back(bcast_word(t, 1, older, 5 + t));          // dropped
  for (uint32_t t = 100; t < 110; ++t) a.push_back(bcast_word(t, 2, later, 5 + t));          // filed: 10
  for (uint32_t t = 100; t < 110; ++t) a.push_back(bcast_word(t, 3, id, 5 + t, 1));          // another job's: 10
  for (uint32_t t = 90; t < 250; ++t) a.push_back(bcast_word(t, 77ull * t, id, 1000 + 4 * t));  // 10 filed before
  l.reply(a);
  std::vector<Entry> b;
  for (uint32_t t = 240; t < 320; ++t) b.push_back(bcast_word(t, (t < 250 ? 55ull : 77ull) * t, id, 3000 + 4 * t));
  l.reply(b);
  std::vector<Message> results(200);
  const driver::Wanted w{driver::ResultKind::bcast, 100, 200, 0, id};
  ASSERT_EQ(l.client->await(w, results), Error::none);
  for (uint32_t i = 0; i < 200; ++i) {
    const uint32_t t = 100 + i;
    // The whole message, as decoding its entry alone gives it.
    const auto alone = link::decode_entry(bcast_word(t, 77ull * t, id, 0), Direction::to_node);
    ASSERT_EQ(results[i], std::get<Message>(alone)) << i;
  }
  // The second copies of 240..249 (another value) did not overwrite the first. Filed: 10 of
  // the later round, 10 of the other job, 90..99, 240..249's second copies, 300..319.
  EXPECT_EQ(l.window->ooc_count, 10u + 10u + 10u + 10u + 20u);
  EXPECT_EQ(l.window->result_cycles.load(), 3000 + 4 * 299u);
  // The filed ones are there for their waits, in the order they came.
  std::vector<Message> again(10), beyond(20), next(10);
  ASSERT_EQ(l.client->await(driver::Wanted{driver::ResultKind::bcast, 240, 10, 0, id}, again), Error::none);
  for (uint32_t i = 0; i < 10; ++i) ASSERT_EQ(again[i].data64(), 55ull * (240 + i)) << i;
  ASSERT_EQ(l.client->await(driver::Wanted{driver::ResultKind::bcast, 300, 20, 0, id}, beyond), Error::none);
  for (uint32_t i = 0; i < 20; ++i) ASSERT_EQ(beyond[i].data64(), 77ull * (300 + i)) << i;
  ASSERT_EQ(l.client->await(driver::Wanted{driver::ResultKind::bcast, 100, 10, 0, later}, next), Error::none);
  for (uint32_t i = 0; i < 10; ++i) ASSERT_EQ(next[i].data64(), 2u) << i;
  EXPECT_EQ(l.window->ooc_count, 20u);  // the other job's, and 90..99 of no wait
}

// The same round of the same site in another shape ends the wait with mismatch and the
// run is consumed, not filed (take_result's rule, once for the run).
TEST(ChannelRuns, AResultRunOfAnotherShapeOfTheCallEndsTheWaitWithMismatch) {
  Link l(2000);
  const uint64_t id = wire::make_identity(9, 0x00AB0001), other = wire::make_identity(9, 0x00AB0002);
  std::vector<Entry> a;
  for (uint32_t t = 100; t < 140; ++t) a.push_back(bcast_word(t, t, other, 5 + t));
  l.reply(a);
  std::vector<Message> results(40);
  EXPECT_EQ(l.client->await(driver::Wanted{driver::ResultKind::bcast, 100, 40, 0, id}, results), Error::mismatch);
  EXPECT_EQ(l.window->ooc_count, 0u);
}

}  // namespace
