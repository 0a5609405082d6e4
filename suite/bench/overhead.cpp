// overhead: the harness must not be the thing measured (issue 4, "Speed"). For echo and
// barrier it measures, in the same run, the backend's bare loop of the same native calls
// (Backend::bare_*_loop) and the same operation through the harness, each under the full
// timing method, and reports harness / bare.
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
  std::vector<std::size_t> default_sizes() const override { return {8}; }
  int min_nodes() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int peer = b.nodes() - 1;
    const double overhead = timer_overhead_seconds();
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> buf = payload(size);
      std::function<void()> op = [] {};
      if (b.rank() == 0) {
        op = [&] {
          b.send(peer, buf);
          b.recv(peer, buf);
        };
      } else if (b.rank() == peer) {
        op = [&] {
          b.recv(0, buf);
          b.send(0, buf);
        };
      }
      Batch bare = [&](std::vector<double>& seconds) {
        b.sync();
        double per = b.bare_echo_loop(peer, size, static_cast<int>(seconds.size()));
        // The bare loop's clock reads are two per loop, like the harness's.
        std::fill(seconds.begin(), seconds.end(), b.rank() == 0 ? per - overhead / 2 / static_cast<double>(seconds.size()) : 0.0);
      };
      Batch harness = timed_loop(b, op, b.rank() == 0, 0.5, overhead);
      report_pair(b, params, out, "overhead/echo/size:" + std::to_string(size), bare, harness);
    }
    Batch bare = [&](std::vector<double>& seconds) {
      double per = b.bare_barrier_loop(static_cast<int>(seconds.size()));
      std::fill(seconds.begin(), seconds.end(), per - overhead);
    };
    Batch harness = timed_collective(b, [&] { b.barrier(); }, overhead);
    report_pair(b, params, out, "overhead/barrier", bare, harness);
  }

 private:
  // Alternates bare and harness measurements twice (bare, harness, harness, bare) so a
  // drift in machine speed does not favour either, and reports the medians' ratio.
  static void report_pair(Backend& b, const RunParams& params, Reporter& out, const std::string& name,
                          const Batch& bare, const Batch& harness) {
    Summary bare1 = measure(b, params.timing, bare);
    Summary harness1 = measure(b, params.timing, harness);
    Summary harness2 = measure(b, params.timing, harness);
    Summary bare2 = measure(b, params.timing, bare);
    Summary bare_all = merge(bare1, bare2);
    Summary harness_all = merge(harness1, harness2);
    double ratio = bare_all.median > 0 ? harness_all.median / bare_all.median : 0.0;
    PointResult pb = make_point(name + "/bare", b, std::move(bare_all));
    PointResult ph = make_point(name + "/harness", b, std::move(harness_all));
    ph.counters["harness_over_bare"] = ratio;
    ph.counters["within_5pct"] = std::abs(ratio - 1.0) <= 0.05 ? 1.0 : 0.0;
    out.report(std::move(pb));
    out.report(std::move(ph));
  }

  static Summary merge(const Summary& a, const Summary& c) {
    Summary s = a;
    s.reps.insert(s.reps.end(), c.reps.begin(), c.reps.end());
    s.cpu_reps.insert(s.cpu_reps.end(), c.cpu_reps.begin(), c.cpu_reps.end());
    s.discarded = a.discarded + c.discarded;
    std::vector<double> v = s.reps;
    s.median = median_of(v);
    double sum = 0, sq = 0;
    for (double x : v) sum += x;
    s.mean = v.empty() ? 0 : sum / static_cast<double>(v.size());
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
    s.min = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
    s.max = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    s.ci95_half = std::max(a.ci95_half, c.ci95_half);
    s.ci_met = a.ci_met && c.ci_met;
    return s;
  }
};

}  // namespace

const Benchmark& overhead_benchmark() {
  static const Overhead instance;
  return instance;
}

}  // namespace copbench::bench
