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

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    Summary s = measure(b, params.timing, timed_loop(b, [&] {
      b.lock(0);
      b.unlock(0);
    }, true, 1.0, timer_overhead_seconds()));
    PointResult p = make_point("lock/native/nodes:" + std::to_string(b.nodes()), b, std::move(s));
    p.labels["lock"] = "native";
    out.report(std::move(p));
  }
};

}  // namespace

const Benchmark& lock_benchmark() {
  static const Lock instance;
  return instance;
}

}  // namespace copbench::bench
