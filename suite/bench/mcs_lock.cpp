// mcs-lock: seed 004's MCS queue lock built on the backend's shared words. The tail word
// lives on rank 0; every rank's queue node (next, locked) lives in its own words, so a
// waiter spins on its own memory. Ids are rank + 1, so 0 means "none". The swap on the tail
// is a compare-and-swap loop; release uses compare-and-swap as in the original algorithm.
#include <thread>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class McsLock final : public Benchmark {
 public:
  std::string_view name() const override { return "mcs-lock"; }
  std::string_view description() const override {
    return "seed 004 MCS queue lock on shared read/write/compare-and-swap, contended by every rank";
  }
  std::vector<Op> needs() const override { return {Op::shared_read, Op::shared_write, Op::shared_cas}; }
  ReportTraits report_traits() const override { return lock_report_traits(); }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    const int me = b.rank();
    const std::int64_t id = me + 1;
    // Writes must be complete at their target before anyone can act on them.
    auto complete = [&](int target) {
      if (b.offers(Op::fence)) b.fence(target);
    };
    auto acquire = [&] {
      b.shared_write(me, kMcsNextWord, 0);
      b.shared_write(me, kMcsLockedWord, 1);
      complete(me);
      std::int64_t pred = b.shared_read(0, kMcsTailWord);
      for (;;) {
        std::int64_t seen = b.shared_compare_swap(0, kMcsTailWord, pred, id);
        if (seen == pred) break;
        pred = seen;
      }
      if (pred != 0) {
        b.shared_write(static_cast<int>(pred - 1), kMcsNextWord, id);
        complete(static_cast<int>(pred - 1));
        while (b.shared_read(me, kMcsLockedWord) != 0) std::this_thread::yield();
      }
    };
    auto release = [&] {
      std::int64_t next = b.shared_read(me, kMcsNextWord);
      if (next == 0) {
        if (b.shared_compare_swap(0, kMcsTailWord, id, 0) == id) return;
        while ((next = b.shared_read(me, kMcsNextWord)) == 0) std::this_thread::yield();
      }
      b.shared_write(static_cast<int>(next - 1), kMcsLockedWord, 0);
      complete(static_cast<int>(next - 1));
    };
    measure_lock(b, params, out, "mcs", [&] {
      acquire();
      release();
    });
  }
};

const RegisterWorkload<McsLock> registered{WorkloadKind::benchmark, 320};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
