// ring: seed 002's ring benchmark: pass an m-byte message around the logical ring of all
// nodes; t_comm(m) is the time per hop, fitted as t_comm = f + x*m (Table 1), and
// t'_comm = 4 t_comm(m) / m, the time per 32-bit word (Table 2). The fit is least squares
// over the sizes measured (fit_line, copbench/stats.h).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Ring final : public Benchmark {
 public:
  std::string_view name() const override { return "ring"; }
  std::string_view description() const override {
    return "message around the ring of all nodes, fit t = f + x*m (NCUBE Tables 1, 2)";
  }
  std::vector<Op> needs() const override { return {Op::echo}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 64, 256, 1024, 4096, 16384}; }
  int min_ranks() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int n = b.ranks();
    const int me = b.rank();
    const int next = (me + 1) % n;
    const int prev = (me + n - 1) % n;
    std::vector<PointResult> points;
    std::vector<double> x, y;
    for (std::size_t size : sizes_for(*this, params)) {
      // Separate page-aligned send and receive buffers, as echo's (IMB / OSU).
      EchoBuffers bufs(size);
      std::function<void()> lap = [&] {
        if (me == 0) {
          b.send(next, bufs.send.span());
          b.recv(prev, bufs.recv.span());
        } else {
          b.recv(prev, bufs.recv.span());
          b.send(next, bufs.send.span());
        }
      };
      // One iteration = one lap of n hops, timed on rank 0; per hop = lap / n.
      Summary s = measure(b, params.timing,
                          timed_loop(b, lap, me == 0, 1.0 / n, timer_overhead_seconds(),
                                     "ring: a sync, then the laps back to back (separate page-aligned send and receive "
                                     "buffers), timed on rank 0 (which starts each lap); lap time / ranks per hop"));
      x.push_back(static_cast<double>(size));
      y.push_back(s.median);
      PointResult p = make_point("ring/size:" + std::to_string(size), b, std::move(s));
      p.counters["bytes"] = static_cast<double>(size);
      if (size > 0) p.counters["t_comm_word_us"] = 4.0 * y.back() * 1e6 / static_cast<double>(size);
      points.push_back(std::move(p));
    }
    Line fit = fit_line(x, y);
    for (PointResult& p : points) {
      p.counters["fit_f_us"] = fit.intercept * 1e6;
      p.counters["fit_x_us_per_byte"] = fit.slope * 1e6;
      out.report(std::move(p));
    }
  }
};

const RegisterWorkload<Ring> registered{WorkloadKind::benchmark, 120};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
