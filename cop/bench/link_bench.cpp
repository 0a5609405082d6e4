// Google Benchmark of a link frame's cost with and without its MAC (cop/link.h
// "Keys"): encoding a frame, encoding it MACed (keyed BLAKE2b, 16 bytes),
// verifying the MAC of a received one, and decoding. Two frames: a barrier's
// command frame (LOCK SETTC BENTRY UNLOCK, as libcop sends it) and a burst of
// 128 reduction elements (t_MAX-OP, seed 000 ch. VI).
//   build/bin/cop_link_bench [--benchmark_format=json]
#include <benchmark/benchmark.h>

#include <vector>

#include <cop/link.h>

#include "lib/commands.h"
#include "link/auth.h"

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

}  // namespace

BENCHMARK_MAIN();
