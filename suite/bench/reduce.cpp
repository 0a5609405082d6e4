// reduce: sum of an int or double array to rank 0, against array size (thesis Fig. 17).
// A backend whose reduction takes several roots in one operation (cop_reduce) also gets
// points with roots 0 and 1, and with every rank a root.
#include <algorithm>
#include <set>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class Reduce final : public Benchmark {
 public:
  std::string_view name() const override { return "reduce"; }
  std::string_view description() const override {
    return "sum of an int / double array to rank 0 (and to several roots where offered)";
  }
  std::vector<Op> needs() const override { return {Op::reduce}; }
  // The one-root families (not those of several roots, reduce/TYPE/roots:N).
  ReportTraits report_traits() const override {
    ReportTraits t;
    t.validated_families = {"reduce/double", "reduce/int"};
    t.validated_sizes = {8};
    t.modelled_calls = {{"reduce/double", Op::reduce, true, true}, {"reduce/int", Op::reduce, false, true}};
    return t;
  }
  std::vector<Op> optional_ops() const override { return {Op::reduce_roots}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 64, 512, 4096, 32768}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (Elem elem : {Elem::i32, Elem::f64}) {
      // Sizes that give the same array run once: 4 B is one int (thesis Table III's one
      // integer element) and, rounded up to one element, also one double, as 8 B is.
      std::set<std::size_t> done;
      for (std::size_t size : sizes_for(*this, params)) {
        // At least one element: a reduction of nothing measures nothing.
        std::size_t count = std::max<std::size_t>(1, size / elem_size(elem));
        if (!done.insert(count).second) continue;
        std::vector<std::byte> in(count * elem_size(elem), std::byte{1});
        std::vector<std::byte> result(in.size());
        auto counters = [&](int nroots) {
          return std::map<std::string, double>{
              {"bytes", static_cast<double>(in.size())}, {"elements", static_cast<double>(count)}, {"roots", nroots}};
        };
        report_collective(b, params, out, name_of(elem, 1, in.size()), [&] {
          b.reduce(in.data(), result.data(), count, elem, ReduceOp::sum, 0);
        }, counters(1));
        if (!b.offers(Op::reduce_roots) || b.ranks() < 2) continue;
        for (int nroots : root_counts(b.ranks())) {
          std::vector<int> roots(static_cast<std::size_t>(nroots));
          for (int r = 0; r < nroots; ++r) roots[static_cast<std::size_t>(r)] = r;
          report_collective(b, params, out, name_of(elem, nroots, in.size()), [&] {
            b.reduce_roots(in.data(), result.data(), count, elem, ReduceOp::sum, roots);
          }, counters(nroots));
        }
      }
    }
  }

 private:
  // Two roots, and every rank (once when there are only two).
  static std::vector<int> root_counts(int ranks) {
    if (ranks == 2) return {2};
    return {2, ranks};
  }

  static std::string name_of(Elem elem, int nroots, std::size_t bytes) {
    std::string name = "reduce/" + std::string(elem_name(elem));
    if (nroots > 1) name += "/roots:" + std::to_string(nroots);
    return name + "/size:" + std::to_string(bytes);
  }
};

const RegisterWorkload<Reduce> registered{WorkloadKind::benchmark, 210};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
