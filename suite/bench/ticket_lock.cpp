// ticket-lock: seed 004's ticket lock (section 5.1.2) built on the backend's shared
// variables: fetch-and-increment a ticket counter on rank 0, spin reading the "now
// serving" word until it equals the ticket, release by incrementing it.
#include <thread>

#include "bench/common.h"

namespace copbench::bench {
namespace {

class TicketLock final : public Benchmark {
 public:
  std::string_view name() const override { return "ticket-lock"; }
  std::string_view description() const override {
    return "seed 004 ticket lock on shared fetch-and-add + read, contended by every rank";
  }
  std::vector<Op> needs() const override { return {Op::shared_rmw, Op::shared_read}; }
  ReportTraits report_traits() const override { return lock_report_traits(); }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    // Both words start at zero (Backend's shared variables) and every acquire is matched
    // by a release, so the invariant holds from warm-up on.
    measure_lock(b, params, out, "ticket", [&] {
      std::int64_t ticket = b.shared_fetch_add(0, kTicketNextWord, 1);
      // Yield between polls: on an oversubscribed host the holder may need this core.
      while (b.shared_read(0, kTicketServingWord) != ticket) std::this_thread::yield();
      b.shared_fetch_add(0, kTicketServingWord, 1);
    });
  }
};

const RegisterWorkload<TicketLock> registered{WorkloadKind::benchmark, 310};  // copbench/bench.h

}  // namespace

}  // namespace copbench::bench
