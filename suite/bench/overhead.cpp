// overhead: shows that what the suite reports is the system's time and not the harness's
// own (its std::function calls, the per-iteration bookkeeping). For echo and barrier it
// measures, in the same run, the backend's bare loop of the same native calls
// (Backend::bare_*_loop) and the same operation through the harness, repetitions of the
// two interleaved under the full timing method, and reports the ratio of the medians;
// within 5 % of 1 (the counter within_5pct) the harness adds nothing that shows.
#include <algorithm>
#include <cmath>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Overhead final : public Benchmark {
 public:
  std::string_view name() const override { return "overhead"; }
  std::string_view description() const override {
    return "harness vs bare native loop for echo and barrier (within 5 % expected)";
  }
  std::vector<Op> needs() const override { return {Op::echo, Op::barrier, Op::bare_loops}; }
  // 8 B and 64 KB: at 64 KB echo must match a plain separate-buffer ping-pong loop too.
  std::vector<std::size_t> default_sizes() const override { return {8, 64 * 1024}; }
  int min_ranks() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int peer = b.ranks() - 1;
    const double overhead = timer_overhead_seconds();
    for (std::size_t size : sizes_for(*this, params)) {
      EchoBuffers bufs(size);
      std::function<void()> op = ping_pong(b, peer, bufs);
      Batch bare([&](std::vector<double>& seconds) {
        b.sync();
        double per = b.bare_echo_loop(peer, size, static_cast<int>(seconds.size()));
        // The bare loop's clock reads are two per loop, like the harness's.
        std::fill(seconds.begin(), seconds.end(), b.rank() == 0 ? per - overhead / 2 / static_cast<double>(seconds.size()) : 0.0);
      }, "the backend's bare ping-pong loop (separate page-aligned send and receive buffers), "
         "timed on rank 0, round trip / 2");
      Batch harness = timed_loop(b, op, b.rank() == 0, 0.5, overhead,
                                 "echo through the harness: a sync, then the ping-pongs back to back, "
                                 "timed on rank 0 (the initiating rank), round trip / 2");
      report_pair(b, params, out, "overhead/echo/size:" + std::to_string(size), bare, harness);
    }
    Batch bare([&](std::vector<double>& seconds) {
      double per = b.bare_barrier_loop(static_cast<int>(seconds.size()));
      std::fill(seconds.begin(), seconds.end(), per - overhead);
    }, "the backend's bare barrier loop: per iteration a native barrier, then a timed one; "
       "per-iteration maximum over ranks");
    Batch harness = timed_collective(b, [&] { b.barrier(); }, overhead);
    report_pair(b, params, out, "overhead/barrier", bare, harness);
  }

 private:
  // Bare and harness repetitions interleaved (A B, B A, ...) under the same protocol.
  static void report_pair(Backend& b, const RunParams& params, Reporter& out, const std::string& name,
                          const Batch& bare, const Batch& harness) {
    auto [bare_summary, harness_summary] = measure_interleaved(b, params.timing, bare, harness);
    double ratio = bare_summary.median > 0 ? harness_summary.median / bare_summary.median : 0.0;
    // The ratio of the fastest repetitions too: on a shared, busy machine (2 ranks on 2
    // cores) the medians carry the disturbance, the minima much less of it.
    double min_ratio = bare_summary.min > 0 ? harness_summary.min / bare_summary.min : 0.0;
    PointResult pb = make_point(name + "/bare", b, std::move(bare_summary));
    PointResult ph = make_point(name + "/harness", b, std::move(harness_summary));
    ph.counters["harness_over_bare"] = ratio;
    ph.counters["within_5pct"] = std::abs(ratio - 1.0) <= 0.05 ? 1.0 : 0.0;
    ph.counters["harness_over_bare_min"] = min_ratio;
    out.report(std::move(pb));
    out.report(std::move(ph));
  }
};

const RegisterWorkload<Overhead> registered{WorkloadKind::benchmark, 400};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
