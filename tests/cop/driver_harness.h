// copd, copdrv and the channel client on loopback, for tests/cop/driver*_test.cpp:
// ports opened on a test stack (stack.h), the commands the tests send, a raw node that
// speaks frames itself, and bounded waits.
#pragma once
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
#include "wait.h"

namespace {

using cop::driver::Answer;
using cop::driver::open_port;
using cop::driver::Port;
using cop::driver::ResultKind;
using cop::driver::Wanted;
using cop::testing::Stack;
using cop::wire::Error;
using cop::wire::Message;
using cop::wire::Opcode;
using cop::wire::Space;

inline std::unique_ptr<Port> open(const Stack& s, int node, bool direct, int tid = 0x40001, int tkno = -1) {
  auto r = open_port(s.driver_dir(node), direct, tid, tkno);
  EXPECT_EQ(r.status, 0) << r.error;
  return std::move(r.port);
}

inline uint64_t bit(int channel) { return uint64_t{1} << (channel - 1); }

// The task on port `p` as a sender of COP commands (its Pid register and partition).
inline cop::commands::Sender sender(const Port& p) { return {p.info().tkno, static_cast<uint8_t>(p.info().ppn)}; }

inline Message cmd(Opcode op, const Port& p, Space space = Space::GAS, uint32_t tag = 0) {
  return cop::commands::command(sender(p), op, space, tag);
}

inline Message mask_cmd(Opcode op, const Port& p, uint32_t tag, uint64_t mask, int count = 1) {
  return cop::commands::mask_command(sender(p), op, tag, mask, count);
}

// The thesis's SPMD barrier: every channel tries to initialise the masks.
inline std::vector<Message> barrier_frame(const Port& p, uint32_t tag, uint64_t mask) {
  return cop::commands::barrier(sender(p), tag, mask);
}

inline Error barrier(Port& p, uint32_t tag, uint64_t mask, Error* settc = nullptr) {
  std::vector<Answer> answers;
  auto frame = barrier_frame(p, tag, mask);
  if (Error e = p.exchange(frame, answers); e != Error::none) return e;
  if (settc) *settc = answers[1].error;
  if (answers[3].error != Error::none) return answers[3].error;
  Message exit;
  return p.await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr);
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

// The old value an RMW64 of frame `seq` fetched, from the next reply frames.
inline std::optional<uint64_t> fetched(RawNode& node, uint32_t seq, int ms = 2000) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& [e, m] : node.answers(200))
      if (m.ins.opcode == Opcode::RMW64 && e.seq == seq) return m.data64();
  }
  return std::nullopt;
}

using cop::testing::wait_until;  // tests/cop/wait.h, the one wait of the C++ tests

// A heartbeat round trip: copd takes datagrams in order, so once it answers,
// it has taken everything the node sent before. Other frames received on the
// way are put in `seen`.
inline bool heartbeat_round_trip(RawNode& node, uint32_t seq, std::vector<cop::link::Frame>* seen = nullptr) {
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
inline void expect_no_new_reply(RawNode& node, std::chrono::milliseconds window) {
  for (const auto until = std::chrono::steady_clock::now() + window; std::chrono::steady_clock::now() < until;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (auto r = node.receive(int(std::max<long>(1, long(left.count()))))) {
      EXPECT_NE(r->type, cop::link::FrameType::reply) << "new reply frame " << r->seq;
    }
  }
}

inline Message faa(uint16_t tkno, uint32_t offset, uint64_t add) {
  Message m = cop::wire::make(Opcode::RMW64, tkno, Space::TAS, cop::wire::Address::tas_tag(tkno, offset));
  m.set_data64(add);
  return m;
}

}  // namespace

// Both access modes (direct, normal): instantiated once, in driver_modes_test.cpp.
class Modes : public ::testing::TestWithParam<bool> {};
