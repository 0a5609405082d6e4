// copd + copdrv + the channel client on loopback: registration rules, the
// link protocol, the Pid-register rule and out-of-context buffering, both
// access modes, protection, and failures that must end in errors, not hangs.
// Here: registration, the link protocol against a raw node, copd's state and shutdown.
// Both access modes: driver_modes_test.cpp (tasks' operations), driver_recovery_test.cpp
// (restarts, timeouts, killed daemons); one binary, test_cop_driver.
#include "driver_harness.h"

namespace {

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
  // Heartbeats numbered up: copd answers (and renews the lease for) only one after the last.
  uint32_t hb = 0;
  auto sync = [&] { return heartbeat_round_trip(node, ++hb); };
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

namespace {

// A result filed out of context in window `w`'s slot `i`: a barrier exit on `tag` of partition `ppn`.
void file_exit(cop::driver::Window& w, uint32_t i, uint32_t tag, uint8_t ppn, uint64_t op_id) {
  cop::wire::Message m = cop::wire::make(cop::wire::Opcode::BENTRY, 0, cop::wire::Space::GAS, tag);
  m.ins.ppn = ppn;
  m.op_id = op_id;
  const cop::link::Entry e =
      cop::link::make_entry(m, cop::wire::Direction::to_node, cop::link::EntryKind::broadcast, 0, 0, 0);
  cop::driver::OutOfContext& o = w.ooc[i];
  o.used = 1;
  o.kind = uint8_t(e.kind);
  o.nwords = e.nwords;
  for (size_t k = 0; k < e.nwords; ++k) o.words[k] = e.words[k];
  o.op_id = op_id;
  w.ooc_count++;
  w.ooc_high = std::max(w.ooc_high, i + 1);
}

}  // namespace

// Two jobs (two partitions) on one node use the same tags: a barrier of one job forgets the
// earlier exits of its tag before it sends its BENTRY, but never the other job's exit still
// waiting there for its task (issue 34: on a two-level stack that job's tasks timed out).
TEST(ForgetResults, AnotherPartitionsResultIsKept) {
  auto w = std::make_unique<cop::driver::Window>();
  cop::driver::init_window(w.get(), 0, 1);
  file_exit(*w, 0, 100, 1, cop::wire::make_identity(1, 0xAAAA0001));
  file_exit(*w, 1, 100, 2, cop::wire::make_identity(1, 0xBBBB0001));
  cop::driver::forget_results(*w, 100, 1, false, 0, 1);
  EXPECT_EQ(w->ooc_count, 1u);
  EXPECT_FALSE(w->ooc[0].used) << "its own partition's earlier exit is forgotten";
  EXPECT_TRUE(w->ooc[1].used) << "the other job's exit is kept";
  cop::driver::forget_results(*w, 100, 1, false);  // no partition named: every one, as before
  EXPECT_EQ(w->ooc_count, 0u);
}
