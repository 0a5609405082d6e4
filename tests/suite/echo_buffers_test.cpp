// echo measures as IMB PingPong and OSU latency do: rank 0 sends from one page-aligned
// buffer and receives into another, distinct one (a single buffer for both is not that
// ping-pong). A recording backend stands in for rank 0 and notes every span it is given.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "copbench/aligned_buffer.h"
#include "copbench/bench.h"

namespace copbench {
namespace {

class Recorder final : public Backend {
 public:
  std::string name() const override { return "recorder"; }
  std::string route() const override { return "-"; }
  int rank() const override { return 0; }
  int ranks() const override { return 2; }
  bool offers(Op op) const override { return op == Op::echo; }
  void sync() override {}
  void max_over_ranks(std::span<double>) override {}
  void send(int to, std::span<const std::byte> m) override {
    EXPECT_EQ(to, 1);
    sends.push_back({m.data(), m.size()});
  }
  void recv(int from, std::span<std::byte> m) override {
    EXPECT_EQ(from, 1);
    recvs.push_back({m.data(), m.size()});
  }
  struct Use {
    const std::byte* data;
    std::size_t size;
  };
  std::vector<Use> sends, recvs;
};

class Drop final : public Reporter {
 public:
  void report(PointResult p) override { names.push_back(p.name); }
  std::vector<std::string> names;
};

bool overlap(const Recorder::Use& a, const Recorder::Use& b) {
  const auto a0 = reinterpret_cast<std::uintptr_t>(a.data), b0 = reinterpret_cast<std::uintptr_t>(b.data);
  return a0 < b0 + std::max<std::size_t>(b.size, 1) && b0 < a0 + std::max<std::size_t>(a.size, 1);
}

TEST(EchoBuffers, SendAndReceiveBuffersAreDistinctAndPageAligned) {
  const Benchmark* echo = find_benchmark("echo");
  ASSERT_NE(echo, nullptr);
  Recorder b;
  RunParams params;
  params.sizes = {0, 8, 1024, 65536};
  params.timing.warmup = 1;
  params.timing.iterations = 2;
  params.timing.min_reps = 2;
  params.timing.max_reps = 3;
  Drop out;
  echo->run(b, params, out);
  ASSERT_EQ(out.names, (std::vector<std::string>{"echo/size:0", "echo/size:8", "echo/size:1024", "echo/size:65536"}));
  ASSERT_FALSE(b.sends.empty());
  ASSERT_EQ(b.sends.size(), b.recvs.size());  // one send then one receive per ping-pong
  const std::size_t page = AlignedBuffer::page_size();
  for (std::size_t i = 0; i < b.sends.size(); ++i) {
    const auto& s = b.sends[i];
    const auto& r = b.recvs[i];
    EXPECT_EQ(s.size, r.size);
    EXPECT_NE(s.data, r.data) << "ping-pong " << i << " of " << s.size << " B sends and receives in one buffer";
    EXPECT_FALSE(overlap(s, r)) << "ping-pong " << i << ": send and receive buffers overlap";
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.data) % page, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.data) % page, 0u);
  }
}

TEST(EchoBuffers, AlignedBufferHoldsThePayloadPattern) {
  AlignedBuffer a(4096 + 3, 7);
  EXPECT_EQ(a.size(), 4096u + 3);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a.data()) % AlignedBuffer::page_size(), 0u);
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(a.data()[i], static_cast<std::byte>((i * 31 + 7) & 0xff)) << i;
}

}  // namespace
}  // namespace copbench
