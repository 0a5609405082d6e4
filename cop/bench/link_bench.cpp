// Google Benchmark of a link frame's cost with and without its MAC (cop/link.h
// "Keys"): encoding a frame, encoding it MACed (keyed BLAKE2b, 16 bytes),
// verifying the MAC of a received one, and decoding. Two frames: a barrier's
// command frame (LOCK SETTC BENTRY UNLOCK, as libcop sends it) and a burst of
// 128 reduction elements (t_MAX-OP, seed 000 ch. VI); and the node side of a 16 KB
// broadcast, sent and received (broadcast16k_*), and through a task's channel
// (broadcast16k_channel_*: ChannelClient over loopback UDP from a scripted controller, the
// datagram's receive, MAC and matching included).
//   build/bin/cop_link_bench [--benchmark_format=json] [--benchmark_filter=broadcast16k]
#include <benchmark/benchmark.h>

#include <vector>

#include <cop/link.h>

#include "driver/channel.h"
#include "lib/commands.h"
#include "link/auth.h"
#include "link/udp.h"

namespace {

using namespace cop;

constexpr commands::Sender kTask{1, 0};

link::Frame frame_of(const std::vector<wire::Message>& msgs) {
  link::Frame f;
  f.type = link::FrameType::command;
  f.channel = 3;
  f.tkno = 1;
  f.seq = 77;
  f.session = 12345;
  for (size_t i = 0; i < msgs.size(); ++i)
    f.entries.push_back(link::make_entry(msgs[i], wire::Direction::to_controller, link::EntryKind::command, f.seq,
                                         uint16_t(i)));
  return f;
}

link::Frame barrier_frame() { return frame_of(commands::barrier(kTask, 5, 0xF)); }

link::Frame burst_frame() {
  std::vector<wire::Message> m;
  for (uint32_t i = 0; i < 128; ++i) {
    wire::Message e = commands::command(kTask, wire::Opcode::SUMI64, wire::Space::GAS, 100 + i);
    e.set_data64(i);
    m.push_back(e);
  }
  return frame_of(m);
}

link::Key key() {
  link::Key k{};
  for (size_t i = 0; i < k.size(); ++i) k[i] = uint8_t(i * 13 + 7);
  return link::session_key(k, 1);
}

void encode(benchmark::State& st, link::Frame f, bool mac) {
  const link::Key k = key();
  std::vector<uint8_t> out;
  for (auto _ : st) {
    link::encode(f, out, mac ? &k : nullptr);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["bytes"] = double(out.size());
}

void verify(benchmark::State& st, link::Frame f) {
  const link::Key k = key();
  std::vector<uint8_t> out;
  link::encode(f, out, &k);
  for (auto _ : st) benchmark::DoNotOptimize(link::verify(out, k));
}

void decode(benchmark::State& st, link::Frame f) {
  std::vector<uint8_t> out;
  link::encode(f, out);
  for (auto _ : st) benchmark::DoNotOptimize(link::decode(out));
}

BENCHMARK_CAPTURE(encode, barrier_plain, barrier_frame(), false);
BENCHMARK_CAPTURE(encode, barrier_mac, barrier_frame(), true);
BENCHMARK_CAPTURE(verify, barrier, barrier_frame());
BENCHMARK_CAPTURE(decode, barrier, barrier_frame());
BENCHMARK_CAPTURE(encode, burst128_plain, burst_frame(), false);
BENCHMARK_CAPTURE(encode, burst128_mac, burst_frame(), true);
BENCHMARK_CAPTURE(verify, burst128, burst_frame());
BENCHMARK_CAPTURE(decode, burst128, burst_frame());

// copd's receive when it finds nothing more (the end of each of its rounds): recv_datagrams
// with copd's 64 slots (Server::kBatch) on a socket with no datagram, the recvmmsg's
// EAGAIN and what is done around it (the slots' headers, kept between calls).
void idle_receive64(benchmark::State& st) {
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  link::UdpSocket sock(at);
  std::vector<std::vector<uint8_t>> bufs(64, std::vector<uint8_t>(link::kMaxFrameBytes + 64));
  std::vector<link::InDatagram> in;
  for (auto& b : bufs) in.push_back(link::InDatagram{std::span<uint8_t>(b)});
  for (auto _ : st) benchmark::DoNotOptimize(link::recv_datagrams(sock.fd(), in, MSG_DONTWAIT));
}
BENCHMARK(idle_receive64);

// The node side of a 16 KB broadcast (2048 BCAST64 words, issue 36), as libcop and its
// channel do it: the sender's bursts built, packed by their encoded bytes, their entries
// encoded MACed from them (link::encode_commands, as the channel sends it); the receiver's frame of the words verified, decoded
// as runs and each word taken from its run's message.
void broadcast16k_send(benchmark::State& st) {
  const link::Key k = key();
  const commands::Sender s{1, 0, wire::make_identity(5, 0x1234)};
  std::vector<uint64_t> words(2048);
  for (size_t i = 0; i < words.size(); ++i) words[i] = 77 * i;
  link::Frame f = frame_of({});
  std::vector<uint8_t> out;
  constexpr size_t kBudget = link::kMaxFrameBytes - link::kHeaderBytes - 4096;
  for (auto _ : st) {
    const auto bursts = commands::broadcast_bursts(s, wire::Opcode::BCAST64, 100, words, 0b110, 128);
    const auto frames = commands::pack(bursts, link::kMaxElements, kBudget,
                                       [](const commands::Burst& b) { return link::encoded_bytes(b); });
    link::encode_commands(f, frames[0].commands, out, &k);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["bytes"] = double(out.size());
}

void broadcast16k_receive(benchmark::State& st) {
  const link::Key k = key();
  link::Frame f = frame_of({});
  f.type = link::FrameType::reply;
  for (uint32_t i = 0; i < 2048; ++i) {
    wire::Message m = wire::make(wire::Opcode::BCAST64, 0, wire::Space::GAS, 100 + i);
    m.addr.chno = 1;
    m.set_data64(77ull * i);
    f.entries.push_back(link::make_entry(m, wire::Direction::to_node, link::EntryKind::broadcast, 1, 0, 10 + 8ull * i));
  }
  std::vector<uint8_t> bytes;
  link::encode(f, bytes, &k);
  link::FrameRuns runs;
  std::vector<uint64_t> words(2048);
  for (auto _ : st) {
    if (!link::verify(bytes, k) || link::decode_runs(bytes, runs)) st.SkipWithError("frame refused");
    for (const link::EntryRun& r : runs.runs) {
      const auto first = std::get<wire::Message>(link::decode_entry(r.first, wire::Direction::to_node));
      for (size_t e = 0; e < r.count; ++e) {
        const wire::Message m = link::element_message(r, first, e);
        words[m.addr.msgtag - 100] = wire::payload(m);
      }
    }
    benchmark::DoNotOptimize(words.data());
  }
  st.counters["bytes"] = double(bytes.size());
}

BENCHMARK(broadcast16k_send);
BENCHMARK(broadcast16k_receive);

// The measuring harness of the two benchmarks below: a task's real ChannelClient and, on
// loopback, a scripted controller socket that sends it the reply frames a benchmark
// makes (no copd runs, so only the node's side is timed). tests/cop/channel_runs_test.cpp
// has its own (Link), with the assertions a test needs.
struct ScriptedController {
  link::UdpSocket copd{link::parse_endpoint("127.0.0.1:0", 0)}, node{link::parse_endpoint("127.0.0.1:0", 0)};
  std::unique_ptr<driver::Window> window = std::make_unique<driver::Window>();
  std::unique_ptr<driver::ChannelClient> client;
  link::Key down = key();
  uint32_t seq = 1;
  std::vector<uint8_t> bytes, sink = std::vector<uint8_t>(link::kMaxFrameBytes + 64);
  ScriptedController() {
    node.connect(copd.local());
    copd.connect(node.local());
    driver::init_window(window.get(), ::getpid(), 1);
    window->rx_session.store(1);
    window->rx_next.store(1);
    window->last_heard_ns.store(driver::monotonic_ns());
    driver::LinkOptions o;
    o.ack_timeout_ms = 5000;
    o.dead_ms = 600000;
    client = std::make_unique<driver::ChannelClient>(window.get(), node.fd(), 1, link::Key{}, down, o);
  }
  // A reply frame of `entries`, next in the stream, sent to the node.
  void reply(std::vector<link::Entry>& entries) {
    link::Frame f = frame_of({});
    f.type = link::FrameType::reply;
    f.session = 1;
    f.seq = seq++;
    f.entries.swap(entries);
    const link::Key k = link::session_key(down, 1);
    link::encode(f, bytes, &k);
    f.entries.swap(entries);
    link::send_datagram(copd.fd(), bytes);
  }
};

// The receiver's side: a reply of 2048 BCAST64 words (one run) taken by await.
void broadcast16k_channel_receive(benchmark::State& st) {
  ScriptedController c;
  const uint64_t id = wire::make_identity(5, 0x1234);
  std::vector<link::Entry> words;
  for (uint32_t i = 0; i < 2048; ++i) {
    wire::Message m = wire::make(wire::Opcode::BCAST64, 0, wire::Space::GAS, 100 + i);
    m.addr.chno = 2;
    m.op_id = id;
    m.set_data64(77ull * i);
    words.push_back(link::make_entry(m, wire::Direction::to_node, link::EntryKind::broadcast, 0, 0, 10 + 8ull * i));
  }
  std::vector<wire::Message> results(2048);
  for (auto _ : st) {
    st.PauseTiming();
    c.reply(words);
    st.ResumeTiming();
    if (c.client->await(driver::Wanted{driver::ResultKind::bcast, 100, 2048, 0, id}, results) != wire::Error::none)
      st.SkipWithError("await failed");
  }
}

// The sender's side: its 16 KB broadcast's frame sent (send_only) and its 2051 ACKs, one
// run, taken (finish).
void broadcast16k_channel_send(benchmark::State& st) {
  ScriptedController c;
  const commands::Sender s{1, 0, wire::make_identity(5, 0x1234)};
  std::vector<uint64_t> v(2048);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 77 * i;
  const commands::Burst cmds = commands::broadcast(s, wire::Opcode::BCAST64, 100, v, 0b110);
  std::vector<driver::Answer> answers;
  answers.reserve(cmds.size());
  uint32_t frame_seq = 0;
  std::vector<link::Entry> acks(cmds.size());
  for (auto _ : st) {
    if (c.client->send_only(cmds) != wire::Error::none) st.SkipWithError("send failed");
    st.PauseTiming();
    c.copd.receive(c.sink, 0);
    ++frame_seq;
    for (size_t i = 0; i < acks.size(); ++i)
      acks[i] = link::make_entry(wire::make(wire::Opcode::ACK, 1), wire::Direction::to_node, link::EntryKind::answer,
                                 frame_seq, uint16_t(i), 10 + 4ull * i);
    c.reply(acks);
    st.ResumeTiming();
    if (c.client->finish(answers) != wire::Error::none) st.SkipWithError("finish failed");
  }
}

// A reduction root's 8 KB int reduce (2048 SUMI32 contributions, issue 36) as libcop's
// channel_reduce does it: the bursts built and packed by their encoded bytes, the frame
// sent (send_only), the reduction's 2048 results (one run) awaited and the frame's ACKs
// (one run) taken (finish), the results copied out. Only the node's side is timed.
void reduce8k_channel_root(benchmark::State& st) {
  ScriptedController c;
  const commands::Sender s{1, 0, wire::make_identity(5, 0x1234)};
  std::vector<uint64_t> v(2048), out(2048);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 77 * i;
  constexpr size_t kBudget = link::kMaxFrameBytes - link::kHeaderBytes - 4096;
  std::vector<link::Entry> results, acks;
  for (uint32_t i = 0; i < 2048; ++i) {
    wire::Message m = wire::make(wire::Opcode::SUMI32, 0, wire::Space::GAS, 100 + i);
    m.op_id = s.op_id;
    m.data1 = 2 * 77 * i;
    results.push_back(link::make_entry(m, wire::Direction::to_node, link::EntryKind::broadcast, 0, 0, 10 + 8ull * i));
  }
  std::vector<driver::Answer> answers;
  std::vector<wire::Message> got(2048);
  uint32_t frame_seq = 0;
  for (auto _ : st) {
    const auto frames = commands::pack(commands::reduction_bursts(s, wire::Opcode::SUMI32, 100, v, 0b11, 0b1, 128),
                                       link::kMaxElements, kBudget,
                                       [](const commands::Burst& b) { return link::encoded_bytes(b); });
    if (c.client->send_only(frames[0].commands) != wire::Error::none) st.SkipWithError("send failed");
    st.PauseTiming();
    c.copd.receive(c.sink, 0);
    acks.clear();
    ++frame_seq;
    for (size_t i = 0; i < frames[0].commands.size(); ++i)
      acks.push_back(link::make_entry(wire::make(wire::Opcode::ACK, 1), wire::Direction::to_node,
                                      link::EntryKind::answer, frame_seq, uint16_t(i), 10 + 4ull * i));
    c.reply(results);
    c.reply(acks);
    st.ResumeTiming();
    if (c.client->await(driver::Wanted{driver::ResultKind::reduction, 100, 2048, 0, s.op_id}, got) !=
            wire::Error::none ||
        c.client->finish(answers) != wire::Error::none)
      st.SkipWithError("await failed");
    for (size_t i = 0; i < 2048; ++i) out[i] = wire::payload(got[i]);
    benchmark::DoNotOptimize(out.data());
  }
}

BENCHMARK(broadcast16k_channel_receive);
BENCHMARK(broadcast16k_channel_send);
BENCHMARK(reduce8k_channel_root);

}  // namespace

BENCHMARK_MAIN();
