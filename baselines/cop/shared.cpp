// Shared words and the lock, on task address spaces (seed 000 ch. V): rank r's words are
// words 0..63 of its TAS. Any task reads them (cop_read: RSRAM64) and adds to them
// atomically (cop_rmw: RMW64, which returns the old value); only the owner may write its
// TAS, so a write to another rank's word is not something COP has (shared_write is not
// offered), and neither is compare-and-swap.
//
// lock: COP has no lock command. This is a ticket lock built from cop_rmw and cop_read
// (seed 004's algorithm): take a ticket with cop_rmw on rank 0's "next ticket" word,
// poll its "now serving" word with cop_read until it shows the ticket, release with
// cop_rmw on "now serving". Every step is one controller command, so the lock costs
// what those commands cost; it is named "ticket lock (cop_rmw + cop_read)" wherever it
// is reported.
#include <cop/cop.h>
#include <pvm3.h>

#include <thread>

#include "cop/cop_backend.h"

namespace copbench::cop {

namespace {
int next_ticket_word(int lock_id) { return kLockWords + 2 * (lock_id % Backend::kLocks); }
int now_serving_word(int lock_id) { return next_ticket_word(lock_id) + 1; }
}  // namespace

std::int64_t CopBackend::shared_read(int owner, int index) {
  long long v = 0;
  check(cop_read(&v, 1, PVM_LONG, tids_[static_cast<std::size_t>(owner)], index, COP_NORMAL), "cop_read");
  return v;
}

std::int64_t CopBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  long long v = add;
  check(cop_rmw(&v, 1, PVM_LONG, tids_[static_cast<std::size_t>(owner)], index, COP_NORMAL), "cop_rmw");
  return v;
}

void CopBackend::lock(int lock_id) {
  const std::int64_t ticket = shared_fetch_add(0, next_ticket_word(lock_id), 1);
  // Yield between polls: on an oversubscribed host the holder may need this core.
  while (shared_read(0, now_serving_word(lock_id)) != ticket) std::this_thread::yield();
}

void CopBackend::unlock(int lock_id) { shared_fetch_add(0, now_serving_word(lock_id), 1); }

}  // namespace copbench::cop
