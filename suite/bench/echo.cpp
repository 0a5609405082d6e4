// echo: ping-pong between rank 0 and the last rank; round trip / 2 (thesis ch. VI).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Echo final : public Benchmark {
 public:
  std::string_view name() const override { return "echo"; }
  std::string_view description() const override {
    return "ping-pong rank 0 <-> last rank, round trip / 2, 0 B to 64 KB";
  }
  std::vector<Op> needs() const override { return {Op::echo}; }
  std::vector<std::size_t> default_sizes() const override { return powers_of_two(1, 64 * 1024, true); }
  int min_nodes() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int peer = b.nodes() - 1;
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> buf = payload(size);
      std::function<void()> op = ping_pong(b, peer, buf);
      Summary s = measure(b, params.timing, timed_loop(b, op, b.rank() == 0, 0.5, timer_overhead_seconds()));
      PointResult p = make_point("echo/size:" + std::to_string(size), b, std::move(s));
      p.counters["bytes"] = static_cast<double>(size);
      out.report(std::move(p));
    }
  }
};

}  // namespace

const Benchmark& echo_benchmark() {
  static const Echo instance;
  return instance;
}

}  // namespace copbench::bench
