// barrier: time of one barrier against the number of nodes (thesis Fig. 16).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Barrier final : public Benchmark {
 public:
  std::string_view name() const override { return "barrier"; }
  std::string_view description() const override { return "one barrier over all nodes"; }
  std::vector<Op> needs() const override { return {Op::barrier}; }
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.validated_families = {"barrier"};
    t.modelled_calls = {{"barrier", Op::barrier, false, false}};  // cop_barrier: one word, no data
    return t;
  }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    report_collective(b, params, out, "barrier/nodes:" + std::to_string(b.nodes()), [&] { b.barrier(); });
  }
};

const RegisterWorkload<Barrier> registered{WorkloadKind::benchmark, 200};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
