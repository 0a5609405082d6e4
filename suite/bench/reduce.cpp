// reduce: sum of an int or double array to rank 0, against array size (thesis Fig. 17).
#include <algorithm>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Reduce final : public Benchmark {
 public:
  std::string_view name() const override { return "reduce"; }
  std::string_view description() const override { return "sum of an int / double array to rank 0"; }
  std::vector<Op> needs() const override { return {Op::reduce}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 64, 512, 4096, 32768}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (Elem elem : {Elem::i32, Elem::f64}) {
      for (std::size_t size : sizes_for(*this, params)) {
        // At least one element: a reduction of nothing measures nothing.
        std::size_t count = std::max<std::size_t>(1, size / elem_size(elem));
        std::vector<std::byte> in(count * elem_size(elem), std::byte{1});
        std::vector<std::byte> result(in.size());
        Summary s = measure(b, params.timing, timed_collective(b, [&] {
          b.reduce(in.data(), result.data(), count, elem, ReduceOp::sum, 0);
        }, timer_overhead_seconds()));
        PointResult p = make_point("reduce/" + std::string(elem_name(elem)) + "/size:" +
                                       std::to_string(in.size()), b, std::move(s));
        p.counters["bytes"] = static_cast<double>(in.size());
        p.counters["elements"] = static_cast<double>(count);
        out.report(std::move(p));
      }
    }
  }
};

}  // namespace

const Benchmark& reduce_benchmark() {
  static const Reduce instance;
  return instance;
}

}  // namespace copbench::bench
