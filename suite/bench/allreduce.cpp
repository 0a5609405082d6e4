// allreduce: a sum of doubles to rank 0 followed by a broadcast of the result, the
// reduce-then-multicast step of the thesis's EGO application (ch. VI), which
// cop_reduce does in one call by sending the result through the broadcast mask.
// The worked example of "Adding a workload" in README.md.
#include <algorithm>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Allreduce final : public Benchmark {
 public:
  std::string_view name() const override { return "allreduce"; }
  std::string_view description() const override { return "sum of a double array to rank 0, then the result broadcast to all"; }
  std::vector<Op> needs() const override { return {Op::reduce, Op::broadcast}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 64, 512, 8192}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::size_t count = std::max<std::size_t>(1, size / sizeof(double));
      std::vector<double> in(count, 1.0), sum(count);
      std::span<std::byte> result(reinterpret_cast<std::byte*>(sum.data()), count * sizeof(double));
      report_collective(b, params, out, "allreduce/size:" + std::to_string(result.size()), [&] {
        b.reduce(in.data(), sum.data(), count, Elem::f64, ReduceOp::sum, 0);
        b.broadcast(result, 0);
      }, {{"bytes", static_cast<double>(result.size())}});
    }
  }
};

const RegisterWorkload<Allreduce> registered{WorkloadKind::benchmark, 220};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
