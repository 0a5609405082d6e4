// fence: seed 004's fence tests (3.2, 4.4): each iteration writes to remote ranks and then
// completes the writes. Points: write to the next rank + Fence(next); write to every other
// rank + AllFence; the same with one Fence per target in turn (seed 004's original
// AllFence, 3.1.1); the windowed AllFence of 3.1.2 (fence requests to K targets at a time,
// then the K acknowledgements) for K = 1, 2, 4, ... and ranks - 1, where the backend
// offers it; AllFence + MPI_Barrier (seed 004's "current" barrier, ch. 4: the backend's
// message barrier, which on armci is MPI_Barrier, not ARMCI_Barrier); and the combined
// fence + barrier of ch. 4 where offered. Ratios of the sequential and windowed points to
// each other, and of the two barrier points, are seed 004's comparisons.
#include <algorithm>

#include "bench/common.h"

namespace copbench::bench {
namespace {

// Every rank writes and fences back to back after a sync; per rank loop time / rounds.
Batch fence_loop(Backend& b, std::function<void()> op) { return every_rank_loop(b, std::move(op), "writes and fences", "rounds"); }

class Fence final : public Benchmark {
 public:
  std::string_view name() const override { return "fence"; }
  std::string_view description() const override {
    return "seed 004: put + Fence; puts + AllFence / sequential / windowed-K Fences; AllFence + MPI_Barrier vs fence-barrier";
  }
  std::vector<Op> needs() const override { return {Op::fence, Op::shared_write, Op::barrier}; }
  std::vector<Op> optional_ops() const override { return {Op::fence_window, Op::fence_barrier}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int me = b.rank();
    const int n = b.ranks();
    const int next = (me + 1) % n;
    const double overhead = timer_overhead_seconds();
    auto put_all = [&] {
      for (int r = 0; r < n; ++r)
        if (r != me || n == 1) b.shared_write(r, kFencePutWord, me);
    };
    Summary one = measure(b, params.timing, fence_loop(b, [&] {
      b.shared_write(next, kFencePutWord, me);
      b.fence(next);
    }));
    out.report(make_point("fence/put+fence", b, std::move(one)));

    Summary all = measure(b, params.timing, fence_loop(b, [&] {
      put_all();
      b.all_fence();
    }));
    out.report(make_point("fence/puts+allfence", b, std::move(all)));

    // Seed 004's original AllFence: one Fence per target, one after the other.
    Summary sequential = measure(b, params.timing, fence_loop(b, [&] {
      put_all();
      for (int r = 0; r < n; ++r)
        if (r != me || n == 1) b.fence(r);
    }));
    out.report(make_point("fence/puts+sequential-fences", b, std::move(sequential)));

    // Seed 004 3.1.2: K fence requests in flight, K = 1 (the sequential AllFence again,
    // through the windowed code), powers of two, and every target at once.
    if (b.offers(Op::fence_window)) {
      const int targets = std::max(1, n - 1);
      std::vector<int> windows;
      for (int k = 1; k < targets; k *= 2) windows.push_back(k);
      windows.push_back(targets);
      for (int k : windows) {
        Summary windowed = measure(b, params.timing, fence_loop(b, [&] {
          put_all();
          b.all_fence_window(k);
        }));
        PointResult p = make_point("fence/puts+allfence-window:" + std::to_string(k), b, std::move(windowed));
        p.labels["window"] = std::to_string(k);
        out.report(std::move(p));
      }
    }

    Summary with_barrier = measure(b, params.timing, timed_collective(b, [&] {
      put_all();
      b.all_fence();
      b.message_barrier();
    }, overhead));
    PointResult baseline = make_point("fence/puts+allfence+barrier", b, std::move(with_barrier));
    baseline.labels["sync"] = "allfence+mpi-barrier";
    out.report(std::move(baseline));

    // Seed 004 ch. 4: the writes' completion and the barrier as one operation.
    if (b.offers(Op::fence_barrier)) {
      Summary combined = measure(b, params.timing, timed_collective(b, [&] {
        put_all();
        b.fence_barrier();
      }, overhead));
      PointResult p = make_point("fence/puts+fence-barrier", b, std::move(combined));
      p.labels["sync"] = "fence-barrier";
      out.report(std::move(p));
    }
  }
};

const RegisterWorkload<Fence> registered{WorkloadKind::benchmark, 350};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
