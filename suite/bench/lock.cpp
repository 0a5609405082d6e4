// lock: contended acquire + release of the backend's native lock, all ranks at once
// (cop_rmw-based for cop, a lock-server task for PVM, MPI-3 RMA, ARMCI_Lock).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Lock final : public Benchmark {
 public:
  std::string_view name() const override { return "lock"; }
  std::string_view description() const override {
    return "contended acquire+release of the native lock, every rank";
  }
  std::vector<Op> needs() const override { return {Op::lock}; }
  ReportTraits report_traits() const override { return lock_report_traits(); }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    measure_lock(b, params, out, "native", [&] {
      b.lock(0);
      b.unlock(0);
    });
  }
};

const RegisterWorkload<Lock> registered{WorkloadKind::benchmark, 300};  // copbench/bench.h

}  // namespace

void measure_lock(Backend& b, const RunParams& params, Reporter& out, const std::string& kind,
                  std::function<void()> acquire_release) {
  Summary s = measure(b, params.timing, every_rank_loop(b, std::move(acquire_release), "acquires and releases", "cycles"));
  PointResult p = make_point("lock/" + kind + "/nodes:" + std::to_string(b.nodes()), b, std::move(s));
  p.labels["lock"] = kind;
  out.report(std::move(p));
}

}  // namespace copbench::bench
