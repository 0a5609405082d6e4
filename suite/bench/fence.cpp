// fence: seed 004 section 3.3's test: each iteration writes to remote ranks and then
// fences. Points: write to the next rank + Fence(next); write to every other rank +
// AllFence, and the same with one Fence per target in turn (seed 004's sequential
// AllFence); and the AllFence + barrier pair that seed 004 compares its combined
// fence-barrier against. (Seed 004's windowed-K AllFence changes ARMCI's internals and
// is not something a backend offers.)
#include "bench/common.h"

namespace copbench::bench {
namespace {

constexpr int kWord = 2;

class Fence final : public Benchmark {
 public:
  std::string_view name() const override { return "fence"; }
  std::string_view description() const override {
    return "put + Fence(target), puts to all + AllFence / sequential Fences, AllFence + barrier";
  }
  std::vector<Op> needs() const override { return {Op::fence, Op::shared_write, Op::barrier}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int me = b.rank();
    const int n = b.ranks();
    const int next = (me + 1) % n;
    const double overhead = timer_overhead_seconds();
    auto put_all = [&] {
      for (int r = 0; r < n; ++r)
        if (r != me || n == 1) b.shared_write(r, kWord, me);
    };
    Summary one = measure(b, params.timing, timed_loop(b, [&] {
      b.shared_write(next, kWord, me);
      b.fence(next);
    }, true, 1.0, overhead));
    out.report(make_point("fence/put+fence", b, std::move(one)));

    Summary all = measure(b, params.timing, timed_loop(b, [&] {
      put_all();
      b.all_fence();
    }, true, 1.0, overhead));
    out.report(make_point("fence/puts+allfence", b, std::move(all)));

    // Seed 004's original AllFence: one Fence per target, one after the other.
    Summary sequential = measure(b, params.timing, timed_loop(b, [&] {
      put_all();
      for (int r = 0; r < n; ++r)
        if (r != me || n == 1) b.fence(r);
    }, true, 1.0, overhead));
    out.report(make_point("fence/puts+sequential-fences", b, std::move(sequential)));

    Summary with_barrier = measure(b, params.timing, timed_collective(b, [&] {
      put_all();
      b.all_fence();
      b.barrier();
    }, overhead));
    out.report(make_point("fence/puts+allfence+barrier", b, std::move(with_barrier)));
  }
};

}  // namespace

const Benchmark& fence_benchmark() {
  static const Fence instance;
  return instance;
}

}  // namespace copbench::bench
