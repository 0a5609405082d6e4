// bandwidth: ParaStation2's Table 3 (seed 001): latency as round trip / 2 of a 4-byte
// ping-pong, throughput from the ping-pong of large messages (up to 32 KB), and N1/2,
// the message size at which half the peak throughput is reached.
#include <algorithm>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Bandwidth final : public Benchmark {
 public:
  std::string_view name() const override { return "bandwidth"; }
  std::string_view description() const override {
    return "ping-pong throughput vs size, peak and N1/2 (ParaStation2 Table 3)";
  }
  std::vector<Op> needs() const override { return {Op::echo}; }
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.link_probe = true;
    return t;
  }
  std::vector<std::size_t> default_sizes() const override { return powers_of_two(4, 32 * 1024, false); }
  int min_ranks() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int peer = b.ranks() - 1;
    std::vector<std::size_t> sizes = sizes_for(*this, params);
    std::sort(sizes.begin(), sizes.end());
    std::vector<PointResult> points;
    std::vector<double> mbps;
    for (std::size_t size : sizes) {
      Summary s = measure_ping_pong(b, params, peer, size);
      double rate = s.median > 0 ? static_cast<double>(size) / s.median / 1e6 : 0.0;
      PointResult p = make_point("bandwidth/size:" + std::to_string(size), b, std::move(s));
      p.counters["bytes"] = static_cast<double>(size);
      p.counters["MBps"] = rate;
      mbps.push_back(rate);
      points.push_back(std::move(p));
    }
    // Peak and N1/2 over the sizes measured, interpolated linearly between points.
    double peak = mbps.empty() ? 0.0 : *std::max_element(mbps.begin(), mbps.end());
    double n_half = 0.0;
    for (std::size_t i = 0; i < mbps.size(); ++i) {
      if (mbps[i] >= peak / 2) {
        if (i == 0) {
          n_half = static_cast<double>(sizes[0]);
        } else {
          double f = (peak / 2 - mbps[i - 1]) / (mbps[i] - mbps[i - 1]);
          n_half = static_cast<double>(sizes[i - 1]) + f * static_cast<double>(sizes[i] - sizes[i - 1]);
        }
        break;
      }
    }
    for (PointResult& p : points) {
      p.counters["peak_MBps"] = peak;
      p.counters["n_half_bytes"] = n_half;
      out.report(std::move(p));
    }
  }
};

const RegisterWorkload<Bandwidth> registered{WorkloadKind::benchmark, 110};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
