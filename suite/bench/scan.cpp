// scan: inclusive prefix sum of a double array over ranks (seed 003's tree scan).
#include <algorithm>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Scan final : public Benchmark {
 public:
  std::string_view name() const override { return "scan"; }
  std::string_view description() const override { return "inclusive prefix sum of a double array"; }
  std::vector<Op> needs() const override { return {Op::scan}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 512, 4096, 32768}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::size_t count = std::max<std::size_t>(1, size / sizeof(double));
      std::vector<double> in(count, 1.0), result(count);
      const std::size_t bytes = count * sizeof(double);
      report_collective(b, params, out, "scan/size:" + std::to_string(bytes),
                        [&] { b.scan(in.data(), result.data(), count, Elem::f64, ReduceOp::sum); },
                        {{"bytes", static_cast<double>(bytes)}});
    }
  }
};

const RegisterWorkload<Scan> registered{WorkloadKind::benchmark, 270};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
