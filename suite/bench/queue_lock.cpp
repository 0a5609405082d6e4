// queue-lock: seed 004's server-based queue lock (5.1.1) under contention: a lock server
// keeps a FIFO queue of requesters per lock; lock = request message, wait for the grant;
// unlock = release message, and the server grants the next in the queue. Every rank
// acquires and releases lock 0 as fast as it can, as in `lock`, `ticket-lock` and
// `mcs-lock`, so the four compare point for point.
#include "bench/common.h"

namespace copbench::bench {
namespace {

class QueueLock final : public Benchmark {
 public:
  std::string_view name() const override { return "queue-lock"; }
  std::string_view description() const override {
    return "seed 004 server queue lock (a lock server's FIFO queue), contended by every rank";
  }
  std::vector<Op> needs() const override { return {Op::server_lock}; }
  ReportTraits report_traits() const override { return lock_report_traits(); }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    measure_lock(b, params, out, "server-queue", [&] {
      b.server_lock(0);
      b.server_unlock(0);
    });
  }
};

const RegisterWorkload<QueueLock> registered{WorkloadKind::benchmark, 330};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
