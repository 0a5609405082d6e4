// Frames nobody can forge or replay (issue 25; cop/link.h "Keys"): a real copd
// and copdrv (tests/cop/stack.h) with an attacker on the link. Node 1's driver
// talks to copd through an in-test relay that records every datagram and can
// inject its own from the channel's address, as a process on the node's path
// could; a second driver without the cluster key tries to take a live channel.
// Each attack must change nothing: the victim task's fetch-and-adds give the
// exact old values, copd refuses and counts the attacker's frames.
#include <gtest/gtest.h>

#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

#include <cop/cop.h>
#include <cop/link.h>
#include <fmt/format.h>

#include "driver/port.h"
#include "lib/commands.h"
#include "link/auth.h"
#include "link/udp.h"
#include "stack.h"

namespace {

using cop::driver::Answer;
using cop::driver::Port;
using cop::testing::Stack;
using cop::testing::wait_until;
using cop::wire::Error;
using cop::wire::Message;
using cop::wire::Opcode;
using cop::wire::Space;

// A relay between a node and copd: what the node sends goes to copd from the
// relay's socket (so copd takes it for the node's address) and is recorded;
// copd's frames go back to the node. inject() sends bytes to copd from that
// same address: the attacker.
class Relay {
 public:
  explicit Relay(const std::string& copd)
      : up_(cop::link::parse_endpoint("127.0.0.1:0", 0)), down_(cop::link::parse_endpoint("127.0.0.1:0", 0)) {
    down_.connect(cop::link::parse_endpoint(copd, 0));
    thread_ = std::thread([this] { run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
  }
  std::string endpoint() const { return cop::link::to_string(up_.local()); }
  // Every datagram the node sent so far, in order.
  std::vector<std::vector<uint8_t>> captured() {
    std::lock_guard lock(mu_);
    return captured_;
  }
  void inject(const std::vector<uint8_t>& bytes) { down_.send(bytes); }
  // Sends bytes to the node as if copd had sent them (from the address the node takes for copd's).
  void inject_down(const std::vector<uint8_t>& bytes) {
    std::lock_guard lock(mu_);
    if (have_node_) cop::link::send_datagram(up_.fd(), bytes, &node_);
  }

 private:
  void run() {
    std::vector<uint8_t> buf;
    while (!stop_) {
      pollfd p[2] = {{up_.fd(), POLLIN, 0}, {down_.fd(), POLLIN, 0}};
      if (::poll(p, 2, 20) <= 0) continue;
      if (p[0].revents & POLLIN) {
        sockaddr_in from{};
        const long n = up_.receive(buf, 0, &from);
        if (n > 0) {
          std::vector<uint8_t> bytes(buf.begin(), buf.begin() + n);
          {
            std::lock_guard lock(mu_);
            node_ = from;
            have_node_ = true;
            captured_.push_back(bytes);
          }
          down_.send(bytes);
        }
      }
      if (p[1].revents & POLLIN) {
        const long n = down_.receive(buf, 0);
        if (n > 0 && have_node_) {
          std::lock_guard lock(mu_);
          cop::link::send_datagram(up_.fd(), std::span<const uint8_t>(buf.data(), size_t(n)), &node_);
        }
      }
    }
  }
  cop::link::UdpSocket up_, down_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  sockaddr_in node_{};
  std::atomic<bool> have_node_{false};
  std::vector<std::vector<uint8_t>> captured_;
};

// The victim: a task on node 1 adding to a word of its task address space.
struct Victim {
  std::unique_ptr<Port> port;
  uint64_t total = 0;  // what its own fetch-and-adds added
  Message faa(uint64_t add) const {
    const cop::commands::Sender s{port->info().tkno, uint8_t(port->info().ppn)};
    Message m = cop::commands::command(s, Opcode::RMW64, Space::TAS, cop::wire::Address::tas_tag(port->info().tkno, 7));
    m.set_data64(add);
    return m;
  }
  // Adds `add`; the old value it got (nullopt on an error).
  std::optional<uint64_t> add(uint64_t add_value, Error* error = nullptr) {
    std::vector<Answer> a;
    const std::vector<Message> f = {faa(add_value)};
    const Error e = port->exchange(f, a);
    if (error) *error = e != Error::none ? e : (a.empty() ? Error::word_count : a[0].error);
    if (e != Error::none || a.size() != 1 || a[0].error != Error::none || !a[0].has_data) return std::nullopt;
    return a[0].data.data64();
  }
};

// The victim's command frames the relay recorded, decoded with their bytes.
std::vector<std::pair<cop::link::Frame, std::vector<uint8_t>>> command_frames(Relay& relay, uint16_t tkno) {
  std::vector<std::pair<cop::link::Frame, std::vector<uint8_t>>> out;
  for (auto& bytes : relay.captured()) {
    auto d = cop::link::decode(bytes);
    if (!std::holds_alternative<cop::link::Frame>(d)) continue;
    const auto& f = std::get<cop::link::Frame>(d);
    if (f.type == cop::link::FrameType::command && f.tkno == tkno && !f.entries.empty()) out.emplace_back(f, bytes);
  }
  return out;
}

// Re-encodes a decoded frame as an attacker can: with the fields it changed and
// whatever authenticated the original (no key: it has none).
std::vector<uint8_t> reencode(const cop::link::Frame& f) {
  std::vector<uint8_t> out;
  cop::link::encode(f, out);
  return out;
}

// Node 1's driver behind the relay, the victim enrolled on it (direct mode: its
// frames leave from the driver's socket, through the relay).
struct Scene {
  Stack s{0, 4, {"--verbose"}};
  Relay relay{s.endpoint()};
  Victim v;
  Scene() {
    const pid_t d = cop::testing::spawn({COPDRV_BIN, "--channel", "1", "--controller", relay.endpoint(), "--local",
                                         "127.0.0.1", "--dir", s.driver_dir(1), "--key", s.key_file(), "--heartbeat-ms",
                                         "50", "--dead-ms", "1000", "--register-timeout-ms", "5000"},
                                        s.dir() + "/copdrv1.log");
    driver = d;
    EXPECT_TRUE(s.wait_for_driver(1)) << s.driver_log(1) << s.copd_log();
    auto r = cop::driver::open_port(s.driver_dir(1), true, 0x40001, -1);
    EXPECT_EQ(r.status, 0) << r.error;
    v.port = std::move(r.port);
  }
  ~Scene() {
    v.port.reset();
    if (driver <= 0) return;
    ::kill(driver, SIGTERM);
    if (cop::testing::wait_exit(driver, 3000) < 0) {
      ::kill(driver, SIGKILL);
      cop::testing::wait_exit(driver, 3000);
    }
  }
  // The victim's fetch-and-adds, checked against what it added itself.
  void victim_adds(int n) {
    for (int i = 0; i < n; ++i) {
      Error e = Error::none;
      const auto old = v.add(1, &e);
      ASSERT_TRUE(old) << "the victim's fetch-and-add failed: " << cop::wire::error_name(e);
      EXPECT_EQ(*old, v.total) << "the victim's fetch-and-add got a wrong old value with rc 0";
      v.total++;
    }
  }
  // copd's count of refused frames, from its shutdown line (copd is stopped).
  std::string refused_line() {
    EXPECT_EQ(s.terminate_copd(), 0);
    const std::string log = s.copd_log();
    const size_t at = log.find("frames refused:");
    return at == std::string::npos ? "" : log.substr(at, log.find('\n', at) - at);
  }
  pid_t driver = -1;
};

uint64_t count_after(const std::string& line, const std::string& what) {
  const size_t at = line.find(what);
  if (at == std::string::npos || at < 2) return 0;
  size_t start = line.rfind(' ', at - 2);
  start = start == std::string::npos ? 0 : start + 1;
  return std::strtoull(line.c_str() + start, nullptr, 10);
}

// Puts a frame under the sequence number after its own, as a sender of the next
// frame would (the entries carry it too).
void bump_seq(cop::link::Frame& f) {
  f.seq++;
  for (auto& e : f.entries) e.seq = f.seq;
}

// After the forged frames: the victim's counter is exactly its own adds (nothing
// forged executed), and copd counted at least `refused` frames as `why`.
void expect_untouched_and_counted(Scene& sc, const char* why, uint64_t refused) {
  Error e = Error::none;
  EXPECT_EQ(sc.v.add(0, &e), sc.v.total) << cop::wire::error_name(e);
  const std::string line = sc.refused_line();
  EXPECT_GE(count_after(line, why), refused) << line;
}

// The "Replay" finding: a captured frame sent again under the task's next
// sequence number (as it was, or with another command in it) must not act as
// the task; the victim's next fetch-and-add gets its own right answer, not the
// attacker's cached one.
TEST(Security, CapturedFrameUnderTheNextSeqIsRefused) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(3);
  auto frames = command_frames(sc.relay, sc.v.port->info().tkno);
  ASSERT_FALSE(frames.empty());
  cop::link::Frame f = frames.back().first;
  bump_seq(f);  // the victim's next frame
  sc.relay.inject(reencode(f));
  // Altered: another command in it (a big add), the seq after that.
  cop::link::Frame g = f;
  bump_seq(g);
  Message big = sc.v.faa(1000);
  g.entries[0] = cop::link::make_entry(big, cop::wire::Direction::to_controller, cop::link::EntryKind::command, g.seq, 0);
  sc.relay.inject(reencode(g));
  sc.victim_adds(3);
  expect_untouched_and_counted(sc, "bad MAC", 2);
}

// A frame forged from a captured one's fields, under a key of another
// cluster, or with its MAC zeroed, is refused and counted; nothing executes.
TEST(Security, FramesWithoutTheKeyOrWithAWrongKeyAreRefused) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(2);
  auto frames = command_frames(sc.relay, sc.v.port->info().tkno);
  ASSERT_FALSE(frames.empty());
  cop::link::Frame f = frames.back().first;
  bump_seq(f);
  cop::link::Key other{};
  for (size_t i = 0; i < other.size(); ++i) other[i] = uint8_t(0xA5 ^ i);
  // The task's key as an attacker with another cluster key would derive it.
  const cop::link::Key wrong = cop::link::session_key(
      cop::link::task_key(other, 1, sc.v.port->info().tkno, 0x1234), f.session);
  std::vector<uint8_t> bytes;
  cop::link::encode(f, bytes, &wrong);
  sc.relay.inject(bytes);
  f.mac = {};  // no MAC at all
  bump_seq(f);
  sc.relay.inject(reencode(f));
  sc.victim_adds(2);
  expect_untouched_and_counted(sc, "bad MAC", 2);
}

// Frames captured before copd restarted, replayed once copdrv has registered
// again, are of another session: refused, counted, not executed. The victim itself
// gets epoch_lost (its partition went with copd, cop.h "Epochs") until it enrols
// again; enrolled again, its counter in the restarted controller is its own sum.
TEST(Security, FramesCapturedBeforeACopdRestartAreRefused) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(3);
  const auto frames = command_frames(sc.relay, sc.v.port->info().tkno);
  ASSERT_FALSE(frames.empty());
  const std::string enrolled = fmt::format("task {} enrolled", sc.v.port->info().tkno);
  sc.s.kill_copd();
  sc.s.start_copd();
  ASSERT_TRUE(wait_until([&] { return sc.s.count_in_copd_log(enrolled) >= 2; }, std::chrono::seconds(10)))
      << "copdrv did not enrol the victim with the restarted copd:\n" << sc.s.copd_log();
  Error e = Error::link_down;
  ASSERT_TRUE(wait_until([&] { return !sc.v.add(1, &e) && e == Error::epoch_lost; }, std::chrono::seconds(10)))
      << "the victim enrolled before the restart did not get epoch_lost: " << cop::wire::error_name(e);
  sc.v.port.reset();
  auto r = cop::driver::open_port(sc.s.driver_dir(1), true, 0x40001, -1);
  ASSERT_EQ(r.status, 0) << r.error;
  sc.v.port = std::move(r.port);
  for (const auto& [f, bytes] : frames) sc.relay.inject(bytes);
  // The restarted controller's word starts at 0: only the victim's adds from now on count.
  sc.v.total = 0;
  sc.victim_adds(3);
  const std::string line = sc.refused_line();
  EXPECT_GE(count_after(line, "other session"), 1u) << line;
}

// "Channel hijack": a driver without the cluster key, on the node's IP, asks
// for the live channel: it gets no channel (copdrv exits refused), the holder
// keeps it and its task's results stay right.
TEST(Security, DriverWithoutTheKeyCannotTakeALiveChannel) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(2);
  const std::string wrong_key = sc.s.dir() + "/other.key";
  std::string why;
  ASSERT_TRUE(cop::link::write_key_file(wrong_key, why)) << why;
  // The key by COP_KEY: the intruder's copdrv with a key of its own.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.push_back("COP_KEY=" + wrong_key);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string dir = sc.s.dir() + "/intruder";
  std::vector<std::string> args = {COPDRV_BIN, "--channel", "1", "--controller", sc.s.endpoint(), "--local", "127.0.0.1",
                                   "--dir", dir, "--register-timeout-ms", "3000"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const std::string log = sc.s.dir() + "/intruder.log";
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t intruder = -1;
  ASSERT_EQ(posix_spawn(&intruder, argv[0], &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  const int rc = cop::testing::wait_exit(intruder, 8000);
  if (rc < 0) {
    ::kill(intruder, SIGKILL);
    cop::testing::wait_exit(intruder, 3000);
  }
  EXPECT_NE(rc, 0) << "the driver without the key stayed up: " << cop::testing::read_file(log);
  EXPECT_EQ(sc.s.copd_log().find("taken over"), std::string::npos) << sc.s.copd_log();
  sc.victim_adds(3);
  const std::string line = sc.refused_line();
  EXPECT_GE(count_after(line, "bad proofs"), 1u) << line;
}

// A raw REGISTER for the live channel from another port of the node's IP: copd
// only challenges it; a PROVE under a wrong key is refused and nothing of the
// channel changes.
TEST(Security, RegisterHijackWithoutProofIsRefused) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(1);
  cop::link::UdpSocket sock(cop::link::parse_endpoint("127.0.0.1:0", 0));
  sock.connect(cop::link::parse_endpoint(sc.s.endpoint(), 0));
  cop::link::Frame reg;
  reg.type = cop::link::FrameType::register_;
  reg.channel = 1;
  reg.nonce = 42;
  std::vector<uint8_t> bytes, buf;
  cop::link::encode(reg, bytes);
  sock.send(bytes);
  long n = sock.receive(buf, 2000);
  ASSERT_GT(n, 0);
  auto d = cop::link::decode(std::span<const uint8_t>(buf.data(), size_t(n)));
  ASSERT_TRUE(std::holds_alternative<cop::link::Frame>(d));
  const cop::link::Frame ch = std::get<cop::link::Frame>(d);
  ASSERT_EQ(ch.type, cop::link::FrameType::challenge) << "copd answered a REGISTER for a live channel with "
                                                      << cop::link::frame_type_name(ch.type);
  cop::link::Frame prove;
  prove.type = cop::link::FrameType::prove;
  prove.channel = 1;
  prove.nonce = 42;
  prove.info = ch.info;
  cop::link::Key guess{};
  guess[0] = 1;
  cop::link::encode(prove, bytes, &guess);
  sock.send(bytes);
  n = sock.receive(buf, 2000);
  ASSERT_GT(n, 0);
  d = cop::link::decode(std::span<const uint8_t>(buf.data(), size_t(n)));
  ASSERT_TRUE(std::holds_alternative<cop::link::Frame>(d));
  EXPECT_EQ(std::get<cop::link::Frame>(d).type, cop::link::FrameType::refused);
  sc.victim_adds(3);
  EXPECT_EQ(sc.s.copd_log().find("taken over"), std::string::npos) << sc.s.copd_log();
}

// A restarted copdrv holding the key takes its own channel back, and a new
// task on it gets right results.
TEST(Security, RestartedDriverWithTheKeyTakesItsChannelBack) {
  Stack s(1, 4);
  {
    auto r = cop::driver::open_port(s.driver_dir(1), true, 0x40001, -1);
    ASSERT_EQ(r.status, 0) << r.error;
  }
  s.kill_driver(1);
  s.start_driver(1);
  ASSERT_TRUE(s.wait_for_driver_log(1, "registered with copd", 2)) << s.driver_log(1) << s.copd_log();
  EXPECT_TRUE(s.wait_for_copd_log("taken over by a new driver")) << s.copd_log();
  auto r = cop::driver::open_port(s.driver_dir(1), true, 0x40001, -1);
  ASSERT_EQ(r.status, 0) << r.error;
  Victim v{std::move(r.port)};
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(v.add(1), i);
}

// Every frame the node sent of type `t`, as sent.
std::vector<std::vector<uint8_t>> frames_of(Relay& relay, cop::link::FrameType t) {
  std::vector<std::vector<uint8_t>> out;
  for (auto& bytes : relay.captured()) {
    auto d = cop::link::decode(bytes);
    if (std::holds_alternative<cop::link::Frame>(d) && std::get<cop::link::Frame>(d).type == t) out.push_back(bytes);
  }
  return out;
}

// copd's own REFUSED to a frame for channel 1 of `session` from an address that holds
// no channel (what an attacker can make copd send, then replay to the node).
std::vector<uint8_t> genuine_refusal(Scene& sc, uint32_t session) {
  cop::link::UdpSocket sock(cop::link::parse_endpoint("127.0.0.1:0", 0));
  sock.connect(cop::link::parse_endpoint(sc.s.endpoint(), 0));
  cop::link::Frame hb;
  hb.type = cop::link::FrameType::heartbeat;
  hb.channel = 1;
  hb.session = session;
  std::vector<uint8_t> bytes, buf;
  cop::link::encode(hb, bytes);
  sock.send(bytes);
  const long n = sock.receive(buf, 2000);
  EXPECT_GT(n, 0) << "copd did not refuse a frame from an address without a channel";
  if (n <= 0) return {};
  buf.resize(size_t(n));
  auto d = cop::link::decode(buf);
  EXPECT_TRUE(std::holds_alternative<cop::link::Frame>(d) &&
              std::get<cop::link::Frame>(d).type == cop::link::FrameType::refused);
  return buf;
}

// Issue 34: a REFUSED without copd's MAC (before: none at all, and one took the channel
// down, failing 1573 of 2400 operations), under another key, or copd's own for another
// session (replayed) is ignored and counted at the node; copd's own for the channel's
// session only makes copdrv prove its registration again (copd keeps the session). The
// victim's fetch-and-adds all succeed with their exact old values.
TEST(Security, ForgedOrReplayedRefusedIsIgnored) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(2);
  const auto frames = command_frames(sc.relay, sc.v.port->info().tkno);
  ASSERT_FALSE(frames.empty());
  const uint32_t session = frames.back().first.session;
  cop::link::Frame r;
  r.type = cop::link::FrameType::refused;
  r.channel = 1;
  r.session = session;
  r.info[0] = uint32_t(cop::link::Refusal::not_registered);
  r.text = "forged";
  sc.relay.inject_down(reencode(r));  // no MAC
  cop::link::Key other{};
  other[3] = 7;
  std::vector<uint8_t> wrong;
  cop::link::encode(r, wrong, &other);
  sc.relay.inject_down(wrong);
  const std::vector<uint8_t> stale = genuine_refusal(sc, session + 1);
  ASSERT_FALSE(stale.empty());
  sc.relay.inject_down(stale);
  const auto* w = sc.v.port->window();
  EXPECT_TRUE(wait_until([&] { return w->refused_ignored.load() >= 3; }, std::chrono::seconds(5)))
      << w->refused_ignored.load() << " REFUSED frames ignored";
  EXPECT_EQ(w->csr_err.load(), 0u);
  sc.victim_adds(20);
  // copd's own for this session: copdrv proves again and keeps the channel.
  const std::vector<uint8_t> fresh = genuine_refusal(sc, session);
  ASSERT_FALSE(fresh.empty());
  sc.relay.inject_down(fresh);
  EXPECT_TRUE(wait_until([&] { return frames_of(sc.relay, cop::link::FrameType::prove).size() >= 2; },
                         std::chrono::seconds(5)))
      << "copdrv did not prove its registration again after copd's REFUSED";
  sc.victim_adds(20);
  EXPECT_EQ(sc.s.copd_log().find("channel 1 down"), std::string::npos) << sc.s.copd_log();
}

// Issue 34: HEARTBEATs captured from a live driver and replayed after it died must not
// renew its lease (copd takes only a heartbeat after the driver's last, and only fresh
// frames renew a lease): copd drops the channel within about a lease and counts the
// replays. Before, the replays kept the dead driver's channel up for as long as they came.
TEST(Security, ReplayedHeartbeatsDoNotKeepADeadDriversChannel) {
  Scene sc;
  ASSERT_TRUE(sc.v.port);
  sc.victim_adds(1);
  std::vector<std::vector<uint8_t>> beats;
  ASSERT_TRUE(wait_until([&] { return (beats = frames_of(sc.relay, cop::link::FrameType::heartbeat)).size() >= 5; },
                         std::chrono::seconds(5)));
  ASSERT_EQ(::kill(sc.driver, SIGKILL), 0);
  cop::testing::wait_exit(sc.driver, 3000);
  sc.driver = -1;
  size_t i = 0;
  // The attacker replays a heartbeat every 20 ms while the test waits for the drop.
  const bool dropped = wait_until(
      [&] {
        sc.relay.inject(beats[i++ % beats.size()]);
        return sc.s.count_in_copd_log("channel 1 down (no frame") > 0;
      },
      std::chrono::seconds(8), std::chrono::milliseconds(20));
  EXPECT_TRUE(dropped) << "replayed heartbeats kept the dead driver's channel alive:\n" << sc.s.copd_log();
  const std::string line = sc.refused_line();
  EXPECT_GE(count_after(line, "stale heartbeats"), 1u) << line;
}

// Issue 34: a LOCK stops the poll counter at its channel for its own partition's
// commands (seed 000 ch. IV: the locked sequence is atomic against them); another
// job's commands, which cannot reach that partition, are serviced meanwhile. Here
// copd's deadlock timer is off: before, job b's fetch-and-adds waited for job a's
// UNLOCK (its CopTimeout here, 3 s); now they all complete with their exact old values.
TEST(Security, ALockOfOneJobDoesNotStallAnotherJob) {
  Stack s(2, 4, {"--lock-limit-ms", "0"});
  auto ra = cop::driver::open_port(s.driver_dir(1), true, 0x40001, -1, {}, "job-a");
  auto rb = cop::driver::open_port(s.driver_dir(2), true, 0x80001, -1, {}, "job-b");
  ASSERT_EQ(ra.status, 0) << ra.error;
  ASSERT_EQ(rb.status, 0) << rb.error;
  ASSERT_NE(ra.port->info().ppn, rb.port->info().ppn);
  Victim a{std::move(ra.port)}, b{std::move(rb.port)};
  cop::driver::LinkOptions o;
  o.wait_timeout_ms = 3000;
  b.port->set_link_options(o);
  const cop::commands::Sender sa{a.port->info().tkno, uint8_t(a.port->info().ppn)};
  std::vector<Answer> ans;
  const std::vector<Message> lock = {cop::commands::command(sa, Opcode::LOCK)};
  ASSERT_EQ(a.port->exchange(lock, ans), Error::none);
  ASSERT_EQ(ans.at(0).error, Error::none);
  for (uint64_t i = 0; i < 10; ++i) {
    Error e = Error::none;
    const auto old = b.add(1, &e);
    ASSERT_TRUE(old) << "job b's fetch-and-add " << i << " failed while job a held a LOCK: " << cop::wire::error_name(e);
    EXPECT_EQ(*old, i);
  }
  // Job a's locked sequence goes on, atomic: its own commands, then its UNLOCK.
  std::vector<Message> rest = {a.faa(5), cop::commands::command(sa, Opcode::UNLOCK)};
  ASSERT_EQ(a.port->exchange(rest, ans), Error::none);
  for (const Answer& x : ans) EXPECT_EQ(x.error, Error::none) << cop::wire::error_name(x.error);
  EXPECT_EQ(ans.at(0).data.data64(), 0u);
}

// The cluster key file: exactly 32 bytes, readable by its owner only; anything
// else is refused with the reason (copd and copdrv exit 2 with it).
TEST(Security, KeyFileMustBe32BytesOnlyItsOwnerReads) {
  char tmpl[] = "/tmp/copkey.XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::string why;
  const std::string good = dir + "/good.key";
  ASSERT_TRUE(cop::link::write_key_file(good, why)) << why;
  struct stat st{};
  ASSERT_EQ(::stat(good.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(cop::link::load_key_file(good, why).has_value()) << why;
  ::chmod(good.c_str(), 0640);
  EXPECT_FALSE(cop::link::load_key_file(good, why).has_value());
  EXPECT_NE(why.find("chmod 600"), std::string::npos) << why;
  const std::string shorter = dir + "/short.key";
  {
    std::ofstream out(shorter);
    out << "0123456789abcdef0123456789abcde";  // 31 bytes
  }
  ::chmod(shorter.c_str(), 0600);
  EXPECT_FALSE(cop::link::load_key_file(shorter, why).has_value());
  EXPECT_NE(why.find("31 bytes"), std::string::npos) << why;
  EXPECT_FALSE(cop::link::load_key_file(dir + "/none.key", why).has_value());
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
  std::filesystem::remove_all(dir);
}

}  // namespace
