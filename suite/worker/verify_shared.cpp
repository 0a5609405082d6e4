// `copbench verify`'s checks of the shared words, the locks and the fences (see
// verify_checks.h), on the words shared_words.h sets aside for them.
#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "copbench/shared_words.h"
#include "worker/verify_checks.h"

namespace copbench::verify {

std::string shared_read_write(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  const int owner = (me + 1) % n;
  const int word = kVerifyReadWriteFirstWord + me % kVerifyReadWriteWords;
  b.shared_write(owner, word, 1000 + me);
  if (b.offers(Op::fence)) b.fence(owner);
  b.sync();
  if (b.offers(Op::shared_read)) {
    std::int64_t v = b.shared_read(owner, word);
    if (v != 1000 + me) return fmt::format("rank {} read {} back from {} word {}, wrote {}", me, v, owner, word, 1000 + me);
  }
  return {};
}

std::string shared_rmw(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  const int word = kVerifyRmwWord;
  std::int64_t old = b.shared_fetch_add(0, word, me + 1);
  b.sync();
  std::vector<double> olds(static_cast<std::size_t>(n), -1.0);
  olds[static_cast<std::size_t>(me)] = static_cast<double>(old);
  b.max_over_ranks(olds);
  std::sort(olds.begin(), olds.end());
  if (std::adjacent_find(olds.begin(), olds.end()) != olds.end()) return "two ranks fetched the same old value";
  if (b.offers(Op::shared_read)) {
    std::int64_t total = b.shared_read(0, word);
    if (total != static_cast<std::int64_t>(n) * (n + 1) / 2)
      return fmt::format("fetch-and-add total {} != {}", total, n * (n + 1) / 2);
  }
  return {};
}

// Every rank tries to swing the same zero word to its own id: exactly one wins.
std::string shared_cas(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  const int word = kVerifyCasWord;
  std::int64_t old = b.shared_compare_swap(0, word, 0, me + 1);
  b.sync();
  std::vector<double> won(static_cast<std::size_t>(n), 0.0);
  won[static_cast<std::size_t>(me)] = old == 0 ? 1.0 : 0.0;
  b.max_over_ranks(won);
  if (std::count(won.begin(), won.end(), 1.0) != 1)
    return fmt::format("{} ranks won the compare-and-swap", std::count(won.begin(), won.end(), 1.0));
  std::vector<double> winner_id{old == 0 ? static_cast<double>(me + 1) : 0.0};
  b.max_over_ranks(winner_id);
  if (b.offers(Op::shared_read)) {
    std::int64_t now = b.shared_read(0, word);
    if (now != static_cast<std::int64_t>(winner_id[0]))
      return fmt::format("word holds {}, winner was {}", now, winner_id[0]);
  }
  if (old != 0 && old != static_cast<std::int64_t>(winner_id[0]))
    return fmt::format("rank {} saw {} instead of the winner {}", me, old, winner_id[0]);
  return {};
}

namespace {

constexpr int kRounds = 20;  // lock and unlock cycles per rank in the lock checks

// After every rank's kRounds read-increment-writes of rank 0's `word` under `lock`: the
// word counts them all, or an update was lost (two ranks were inside at once).
std::string lost_updates(Backend& b, int word, const char* lock) {
  const std::int64_t total = b.shared_read(0, word);
  const std::int64_t expected = static_cast<std::int64_t>(kRounds) * b.ranks();
  if (total != expected) return fmt::format("{} increments under the {}, {} seen", expected, lock, total);
  return {};
}

}  // namespace

// Mutual exclusion: unprotected read-increment-write under the lock loses no update.
std::string lock(Backend& b) {
  const int me = b.rank();
  const int word = kVerifyLockWord;
  const bool counted = b.offers(Op::shared_read) && b.offers(Op::shared_write);
  // Without remote writes (cop), an occupancy count kept with fetch-and-add: whoever
  // enters must find nobody inside.
  const bool occupancy = !counted && b.offers(Op::shared_rmw);
  int intruded = 0;
  for (int i = 0; i < kRounds; ++i) {
    b.lock(1);
    if (counted) {
      std::int64_t v = b.shared_read(0, word);
      b.shared_write(0, word, v + 1);
      if (b.offers(Op::fence)) b.fence(0);
    } else if (occupancy) {
      if (b.shared_fetch_add(0, word, 1) != 0) ++intruded;
      std::this_thread::yield();
      b.shared_fetch_add(0, word, -1);
    }
    b.unlock(1);
  }
  b.sync();
  if (intruded > 0) return fmt::format("rank {} found another rank inside the lock {} times", me, intruded);
  return counted ? lost_updates(b, word, "lock") : std::string();
}

std::string fence(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  const int word = kVerifyFenceWord;
  const int next = (me + 1) % n;
  b.shared_write(next, word, 77 + me);
  b.fence(next);
  b.shared_write(next, word, 78 + me);
  b.all_fence();
  b.sync();
  if (b.offers(Op::shared_read)) {
    int prev = (me + n - 1) % n;
    std::int64_t v = b.shared_read(me, word);
    if (v != 78 + prev) return fmt::format("after the fence rank {} holds {}, not {}", me, v, 78 + prev);
  }
  return {};
}

// Windowed AllFence, for every window size k: rank r (r < kVerifyFenceWindowWriters)
// writes a fresh value into word kVerifyFenceWindowFirstWord + r of every rank, fences
// with window k, and after a barrier each rank finds every such value in its own words.
std::string fence_window(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  for (int k = 1; k <= std::max(1, n - 1); ++k) {
    if (me < kVerifyFenceWindowWriters)
      for (int t = 0; t < n; ++t) b.shared_write(t, kVerifyFenceWindowFirstWord + me, 1000 * k + me);
    b.all_fence_window(k);
    b.sync();
    for (int r = 0; r < std::min<int>(n, kVerifyFenceWindowWriters); ++r) {
      std::int64_t v = b.shared_read(me, kVerifyFenceWindowFirstWord + r);
      if (v != 1000 * k + r)
        return fmt::format("window {}: rank {} holds {} from rank {}, not {}", k, me, v, r, 1000 * k + r);
    }
    b.sync();
  }
  return {};
}

// The combined fence + barrier: a value written just before it is at its target after it.
std::string fence_barrier(Backend& b) {
  const int n = b.ranks();
  const int me = b.rank();
  const int word = kVerifyFenceBarrierWord;
  const int next = (me + 1) % n;
  for (int round = 0; round < 3; ++round) {
    b.shared_write(next, word, 500 + 10 * round + me);
    b.fence_barrier();
    if (b.offers(Op::shared_read)) {
      const int prev = (me + n - 1) % n;
      std::int64_t v = b.shared_read(me, word);
      if (v != 500 + 10 * round + prev)
        return fmt::format("round {}: after the fence-barrier rank {} holds {}, not {}", round, me, v,
                           500 + 10 * round + prev);
    }
    b.sync();
  }
  return {};
}

// The server queue lock protecting a read-modify-write counter: no update is lost, so
// the count is ranks x rounds. Without shared words, an occupancy check is all there is.
std::string server_lock(Backend& b) {
  const int word = kVerifyServerLockWord;
  const bool counted = b.offers(Op::shared_read) && b.offers(Op::shared_write);
  for (int i = 0; i < kRounds; ++i) {
    b.server_lock(2);
    if (counted) {
      std::int64_t v = b.shared_read(0, word);
      std::this_thread::yield();  // widen the window a lost update would need
      b.shared_write(0, word, v + 1);
      if (b.offers(Op::fence)) b.fence(0);
    }
    b.server_unlock(2);
  }
  b.sync();
  return counted ? lost_updates(b, word, "server lock") : std::string();
}

}  // namespace copbench::verify
