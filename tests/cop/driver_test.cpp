// copd + copdrv + the channel client on loopback: registration rules, the
// link protocol, the Pid-register rule and out-of-context buffering, both
// access modes, protection, and failures that must end in errors, not hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <system_error>
#include <thread>

#include <cop/cop.h>
#include <cop/link.h>

#include "driver/port.h"
#include "lib/commands.h"
#include "link/auth.h"
#include "link/udp.h"
#include "stack.h"

namespace {

using cop::driver::Answer;
using cop::driver::open_port;
using cop::driver::Port;
using cop::driver::ResultKind;
using cop::driver::Wanted;
using cop::testing::Stack;
using cop::testing::wait_until;
using cop::wire::Error;
using cop::wire::Message;
using cop::wire::Opcode;
using cop::wire::Space;

std::unique_ptr<Port> open(const Stack& s, int node, bool direct, int tid = 0x40001, int tkno = -1) {
  auto r = open_port(s.driver_dir(node), direct, tid, tkno);
  EXPECT_EQ(r.status, 0) << r.error;
  return std::move(r.port);
}

uint64_t bit(int channel) { return uint64_t{1} << (channel - 1); }

// The task on port `p` as a sender of COP commands (its Pid register and partition).
cop::commands::Sender sender(const Port& p) { return {p.info().tkno, static_cast<uint8_t>(p.info().ppn)}; }

Message cmd(Opcode op, const Port& p, Space space = Space::GAS, uint32_t tag = 0) {
  return cop::commands::command(sender(p), op, space, tag);
}

Message mask_cmd(Opcode op, const Port& p, uint32_t tag, uint64_t mask, int count = 1) {
  return cop::commands::mask_command(sender(p), op, tag, mask, count);
}

// The thesis's SPMD barrier: every channel tries to initialise the masks.
std::vector<Message> barrier_frame(const Port& p, uint32_t tag, uint64_t mask) {
  return cop::commands::barrier(sender(p), tag, mask);
}

Error barrier(Port& p, uint32_t tag, uint64_t mask, Error* settc = nullptr) {
  std::vector<Answer> answers;
  auto frame = barrier_frame(p, tag, mask);
  if (Error e = p.exchange(frame, answers); e != Error::none) return e;
  if (settc) *settc = answers[1].error;
  if (answers[3].error != Error::none) return answers[3].error;
  Message exit;
  return p.await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr);
}

class Modes : public ::testing::TestWithParam<bool> {};

TEST(Copd, RefusesSecondRegistrationAndUnknownChannel) {
  Stack s(2, 4);
  // Another node (another address) for a held channel: refused.
  const pid_t dup = s.start_driver(3, "1", "127.0.0.2");
  EXPECT_EQ(cop::testing::wait_exit(dup, 8000), 1);
  EXPECT_NE(s.driver_log(3).find("already registered"), std::string::npos) << s.driver_log(3);
  const pid_t unknown = s.start_driver(4, "9");
  EXPECT_EQ(cop::testing::wait_exit(unknown, 8000), 1);
  EXPECT_NE(s.driver_log(4).find("unknown channel"), std::string::npos) << s.driver_log(4);
  EXPECT_TRUE(s.wait_for_copd_log("refused"));
}

// A raw node: a UDP socket that speaks frames itself, as its driver (it has
// the stack's cluster key and proves it) and as the tasks it enrols. A frame's
// `nonce` here says whose key MACs it (cop/link.h "Keys"): a command or an ACK
// with a nonce is the task's enrolled under that enrolment nonce, anything
// else the driver's.
struct RawNode {
  cop::link::UdpSocket sock{cop::link::parse_endpoint("127.0.0.1:0", 0)};
  std::vector<uint8_t> buf;
  cop::link::Key key;       // the cluster key (the stack's key file)
  uint64_t nc = 0x5EC2E7D21A3B4C5Dull;  // the driver's nonce
  cop::link::Key driver_key{}, down_key{};
  uint16_t channel = 0;
  uint32_t session = 0;
  uint32_t rx_next = 1;  // the reply stream's next seq
  bool ack_replies = true;
  uint32_t sup_seq = 0;
  uint64_t bad_down_macs = 0;  // frames from copd whose MAC did not verify
  std::vector<uint8_t> last_sent;  // the bytes of the last frame sent (a capture)
  explicit RawNode(const Stack& s) : key(s.key()) { sock.connect(cop::link::parse_endpoint(s.endpoint(), 0)); }
  // The key a frame is MACed with (see above); nullptr for REGISTER.
  std::optional<cop::link::Key> key_for(const cop::link::Frame& f) const {
    using cop::link::FrameType;
    if (f.type == FrameType::register_) return std::nullopt;
    if ((f.type == FrameType::command || f.type == FrameType::ack) && f.nonce != 0)
      return cop::link::session_key(cop::link::task_key(key, channel, f.tkno, f.nonce), session);
    return driver_key;
  }
  void send_raw(const std::vector<uint8_t>& bytes) { sock.send(bytes); }
  void send(cop::link::Frame f) {
    f.channel = channel;
    f.session = session;
    if (f.type != cop::link::FrameType::register_) f.ack = rx_next - 1;
    const auto k = key_for(f);
    cop::link::encode(f, last_sent, k ? &*k : nullptr);
    sock.send(last_sent);
  }
  // The next frame; reply frames of the stream only in order (acknowledged), as a node takes them.
  std::optional<cop::link::Frame> receive(int ms = 2000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      const long n = sock.receive(buf, 50);
      if (n <= 0) continue;
      const std::span<const uint8_t> bytes(buf.data(), size_t(n));
      auto d = cop::link::decode(bytes);
      if (!std::holds_alternative<cop::link::Frame>(d)) return std::nullopt;
      auto f = std::get<cop::link::Frame>(d);
      using cop::link::FrameType;
      if (f.type != FrameType::challenge && f.type != FrameType::refused && f.type != FrameType::registered &&
          !cop::link::verify(bytes, down_key))
        bad_down_macs++;
      if (f.type == cop::link::FrameType::reply && f.seq != 0) {
        if (f.seq != rx_next) continue;  // a resend of one taken already
        rx_next++;
        if (ack_replies) {
          cop::link::Frame a;
          a.type = cop::link::FrameType::ack;
          send(a);
        }
      }
      return f;
    }
    return std::nullopt;
  }
  uint8_t ppn = 0;
  // REGISTER, CHALLENGE, PROVE, REGISTERED; false (the last frame in `got`) when refused.
  bool register_channel(uint16_t c, std::optional<cop::link::Frame>* got = nullptr) {
    cop::link::Frame f;
    f.type = cop::link::FrameType::register_;
    f.nonce = nc;
    channel = c;
    send(f);
    auto r = receive();
    if (got) *got = r;
    if (!r || r->type != cop::link::FrameType::challenge || r->nonce != nc) return false;
    cop::link::Frame p;
    p.type = cop::link::FrameType::prove;
    p.channel = c;
    p.nonce = nc;
    p.info = r->info;
    cop::link::Challenge ns;
    std::copy(r->info.begin(), r->info.end(), ns.begin());
    const cop::link::Key reg = cop::link::register_key(key, c, nc, ns);
    std::vector<uint8_t> bytes;
    cop::link::encode(p, bytes, &reg);
    sock.send(bytes);
    r = receive();
    if (got) *got = r;
    if (!r || r->type != cop::link::FrameType::registered || r->nonce != nc) return false;
    session = r->session;
    driver_key = cop::link::driver_key(key, c, session, nc);
    down_key = cop::link::session_key(cop::link::channel_down_key(key, c), session);
    ppn = uint8_t(r->tkno);
    rx_next = 1;
    sup_seq = 0;
    return true;
  }
  // Tells copd (as the driver) that task tkno enrolled under enrolment nonce `token`.
  bool enrol(uint16_t tkno, uint64_t token, cop::link::FrameType type = cop::link::FrameType::enrol) {
    cop::link::Frame f;
    f.type = type;
    f.tkno = tkno;
    f.seq = ++sup_seq;
    f.nonce = token;
    send(f);
    auto r = receive();
    return r && r->type == cop::link::FrameType::sup_ack && r->seq == sup_seq;
  }
  // A command frame of task tkno enrolled under `token` (0: the driver's own).
  cop::link::Frame command(uint32_t seq, const std::vector<Message>& msgs, uint16_t tkno = 0, uint64_t token = 0) {
    cop::link::Frame f;
    f.type = cop::link::FrameType::command;
    f.tkno = tkno;
    f.nonce = token;
    f.seq = seq;
    for (size_t i = 0; i < msgs.size(); ++i)
      f.entries.push_back(cop::link::make_entry(msgs[i], cop::wire::Direction::to_controller,
                                                cop::link::EntryKind::command, seq, uint16_t(i)));
    return f;
  }
  // The answers of the next reply frame (in order), decoded; empty when none came.
  std::vector<std::pair<cop::link::Entry, Message>> answers(int ms = 2000) {
    std::vector<std::pair<cop::link::Entry, Message>> out;
    auto r = receive(ms);
    if (!r || r->type != cop::link::FrameType::reply) return out;
    for (const auto& e : r->entries)
      out.emplace_back(e, std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node)));
    return out;
  }
};

TEST(Copd, MalformedInputGetsNackAndLogNotCrash) {
  Stack s(0, 8);
  RawNode node(s);
  // A command from an address that registered nothing: refused.
  node.send(node.command(1, {cop::wire::make(Opcode::PROBE)}));
  auto r = node.receive();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, cop::link::FrameType::refused);
  // Garbage from a registered node: a frame NACK (from anyone else: only a log line).
  ASSERT_TRUE(node.register_channel(5));
  const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
  node.sock.send(junk);
  r = node.receive();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->type, cop::link::FrameType::frame_nack);
  // A bad opcode inside a good frame gets a NACK for that command only.
  auto f = node.command(2, {cop::wire::make(Opcode::PROBE), cop::wire::make(Opcode::PROBE)});
  f.entries[0].words[0] = (f.entries[0].words[0] & ~(0x7Fu << 23)) | (0x7Fu << 23);  // no such opcode
  node.send(f);
  r = node.receive();
  ASSERT_TRUE(r);
  ASSERT_EQ(r->type, cop::link::FrameType::reply);
  bool nacked = false, probed = false;
  for (const auto& e : r->entries) {
    auto m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
    if (e.index == 0 && m.ins.opcode == Opcode::NACK) {
      nacked = true;
      EXPECT_EQ(cop::wire::nack_error(m.data1), Error::unknown_opcode);
    }
    if (e.index == 1 && m.ins.opcode == Opcode::PROBE) {
      probed = true;
      EXPECT_EQ(m.addr.chno, 5);
    }
  }
  EXPECT_TRUE(nacked);
  EXPECT_TRUE(probed);
  EXPECT_TRUE(s.wait_for_copd_log("malformed"));
  EXPECT_EQ(::kill(s.copd_pid(), 0), 0);  // still serving
}

TEST(Copd, ResentFrameIsAnsweredAgainNotExecutedTwice) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(6));
  Message rmw = cop::wire::make(Opcode::RMW64, 3, Space::TAS, cop::wire::Address::tas_tag(3, 7));
  rmw.set_data64(5);
  auto frame = node.command(11, {rmw}, 3);
  auto old_value = [&]() -> std::optional<uint64_t> {
    for (int tries = 0; tries < 3; ++tries) {
      auto r = node.receive();
      if (!r) return std::nullopt;
      for (const auto& e : r->entries) {
        auto m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
        if (m.ins.opcode == Opcode::RMW64) return m.data64();
      }
    }
    return std::nullopt;
  };
  node.send(frame);
  EXPECT_EQ(old_value(), 0u);
  node.send(frame);  // the same seq: a resend
  EXPECT_EQ(old_value(), 0u);
  node.send(node.command(12, {rmw}, 3));  // a new frame executes
  EXPECT_EQ(old_value(), 5u);
}

// The old value an RMW64 of frame `seq` fetched, from the next reply frames.
std::optional<uint64_t> fetched(RawNode& node, uint32_t seq, int ms = 2000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& [e, m] : node.answers(200))
      if (m.ins.opcode == Opcode::RMW64 && e.seq == seq) return m.data64();
  }
  return std::nullopt;
}

// A heartbeat round trip: copd takes datagrams in order, so once it answers,
// it has taken everything the node sent before. Other frames received on the
// way are put in `seen`.
bool heartbeat_round_trip(RawNode& node, uint32_t seq, std::vector<cop::link::Frame>* seen = nullptr) {
  cop::link::Frame hb;
  hb.type = cop::link::FrameType::heartbeat;
  hb.seq = seq;
  node.send(hb);
  for (const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       std::chrono::steady_clock::now() < until;) {
    auto r = node.receive(2000);
    if (!r) return false;
    if (r->type == cop::link::FrameType::heartbeat_ack && r->seq == seq) return true;
    if (seen) seen->push_back(*r);
  }
  return false;
}

// The assertion is an absence: no new frame of copd's reply stream during
// `window` (whatever else copd sends meanwhile; bounded by the window, not by
// copd falling silent).
void expect_no_new_reply(RawNode& node, std::chrono::milliseconds window) {
  for (const auto until = std::chrono::steady_clock::now() + window; std::chrono::steady_clock::now() < until;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (auto r = node.receive(int(std::max<long>(1, long(left.count()))))) {
      EXPECT_NE(r->type, cop::link::FrameType::reply) << "new reply frame " << r->seq;
    }
  }
}

Message faa(uint16_t tkno, uint32_t offset, uint64_t add) {
  Message m = cop::wire::make(Opcode::RMW64, tkno, Space::TAS, cop::wire::Address::tas_tag(tkno, offset));
  m.set_data64(add);
  return m;
}

// Exactly once (cop/link.h): a command frame that arrives twice is answered
// again from copd's cache, and an old frame arriving after a newer one (a late
// duplicate) is ignored: the fetch-and-add counts each frame once.
TEST(Copd, DuplicateAndLateCommandFramesAreNotExecutedAgain) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(6));
  const uint64_t token = 0xA11CE5EC;
  ASSERT_TRUE(node.enrol(3, token));
  auto f1 = node.command(1, {faa(3, 7, 1)}, 3, token);
  auto f2 = node.command(2, {faa(3, 7, 1)}, 3, token);
  node.send(f1);
  EXPECT_EQ(fetched(node, 1), 0u);
  node.send(f1);  // the same frame again: answered as before
  EXPECT_EQ(fetched(node, 1), 0u);
  node.send(f2);
  EXPECT_EQ(fetched(node, 2), 1u);
  for (int i = 0; i < 10; ++i) {  // late and duplicated copies of both
    node.send(f1);
    node.send(f2);
  }
  node.send(node.command(3, {faa(3, 7, 1)}, 3, token));
  EXPECT_EQ(fetched(node, 3), 2u);  // 3 if a copy of f1 or f2 had run again
  node.send(node.command(4, {faa(3, 7, 0)}, 3, token));
  EXPECT_EQ(fetched(node, 4), 3u);
}

// A task's frame that arrives after its driver registered again (copd
// restarted: a new session) but before the driver enrolled the task again is
// not refused as a protection violation: it is dropped, and the task's resend
// after the enrolment executes, once.
TEST(Copd, FrameBeforeReEnrolmentIsNotRefusedAndExecutesOnItsResend) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(6));
  const uint64_t token = 0xBEEF;
  auto f = node.command(1, {faa(3, 7, 1)}, 3, token);
  node.send(f);  // TKNO 3 not enrolled (yet)
  std::vector<cop::link::Frame> seen;
  ASSERT_TRUE(heartbeat_round_trip(node, 1, &seen));
  for (const auto& r : seen)
    for (const auto& e : r.entries)
      if (e.seq == 1 && e.kind == cop::link::EntryKind::answer) {
        const auto m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
        EXPECT_NE(m.ins.opcode, Opcode::NACK) << "a frame before the enrolment got NACK "
                                              << cop::wire::error_name(cop::wire::nack_error(m.data1));
      }
  ASSERT_TRUE(node.enrol(3, token));
  node.send(f);  // the task's resend
  EXPECT_EQ(fetched(node, 1), 0u);
  node.send(node.command(2, {faa(3, 7, 0)}, 3, token));
  EXPECT_EQ(fetched(node, 2), 1u);  // executed once
}

// The element commands of a burst share their instruction word; copd decodes the first
// whole and reads only the address and data words of the next ones, with the same range
// checks: an element whose address is out of range in the middle of the run gets its
// own NACK (naming its element and error), the others execute, in order.
TEST(Copd, ElementOfARunOutOfRangeIsRefusedAlone) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(3));
  constexpr uint32_t kBase = 200, kN = 12;
  auto element = [&](Opcode op, uint32_t k) {
    Message m = cop::wire::make(op, 0, cop::wire::Space::GAS, kBase + k);
    m.ins.ppn = node.ppn;
    if (op == Opcode::WSRAM64) cop::wire::set_payload(m, 1000 + k);
    return m;
  };
  // Collects the answers of frame `seq` until each of its n commands has one (reads:
  // the data answer, which follows the command's ACK).
  auto answers_of = [&](uint32_t seq, uint32_t n, bool reads = false) {
    std::map<uint16_t, Message> got;
    for (int tries = 0; tries < 20 && got.size() < n; ++tries)
      for (const auto& [e, m] : node.answers())
        if (e.seq == seq && e.index < n && !got.count(e.index) && !(reads && m.ins.opcode == Opcode::ACK))
          got.emplace(e.index, m);
    return got;
  };
  std::vector<Message> writes;
  for (uint32_t k = 0; k < kN; ++k) writes.push_back(element(Opcode::WSRAM64, k));
  writes[5].addr.msgtag = 0x7FFFF;  // beyond the GAS: address_range
  writes[8].addr.chno = 60;         // beyond the controller's channels: channel_range
  node.send(node.command(1, writes));
  auto got = answers_of(1, kN);
  ASSERT_EQ(got.size(), kN);
  for (uint32_t k = 0; k < kN; ++k) {
    SCOPED_TRACE("element " + std::to_string(k));
    if (k == 5 || k == 8) {
      ASSERT_EQ(got[uint16_t(k)].ins.opcode, Opcode::NACK);
      EXPECT_EQ(cop::wire::nack_error(got[uint16_t(k)].data1), k == 5 ? Error::address_range : Error::channel_range);
    } else {
      EXPECT_EQ(got[uint16_t(k)].ins.opcode, Opcode::ACK);
    }
  }
  // Read back as a run: the refused elements wrote nothing, the others their values.
  std::vector<Message> reads;
  for (uint32_t k = 0; k < kN; ++k) reads.push_back(element(Opcode::RSRAM64, k));
  node.send(node.command(2, reads));
  got = answers_of(2, kN, true);
  ASSERT_EQ(got.size(), kN);
  for (uint32_t k = 0; k < kN; ++k) {
    SCOPED_TRACE("read " + std::to_string(k));
    ASSERT_EQ(got[uint16_t(k)].ins.opcode, Opcode::RSRAM64);
    EXPECT_EQ(cop::wire::payload(got[uint16_t(k)]), (k == 5 || k == 8) ? 0u : 1000u + k);
  }
  EXPECT_EQ(::kill(s.copd_pid(), 0), 0);  // still serving
}

// A frame of more than kMaxElements elements (here reads, one compact run of them, cop/link.h)
// or more than kMaxEntries entries on the wire (here adds that make no run: words 7
// and 9 by turns) is refused whole (a frame NACK), never executed.
TEST(Copd, FrameOfMoreThanMaxEntriesIsRefused) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(6));
  const Message read = cop::wire::make(Opcode::RSRAM64, 3, Space::TAS, cop::wire::Address::tas_tag(3, 7));
  std::vector<Message> run(size_t(cop::link::kMaxElements) + 1, read);
  std::vector<Message> single(size_t(cop::link::kMaxEntries) + 1, faa(3, 7, 1));
  for (size_t i = 1; i < single.size(); i += 2) single[i] = faa(3, 9, 1);  // no neighbour's address next to its own
  uint32_t seq = 0;
  for (const std::vector<Message>* many : {&run, &single}) {
    node.send(node.command(++seq, *many));
    std::vector<cop::link::Frame> seen;
    ASSERT_TRUE(heartbeat_round_trip(node, seq, &seen));
    bool nacked = false;
    for (const auto& r : seen) {
      nacked |= r.type == cop::link::FrameType::frame_nack;
      EXPECT_NE(r.type, cop::link::FrameType::reply) << "a frame of " << many->size() << " entries was answered";
    }
    EXPECT_TRUE(nacked) << many->size();
  }
  node.send(node.command(++seq, {faa(3, 7, 0)}));
  EXPECT_EQ(fetched(node, seq), 0u);  // none of its adds executed
}

// A reply frame the node does not acknowledge (lost on the way) is sent
// again until it is: here a broadcast result, which only copd has.
TEST(Copd, LostResultIsResentUntilAcknowledged) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(4));
  node.ack_replies = false;
  auto gas = [&](Opcode op, uint32_t tag) {
    Message m = cop::wire::make(op, 0, Space::GAS, tag);
    m.ins.ppn = node.ppn;
    return m;
  };
  Message setbm = gas(Opcode::SETBM, 50);
  setbm.set_data64(bit(4));
  setbm.set_count(1);
  Message b = gas(Opcode::BCAST64, 50);
  b.set_data64(4242);
  node.send(node.command(1, {gas(Opcode::LOCK, 0), setbm, b, gas(Opcode::UNLOCK, 0)}));
  auto result_in = [&](uint32_t* seq) -> std::optional<uint64_t> {
    for (int frames = 0; frames < 10; ++frames) {
      const uint32_t at = node.rx_next;
      auto r = node.receive(1000);
      if (!r) return std::nullopt;
      if (r->type != cop::link::FrameType::reply) continue;
      for (const auto& e : r->entries) {
        auto m = std::get<Message>(cop::wire::decode(e.span(), cop::wire::Direction::to_node));
        if (e.kind == cop::link::EntryKind::broadcast && m.ins.opcode == Opcode::BCAST64) {
          *seq = at;
          return m.data64();
        }
      }
    }
    return std::nullopt;
  };
  uint32_t first = 0, again = 0;
  ASSERT_EQ(result_in(&first), 4242u);
  // "Lose" it: the node still expects that frame, and copd must send it again.
  node.rx_next = first;
  ASSERT_EQ(result_in(&again), 4242u);
  EXPECT_EQ(again, first);
  // Acknowledged, it stops: nothing more of the stream comes.
  node.ack_replies = true;
  cop::link::Frame ack;
  ack.type = cop::link::FrameType::ack;
  node.send(ack);
  std::vector<cop::link::Frame> seen;
  ASSERT_TRUE(heartbeat_round_trip(node, 4711, &seen)) << "copd did not answer a heartbeat sent after the acknowledgment";
  for (const auto& f : seen) EXPECT_NE(f.type, cop::link::FrameType::reply) << "new reply frame " << f.seq;
  // Nothing new of the stream for twice copd's longest resend timer (240 ms)
  // after it took the acknowledgment.
  expect_no_new_reply(node, std::chrono::milliseconds(500));
}

// Who sent a frame is the link's to say (the key of its MAC), never the
// frame's: a wrong key, a TKNO nobody enrolled and a task claiming U/S are
// refused and change nothing; a frame without the task's key is not answered
// (an answer could reach the task it names).
TEST(Copd, ForgedKeyTknoAndSupervisorAreRefused) {
  Stack s(0, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(2));
  const uint64_t token = 0x7A5C0FFEE;
  ASSERT_TRUE(node.enrol(3, token));
  auto write = [&](uint16_t tkno, uint64_t v) {
    Message w = cop::wire::make(Opcode::WSRAM64, tkno, Space::TAS, cop::wire::Address::tas_tag(tkno, 4));
    w.ins.ppn = node.ppn;
    w.set_data64(v);
    return w;
  };
  auto error_of = [&](uint32_t seq) -> std::optional<Error> {
    for (int frames = 0; frames < 10; ++frames)
      for (const auto& [e, m] : node.answers(1000))
        if (e.seq == seq && e.index == 0 && (m.ins.opcode == Opcode::ACK || m.ins.opcode == Opcode::NACK))
          return m.ins.opcode == Opcode::ACK ? Error::none : cop::wire::nack_error(m.data1);
    return std::nullopt;
  };
  // Not answered: nothing for frame `seq` up to a heartbeat sent after it.
  uint32_t hb = 100;
  auto unanswered = [&](uint32_t seq) {
    std::vector<cop::link::Frame> seen;
    if (!heartbeat_round_trip(node, ++hb, &seen)) return false;
    for (const auto& f : seen)
      for (const auto& e : f.entries)
        if (e.seq == seq && e.kind == cop::link::EntryKind::answer) return false;
    return true;
  };
  node.send(node.command(1, {write(3, 77)}, 3, token));
  EXPECT_EQ(error_of(1), Error::none);
  node.send(node.command(2, {write(3, 13)}, 3, token ^ 1));  // another task's key
  EXPECT_TRUE(unanswered(2));
  node.send(node.command(3, {write(4, 13)}, 4, token));  // a TKNO nobody enrolled
  EXPECT_TRUE(unanswered(3));
  node.send(node.command(4, {write(3, 13)}, 600, token));  // beyond the channel's tasks
  EXPECT_TRUE(unanswered(4));
  Message sas = cop::wire::make(Opcode::WSRAM64, 3, Space::SAS, 3);
  sas.ins.supervisor = true;  // U/S from a task
  sas.set_data64(1);
  node.send(node.command(5, {sas}, 3, token));
  EXPECT_EQ(error_of(5), Error::privilege);
  // Nothing changed.
  Message rd = cop::wire::make(Opcode::RSRAM64, 3, Space::TAS, cop::wire::Address::tas_tag(3, 4));
  rd.ins.ppn = node.ppn;
  Message rs = cop::wire::make(Opcode::RSRAM64, 3, Space::SAS, 3);
  node.send(node.command(6, {rd, rs}, 3, token));
  std::optional<uint64_t> tas, sas_word;
  for (int frames = 0; frames < 10 && !(tas && sas_word); ++frames)
    for (const auto& [e, m] : node.answers(1000))
      if (e.seq == 6 && m.ins.opcode == Opcode::RSRAM64) (e.index == 0 ? tas : sas_word) = m.data64();
  EXPECT_EQ(tas, 77u);
  EXPECT_EQ(sas_word, 0u);
  EXPECT_TRUE(s.wait_for_copd_log("MAC is not the task's")) << s.copd_log();
  // The task ended: its key is forgotten.
  ASSERT_TRUE(node.enrol(3, 0, cop::link::FrameType::task_end));
  node.send(node.command(7, {write(3, 13)}, 3, token));
  EXPECT_TRUE(unanswered(7));
  EXPECT_EQ(node.bad_down_macs, 0u);
}

// copdrv killed and started again on its node within the lease takes its
// channel back (copd fails what the old one left waiting); another node is
// still refused (RefusesSecondRegistrationAndUnknownChannel).
TEST_P(Modes, RestartedDriverTakesItsChannelBack) {
  Stack s(2);
  {
    auto p = open(s, 1, GetParam());
    ASSERT_TRUE(p);
  }
  s.kill_driver(1);
  const pid_t again = s.start_driver(1);
  ASSERT_TRUE(s.wait_for_driver_log(1, "registered with copd", 2)) << s.driver_log(1) << s.copd_log();
  EXPECT_EQ(::waitpid(again, nullptr, WNOHANG), 0);  // still running
  EXPECT_TRUE(s.wait_for_copd_log("taken over by a new driver")) << s.copd_log();
  auto p1 = open(s, 1, GetParam());
  auto p2 = open(s, 2, GetParam());
  ASSERT_TRUE(p1 && p2);
  Error e2 = Error::none;
  std::thread t([&] { e2 = barrier(*p2, 60, bit(1) | bit(2)); });
  EXPECT_EQ(barrier(*p1, 60, bit(1) | bit(2)), Error::none);
  t.join();
  EXPECT_EQ(e2, Error::none);
}

// copd restarted: each copdrv registers again (a new session of the reply
// stream) and enrols its tasks again, so a task that was there before goes on
// (after the link_down of the gap), with its token.
TEST_P(Modes, TasksGoOnAfterCopdRestarts) {
  Stack s(2);
  auto p = open(s, 1, GetParam());
  ASSERT_TRUE(p);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
  ASSERT_EQ(p->exchange(probe, a), Error::none);
  s.kill_copd();
  s.start_copd();
  // Both drivers register again (the copd log counts registrations of this copd too).
  ASSERT_TRUE(wait_until([&] { return s.count_in_copd_log("registered by") >= 4; }, std::chrono::seconds(10)))
      << "the two drivers did not register with the restarted copd within 10 s:\n"
      << s.copd_log();
  // The CSR said link_down meanwhile; once the channel is up the same task's
  // commands are accepted again (its enrolment renewed), not refused.
  Error e = Error::link_down;
  ASSERT_TRUE(wait_until([&] { return (e = p->exchange(probe, a)) == Error::none; }, std::chrono::seconds(10)))
      << "the task's commands still fail 10 s after copd came back: " << cop::wire::error_name(e);
  ASSERT_TRUE(a[0].has_data);
  EXPECT_EQ(a[0].error, Error::none);
  EXPECT_EQ(a[0].data.addr.chno, 1);
}

// A frame whose commands wait for service (here a LOCK held by another
// channel) is not lost: copd answers its resends "in progress", and the
// waiting task does not run into its retry limit however long the wait.
TEST_P(Modes, CommandsWaitingForServiceDoNotExhaustTheRetryLimit) {
  Stack s(2, 8, {"--lock-limit-ms", "0"});  // the LOCK is held for as long as the test needs
  auto holder = open(s, 1, GetParam());
  auto waiter = open(s, 2, GetParam());
  ASSERT_TRUE(holder && waiter);
  cop::driver::LinkOptions quick;
  quick.ack_timeout_ms = 10;
  quick.retry_limit = 2;  // 10 + 20 + 40 ms without the in-progress word
  waiter->set_link_options(quick);
  std::vector<Answer> a;
  std::vector<Message> lock = {cmd(Opcode::LOCK, *holder)};
  ASSERT_EQ(holder->exchange(lock, a), Error::none);
  ASSERT_EQ(a[0].error, Error::none);
  Error waited = Error::timeout;
  std::atomic<bool> finished{false};
  std::vector<Answer> wa;
  const uint64_t resends_before = waiter->window()->resends.load();
  std::thread t([&] {
    std::vector<Message> f = {cmd(Opcode::LOCK, *waiter), cmd(Opcode::PROBE, *waiter), cmd(Opcode::UNLOCK, *waiter)};
    waited = waiter->exchange(f, wa);
    finished = true;
  });
  // The point is the length of the wait: the waiter's frame is resent more
  // often than its retry budget allows, and the waiter still waits.
  const uint64_t beyond_budget = uint64_t(quick.retry_limit) + 2;
  EXPECT_TRUE(wait_until([&] { return finished || waiter->window()->resends.load() - resends_before >= beyond_budget; },
                         std::chrono::seconds(10)))
      << "the waiter resent its frame only " << waiter->window()->resends.load() - resends_before << " times in 10 s";
  EXPECT_FALSE(finished) << "the waiter gave up while the LOCK was held: "
                         << (finished ? cop::wire::error_name(waited) : "");
  std::vector<Message> unlock = {cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(unlock, a), Error::none);
  t.join();
  ASSERT_EQ(waited, Error::none);
  ASSERT_EQ(wa.size(), 3u);
  for (const auto& x : wa) EXPECT_EQ(x.error, Error::none);
  ASSERT_TRUE(wa[1].has_data);
  EXPECT_EQ(wa[1].data.addr.chno, 2);
}

// The deadlock timer (copd --lock-limit-ms, default 500 ms; seed 000 ch. IV: a LOCK
// stops the poll counter at its channel): a task that sends LOCK and never its
// UNLOCK stops the other channels only until copd takes the lock back. The other
// channel's operations complete; the holder's UNLOCK gets NACK lock_timeout.
TEST_P(Modes, ALockHeldTooLongIsTakenBackAndTheOtherChannelsRun) {
  Stack s(2);
  auto holder = open(s, 1, GetParam());
  auto other = open(s, 2, GetParam());
  ASSERT_TRUE(holder && other);
  std::vector<Answer> a;
  std::vector<Message> lock = {cmd(Opcode::LOCK, *holder)};
  ASSERT_EQ(holder->exchange(lock, a), Error::none);
  ASSERT_EQ(a[0].error, Error::none);
  // Ten fetch-and-adds on the other channel's own task address space, each checked.
  auto done = std::async(std::launch::async, [&] {
    const uint32_t word = cop::wire::Address::tas_tag(other->info().tkno, 3);
    int right = 0;
    for (uint64_t i = 0; i < 10; ++i) {
      Message rmw = cmd(Opcode::RMW64, *other, Space::TAS, word);
      rmw.set_data64(1);
      std::vector<Message> f = {rmw};
      std::vector<Answer> b;
      if (other->exchange(f, b) != Error::none || b[0].error != Error::none || !b[0].has_data) break;
      if (b[0].data.data64() == i) right++;
    }
    return right;
  });
  // Bounded: with no deadlock timer the operations wait for ever; copd killed after
  // 20 s turns that into the failure below.
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(done.get(), 10) << "the other channel's operations did not all complete while a LOCK was held";
  EXPECT_TRUE(s.wait_for_copd_log("taken back")) << s.copd_log();
  std::vector<Message> unlock = {cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(unlock, a), Error::none);
  EXPECT_EQ(a[0].error, Error::lock_timeout);
  // The holder starts clean with its next locked sequence.
  std::vector<Message> again = {cmd(Opcode::LOCK, *holder), cmd(Opcode::PROBE, *holder), cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(again, a), Error::none);
  for (const Answer& x : a) EXPECT_EQ(x.error, Error::none);
}

// A frame whose commands wait for service (here: a second barrier on a tag whose
// first is still waiting for the other channel) is answered "in progress" when it
// is resent, which restarts the retry count; the wait still ends at the task's
// timeout (CopTimeout, LinkOptions::wait_timeout_ms) with timeout, and the task's
// next frames work.
TEST_P(Modes, CommandsKeptInProgressStillTimeOut) {
  Stack s(2);
  auto one = open(s, 1, GetParam());
  auto two = open(s, 2, GetParam());
  ASSERT_TRUE(one && two);
  const uint32_t tag = 70;
  const uint64_t mask = bit(1) | bit(2);
  std::vector<Answer> a;
  auto first = barrier_frame(*one, tag, mask);
  ASSERT_EQ(one->exchange(first, a), Error::none);
  ASSERT_EQ(a[3].error, Error::none);  // channel 1 is in the first barrier, channel 2 is not
  cop::driver::LinkOptions o;
  o.ack_timeout_ms = 10;
  o.retry_limit = 2;
  o.wait_timeout_ms = 500;
  one->set_link_options(o);
  auto second = std::async(std::launch::async, [&] {
    auto frame = barrier_frame(*one, tag, mask);  // the next barrier on the tag: held by copd
    std::vector<Answer> b;
    return one->exchange(frame, b);
  });
  // Bounded: a wait without end is turned into link_down by killing copd after 20 s.
  if (second.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(second.get(), Error::timeout);
  // Channel 2 completes the first barrier; channel 1's next frame is answered.
  EXPECT_EQ(barrier(*two, tag, mask), Error::none);
  std::vector<Message> probe = {cmd(Opcode::PROBE, *one)};
  ASSERT_EQ(one->exchange(probe, a), Error::none);
  EXPECT_EQ(a[0].error, Error::none);
}

// copdrv killed -9 and not yet reaped (a zombie, which kill(pid, 0) still finds): its
// node's task's next call fails with link_down instead of going on through the
// channel socket it shares with the dead driver.
TEST_P(Modes, KilledDriverEndsItsTasksNextCallEvenAsAZombie) {
  Stack s(2);
  auto p = open(s, 1, GetParam());
  ASSERT_TRUE(p);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
  ASSERT_EQ(p->exchange(probe, a), Error::none);
  const pid_t driver = s.driver_pid(1);
  ASSERT_EQ(::kill(driver, SIGKILL), 0);
  // Not reaped (the Stack reaps it at the end): wait until the kernel shows the zombie.
  auto state = [&] {
    const std::string stat = cop::testing::read_file("/proc/" + std::to_string(driver) + "/stat");
    const size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
  };
  ASSERT_TRUE(wait_until([&] { return state() == 'Z'; }, std::chrono::seconds(10))) << "state " << state();
  EXPECT_EQ(p->exchange(probe, a), Error::link_down);
  EXPECT_EQ(p->exchange(probe, a), Error::link_down);
}

// A member killed before it calls (its channel's only task): copdrv sees its socket
// close and tells copd (task_end); the root's barrier over that channel, begun after,
// ends with task_ended once the channel has stayed without a task for copd's lease,
// not at the root's own timeout (it would be timeout) or never.
TEST_P(Modes, AMemberThatDiesBeforeItCallsEndsTheRootsWaitWithTaskEnded) {
  Stack s(2, 8, {"--verbose"});
  auto root = open(s, 1, GetParam());
  auto member = open(s, 2, GetParam(), 0x40003);
  ASSERT_TRUE(root && member);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *member)};
  ASSERT_EQ(member->exchange(probe, a), Error::none);  // as cop_mytid does
  member.reset();  // killed: its connection to copdrv closes
  ASSERT_TRUE(wait_until([&] { return s.count_in_copd_log("ended") >= 1; }, std::chrono::seconds(10)))
      << "copd never heard that the member ended:\n"
      << s.copd_log();
  cop::driver::LinkOptions o;
  o.wait_timeout_ms = 8000;  // the root's CopTimeout: reached, the answer would be timeout
  root->set_link_options(o);
  auto waited = std::async(std::launch::async, [&] { return barrier(*root, 80, bit(1) | bit(2)); });
  if (waited.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(waited.get(), Error::task_ended);
}

long rss_kb(pid_t pid) {
  const std::string status = cop::testing::read_file("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("VmRSS:");
  return at == std::string::npos ? -1 : std::atol(status.c_str() + at + 6);
}

// copd's state per channel is bounded: random datagrams (garbage, and frames
// with random TKNOs, tokens and sequence numbers from a registered node) do
// not grow it, and copd keeps serving.
TEST(Copd, StateBoundedUnderRandomDatagrams) {
  Stack s(1, 8);
  RawNode node(s);
  ASSERT_TRUE(node.register_channel(2));
  std::mt19937_64 rng(42);
  auto sync = [&] { return heartbeat_round_trip(node, uint32_t(rng())); };
  ASSERT_TRUE(sync());
  const long before = rss_kb(s.copd_pid());
  std::vector<uint8_t> bytes;
  for (int round = 0; round < 60; ++round) {
    for (int i = 0; i < 1000; ++i) {
      if (i % 2) {
        bytes.resize(17 + rng() % 300);
        for (auto& b : bytes) b = uint8_t(rng());
        node.sock.send(bytes);
      } else {
        std::vector<Message> msgs(1 + rng() % 8, cop::wire::make(Opcode::PROBE));
        auto f = node.command(uint32_t(rng()), msgs, uint16_t(rng()), rng() | 1);
        node.send(f);
      }
    }
    ASSERT_TRUE(sync()) << "round " << round;
  }
  const long after = rss_kb(s.copd_pid());
  EXPECT_LT(after - before, 16 * 1024) << before << " kB before, " << after << " kB after";
  // Still serving its real node.
  auto p = open(s, 1, true);
  ASSERT_TRUE(p);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
  EXPECT_EQ(p->exchange(probe, a), Error::none);
}

// A bad fault spec (cop/link/fault.h) is one line and a non-zero exit, from
// either daemon's option or the environment.
TEST(Faults, BadSpecIsOneLineAndNonZeroExit) {
  char tmpl[] = "/tmp/copfaults.XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  struct Case {
    std::vector<std::string> args;
    const char* env;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{COPD_BIN, "--listen", "127.0.0.1:0", "--faults", "drop=2"}, nullptr, "not a probability"},
      {{COPD_BIN, "--listen", "127.0.0.1:0"}, "drop=0.1,bogus=1", "unknown fault 'bogus'"},
      {{COPDRV_BIN, "--channel", "1", "--controller", "127.0.0.1:9", "--faults", "delay_ms=x"}, nullptr, "delay_ms"},
  };
  int k = 0;
  for (const Case& c : cases) {
    const std::string log = dir + "/" + std::to_string(k++) + ".log";
    if (c.env) ::setenv("COP_FAULTS", c.env, 1);
    const pid_t p = cop::testing::spawn(c.args, log);
    ::unsetenv("COP_FAULTS");
    EXPECT_EQ(cop::testing::wait_exit(p, 5000), 2) << c.args[0];
    const std::string text = cop::testing::read_file(log);
    EXPECT_NE(text.find(c.want), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST(Copd, SigtermShutsDownCleanly) {
  Stack s(1, 4);
  EXPECT_EQ(s.terminate_copd(), 0);
  EXPECT_NE(s.copd_log().find("shutting down"), std::string::npos);
}

TEST_P(Modes, ProbeNamesTheChannel) {
  Stack s(3);
  for (int k = 1; k <= 3; ++k) {
    auto p = open(s, k, GetParam());
    ASSERT_TRUE(p);
    EXPECT_EQ(p->info().chno, k);
    std::vector<Answer> a;
    std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
    ASSERT_EQ(p->exchange(probe, a), Error::none);
    ASSERT_TRUE(a[0].has_data);
    EXPECT_EQ(a[0].data.addr.chno, k);
  }
}

TEST_P(Modes, SpmdBarrierFourNodesTwoTasksEach) {
  Stack s(4);
  const uint64_t mask = bit(1) | bit(2) | bit(3) | bit(4);
  std::atomic<int> initialised{0}, in_use{0}, failures{0};
  constexpr int kRounds = 25;
  std::vector<std::thread> nodes;
  for (int k = 1; k <= 4; ++k)
    nodes.emplace_back([&, k] {
      auto p = open(s, k, GetParam());
      auto other = open(s, k, GetParam(), 0x40002);  // a second task sharing the channel
      if (!p || !other) {
        failures++;
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        Error settc = Error::none;
        if (barrier(*p, 40, mask, &settc) != Error::none) failures++;
        (settc == Error::none ? initialised : in_use)++;
        // The other local task reads meanwhile through the same channel.
        std::vector<Answer> a;
        std::vector<Message> probe = {cmd(Opcode::PROBE, *other)};
        if (other->exchange(probe, a) != Error::none || !a[0].has_data || a[0].data.addr.chno != k) failures++;
      }
    });
  for (auto& t : nodes) t.join();
  EXPECT_EQ(failures.load(), 0);
  // Accessed bits: exactly one channel a round initialises the masks.
  EXPECT_EQ(initialised.load(), kRounds);
  EXPECT_EQ(in_use.load(), 3 * kRounds);
}

TEST_P(Modes, BroadcastBeforeTheReceiverAsksIsBufferedNotLost) {
  Stack s(3);
  auto sender = open(s, 1, GetParam());
  auto receiver = open(s, 2, GetParam());
  auto late = open(s, 3, GetParam());
  ASSERT_TRUE(sender && receiver && late);
  std::vector<Message> frame = {cmd(Opcode::LOCK, *sender), mask_cmd(Opcode::SETBM, *sender, 100, bit(2) | bit(3), 3)};
  for (uint32_t i = 0; i < 3; ++i) {
    Message b = cmd(Opcode::BCAST64, *sender, Space::GAS, 100 + i);
    b.set_data64(1000 + i);
    frame.push_back(b);
  }
  frame.push_back(cmd(Opcode::UNLOCK, *sender));
  std::vector<Answer> a;
  ASSERT_EQ(sender->exchange(frame, a), Error::none);
  for (const auto& x : a) EXPECT_EQ(x.error, Error::none);
  // The driver files them meanwhile (nobody reads the receivers' channels): wait for it.
  EXPECT_TRUE(wait_until([&] { return receiver->window()->filed.load() >= 3u; }, std::chrono::seconds(10)))
      << "the driver filed " << receiver->window()->filed.load() << " of the 3 broadcasts in 10 s";
  for (Port* p : {receiver.get(), late.get()}) {
    Message got[3];
    ASSERT_EQ(p->await(Wanted{ResultKind::bcast, 100, 3, 1}, got, nullptr), Error::none);
    for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(got[i].data64(), 1000 + i);
    EXPECT_EQ(p->window()->overflows.load(), 0u);
  }
}

TEST_P(Modes, OnlyTheOwnerWritesItsTaskAddressSpace) {
  Stack s(2);
  auto owner = open(s, 1, GetParam());
  auto other = open(s, 2, GetParam());
  ASSERT_TRUE(owner && other);
  const uint32_t tag = cop::wire::Address::tas_tag(owner->info().tkno, 4);
  Message w = cmd(Opcode::WSRAM64, *owner, Space::TAS, tag);
  w.set_data64(77);
  std::vector<Answer> a;
  std::vector<Message> f = {w};
  ASSERT_EQ(owner->exchange(f, a), Error::none);
  EXPECT_EQ(a[0].error, Error::none);
  Message foreign = cmd(Opcode::WSRAM64, *other, Space::TAS, tag);
  foreign.ins.z = true;
  foreign.addr.chno = 1;
  foreign.set_data64(13);
  f = {foreign};
  ASSERT_EQ(other->exchange(f, a), Error::none);
  EXPECT_EQ(a[0].error, Error::protection);
  Message read = cmd(Opcode::RSRAM64, *other, Space::TAS, tag);
  read.ins.z = true;
  read.addr.chno = 1;
  f = {read};
  ASSERT_EQ(other->exchange(f, a), Error::none);
  ASSERT_TRUE(a[0].has_data);
  EXPECT_EQ(a[0].data.data64(), 77u);
}

// A task that ends holding the LOCK, a terminal-count mask it set and words in its
// task address space leaves none of it behind (copdrv reports the end, copd's
// controller runs end_task): the other channel's LOCK and SETTC on the same tag
// are serviced, and the next task with the same TKNO reads a zero space.
TEST_P(Modes, TaskEndingReleasesItsLockMaskAndAddressSpace) {
  Stack s(2);
  auto holder = open(s, 1, GetParam());
  auto waiter = open(s, 2, GetParam());
  ASSERT_TRUE(holder && waiter);
  const int tkno = holder->info().tkno;
  const uint32_t tag = 50, tas = cop::wire::Address::tas_tag(uint32_t(tkno), 4);
  const uint64_t mask = bit(1) | bit(2);
  Message w = cmd(Opcode::WSRAM64, *holder, Space::TAS, tas);
  w.set_data64(77);
  std::vector<Message> f = {cmd(Opcode::LOCK, *holder), mask_cmd(Opcode::SETTC, *holder, tag, mask), w};
  std::vector<Answer> a;
  ASSERT_EQ(holder->exchange(f, a), Error::none);
  for (const Answer& x : a) ASSERT_EQ(x.error, Error::none);
  holder.reset();  // the task ends with the LOCK held, no UNLOCK
  // Bounded: if the LOCK were never released the exchange would wait on; copd killed
  // after 20 s turns that into an error the assertions below report.
  auto taken = std::async(std::launch::async, [&] {
    std::vector<Message> g = {cmd(Opcode::LOCK, *waiter), mask_cmd(Opcode::SETTC, *waiter, tag, mask),
                              cmd(Opcode::UNLOCK, *waiter)};
    std::vector<Answer> b;
    const Error e = waiter->exchange(g, b);
    return std::make_pair(e, b);
  });
  if (taken.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  const auto [e, b] = taken.get();
  ASSERT_EQ(e, Error::none);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].error, Error::none);  // the LOCK was released
  EXPECT_EQ(b[1].error, Error::none);  // the mask entry it set was freed (not mask_in_use)
  EXPECT_EQ(b[2].error, Error::none);
  // The next task with the same number reads its space as zero.
  auto next = open(s, 1, GetParam(), 0x40003, tkno);
  ASSERT_TRUE(next);
  ASSERT_EQ(next->info().tkno, tkno);
  f = {cmd(Opcode::RSRAM64, *next, Space::TAS, tas)};
  ASSERT_EQ(next->exchange(f, a), Error::none);
  ASSERT_TRUE(a[0].has_data);
  EXPECT_EQ(a[0].data.data64(), 0u);
}

// Nodes 1-3 wait in a barrier over all 4 channels; `kill` ends a piece of
// the stack; every waiting task must get link_down.
void waiting_tasks_get_link_down(Stack& s, bool direct, uint32_t tag, const std::function<void(Port&)>& kill) {
  const uint64_t mask = bit(1) | bit(2) | bit(3) | bit(4);
  std::vector<std::unique_ptr<Port>> ports;
  for (int k = 1; k <= 4; ++k) {
    ports.push_back(open(s, k, direct));
    ASSERT_TRUE(ports.back());
  }
  auto observer = open(s, 4, direct, 0x40005);  // another task of node 4: see below
  ASSERT_TRUE(observer);
  std::vector<Error> results(3, Error::none);
  std::vector<std::thread> waiting;
  for (int k = 0; k < 3; ++k) waiting.emplace_back([&, k] { results[size_t(k)] = barrier(*ports[size_t(k)], tag, mask); });
  // Nodes 1-3 are in the barrier once the terminal-count entry waits for
  // channel 4 alone: its live mask, read with RSRAM64 M by another task of
  // node 4 (node 4's own task must find its driver gone at its next command).
  uint64_t pending = 0;
  EXPECT_TRUE(wait_until(
      [&] {
        Message read = cmd(Opcode::RSRAM64, *observer, Space::GAS, tag);
        read.ins.m = true;
        std::vector<Message> f = {read};
        std::vector<Answer> a;
        pending = observer->exchange(f, a) == Error::none && a[0].has_data ? a[0].data.data64() : 0;
        return pending == bit(4);
      },
      std::chrono::seconds(10)))
      << "nodes 1-3 not all in the barrier after 10 s: pending mask " << pending;
  kill(*ports[3]);
  // Every waiter returns (copd's lease or the driver's silence limit ends the wait; a
  // hang is caught by the test's CTest TIMEOUT), and each with link_down.
  for (auto& t : waiting) t.join();
  for (Error e : results) EXPECT_EQ(e, Error::link_down);
}

TEST_P(Modes, KilledDriverGivesEveryWaitingTaskAnError) {
  Stack s(4);
  waiting_tasks_get_link_down(s, GetParam(), 7, [&](Port& node4) {
    s.kill_driver(4);
    // Node 4's own task sees its driver gone.
    EXPECT_EQ(barrier(node4, 7, bit(1) | bit(2) | bit(3) | bit(4)), Error::link_down);
  });
  EXPECT_TRUE(s.wait_for_copd_log("channel 4 down")) << s.copd_log();
}

TEST_P(Modes, KilledCopdGivesEveryWaitingTaskAnError) {
  Stack s(4);
  waiting_tasks_get_link_down(s, GetParam(), 9, [&](Port&) { s.kill_copd(); });
}

// A barrier voided by a task that ended before its channel contributed: copd sends
// NACK task_ended for the tag to every channel of the mask, and a channel whose tasks
// have gone keeps it filed. The next tasks there (the next run) must not take it for
// their own barrier on the same tag (it would fail at once): a fresh task starts with
// nothing its predecessors left (seed 000 ch. V), and their barrier completes.
TEST_P(Modes, NextTasksDoNotTakeTheNackOfABarrierVoidedBefore) {
  Stack s(2);
  const uint32_t tag = 11;
  const uint64_t mask = bit(1) | bit(2);
  {
    auto first = open(s, 1, GetParam());
    ASSERT_TRUE(first);
    std::vector<Answer> answers;
    auto frame = barrier_frame(*first, tag, mask);
    ASSERT_EQ(first->exchange(frame, answers), Error::none);
    ASSERT_EQ(answers[3].error, Error::none);  // BENTRY taken: channel 1 is in the barrier
    open(s, 2, GetParam(), 0x40007).reset();   // channel 2's task ends before its BENTRY
    // The barrier is void: channel 1 hears it (copd sent the NACKs to both channels).
    Message exit;
    EXPECT_EQ(first->await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr),
              Error::task_ended);
  }
  auto one = open(s, 1, GetParam(), 0x40003);
  auto two = open(s, 2, GetParam(), 0x40005);
  ASSERT_TRUE(one && two);
  auto at_one = std::async(std::launch::async, [&] { return barrier(*one, tag, mask); });
  auto at_two = std::async(std::launch::async, [&] { return barrier(*two, tag, mask); });
  // Bounded: a barrier that waited on ends with copd killed after 20 s (link_down).
  const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  if (at_one.wait_until(by) != std::future_status::ready || at_two.wait_until(by) != std::future_status::ready)
    s.kill_copd();
  EXPECT_EQ(at_one.get(), Error::none);
  EXPECT_EQ(at_two.get(), Error::none);
}

INSTANTIATE_TEST_SUITE_P(Access, Modes, ::testing::Values(true, false),
                         [](const auto& p) { return p.param ? "direct" : "normal"; });

TEST(Link, NoAnswerEndsInRetryLimitNotAHang) {
  // A controller that never answers: a bound UDP socket nobody reads.
  cop::link::UdpSocket silent(cop::link::parse_endpoint("127.0.0.1:0", 0));
  cop::link::UdpSocket node(cop::link::parse_endpoint("127.0.0.1:0", 0));
  node.connect(silent.local());
  auto window = std::make_unique<cop::driver::Window>();
  cop::driver::init_window(window.get(), ::getpid(), 1);
  window->last_heard_ns.store(cop::driver::monotonic_ns());
  cop::driver::LinkOptions o;
  o.ack_timeout_ms = 20;
  o.retry_limit = 3;
  o.dead_ms = 60000;
  cop::driver::ChannelClient client(window.get(), node.fd(), 1, cop::link::Key{}, cop::link::Key{}, o);
  std::vector<Answer> a;
  std::vector<Message> probe = {cop::wire::make(Opcode::PROBE, 1)};
  EXPECT_EQ(client.exchange(probe, a), Error::retry_limit);
  EXPECT_EQ(window->resends.load(), 3u);
}

}  // namespace

// copd --io-threads (cop/controller/server_io.cpp): the sockets of one listen port
// (SO_REUSEPORT) each get the datagrams of channels (c-1) mod N, by the frame's
// channel field, whatever address they come from; the group's first socket still
// refuses a port another socket holds (a second copd), as a socket without the group.
TEST(Copd, IoThreadSocketsEachGetTheirChannels) {
  using cop::link::UdpSocket;
  constexpr unsigned n = 3;
  std::vector<UdpSocket> group;
  group.emplace_back(cop::link::parse_endpoint("127.0.0.1:0", 0), UdpSocket::Group::first);
  for (unsigned i = 1; i < n; ++i) group.emplace_back(group[0].local(), UdpSocket::Group::join);
  ASSERT_TRUE(cop::link::steer_by_channel(group[0].fd(), n)) << std::strerror(errno);
  std::vector<UdpSocket> nodes;
  for (int k = 0; k < 4; ++k) nodes.emplace_back(cop::link::parse_endpoint("127.0.0.1:0", 0));
  const sockaddr_in to = group[0].local();
  for (uint16_t c = 1; c <= 12; ++c) {
    std::vector<uint8_t> frame(cop::link::kHeaderBytes, 0);
    std::memcpy(frame.data() + 6, &c, sizeof c);  // the channel field (cop/link.h)
    ASSERT_TRUE(nodes[c % nodes.size()].send_to(frame, to));
  }
  std::vector<uint8_t> buf;
  for (unsigned i = 0; i < n; ++i) {
    std::vector<uint16_t> got;
    while (group[i].receive(buf, got.size() < 4 ? 2000 : 0) > 0) {
      uint16_t c = 0;
      std::memcpy(&c, buf.data() + 6, sizeof c);
      got.push_back(c);
    }
    ASSERT_EQ(got.size(), 4u) << "socket " << i;
    for (uint16_t c : got) EXPECT_EQ(cop::link::channel_socket(c, n), i) << "channel " << c;
  }
  UdpSocket plain(cop::link::parse_endpoint("127.0.0.1:0", 0));
  EXPECT_THROW(UdpSocket(plain.local(), UdpSocket::Group::first), std::system_error);
  EXPECT_THROW(UdpSocket(group[0].local(), UdpSocket::Group::first), std::system_error);
}
