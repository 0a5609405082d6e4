// echo: ping-pong, round trip / 2 (thesis ch. VI), 0 B to 64 KB, between rank 0 and a
// peer on another node ("inter-host": the first rank of the last node, with one task per
// node the last rank) and, with several tasks per node, a peer on rank 0's own node
// ("on-host": rank 1). Each point is labelled with its placement.
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Echo final : public Benchmark {
 public:
  std::string_view name() const override { return "echo"; }
  std::string_view description() const override {
    return "ping-pong rank 0 <-> a rank on another node (and on its own node), round trip / 2, 0 B to 64 KB";
  }
  std::vector<Op> needs() const override { return {Op::echo}; }
  // Reported as latency (round trip / 2); a calibration fits the link to its points.
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.time_is = " latency (round trip / 2)";
    t.validated_families = {"echo"};
    t.link_probe = true;
    return t;
  }
  std::vector<std::size_t> default_sizes() const override { return powers_of_two(1, 64 * 1024, true); }
  int min_ranks() const override { return 2; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    struct Pair {
      int peer;
      const char* placement;
    };
    const int t = b.tasks_per_node();
    std::vector<Pair> pairs;
    if (t > 1) pairs.push_back({1, "on-host"});
    if (b.nodes() > 1) pairs.push_back({(b.nodes() - 1) * t, "inter-host"});
    for (const Pair& pair : pairs) {
      // One task per node keeps the names the suite always had (compare.py matches by name).
      const std::string prefix = t > 1 ? "echo/" + std::string(pair.placement) + "/" : std::string("echo/");
      for (std::size_t size : sizes_for(*this, params)) {
        PointResult p = make_point(prefix + "size:" + std::to_string(size), b, measure_ping_pong(b, params, pair.peer, size));
        p.counters["bytes"] = static_cast<double>(size);
        p.labels["placement"] = pair.placement;
        out.report(std::move(p));
      }
    }
  }
};

const RegisterWorkload<Echo> registered{WorkloadKind::benchmark, 100};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
