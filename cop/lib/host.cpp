// The host area: collectives among the tasks of one host in the channel window (host.h).
#include "lib/host.h"

#include <cop/cop.h>
#include <pvm3.h>
#include <signal.h>

#include <algorithm>
#include <utility>
#include <cerrno>
#include <cstring>
#include <functional>
#include <vector>

namespace cop::lib {

using driver::HostSlot;
using driver::kHostSlots;

namespace {

// Folds `v` into the hash `h` (the boost::hash_combine step, on 64 bits): a key
// from the operation, group, tag and chunk.
uint64_t hash_combine(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// A retired slot (its worker died): no key next_key() makes, so no new task joins it;
// the tasks still holding it take its error and the last one frees it.
constexpr uint64_t kRetired = ~uint64_t{0};

// The slot's bookkeeping, kept in HostSlot fields the host area has no other use for:
//   count:    1 + TKNO of the worker (0: none yet);
//   at_cycle: the holders, one bit per TKNO (task numbers of a channel are < 64,
//             driver::kMaxLocalTasks).
int worker(const HostSlot& s) { return s.count - 1; }
void set_worker(HostSlot& s, int tkno) { s.count = tkno + 1; }
uint64_t tkno_bit(int tkno) { return tkno >= 0 && tkno < 64 ? uint64_t{1} << tkno : 0; }

struct Adopt {};  // the lock is held already (HostArea::claim)

class Locked {
 public:
  explicit Locked(driver::Window* w) : w_(w) { driver::lock_robust(&w_->host_lock); }
  Locked(driver::Window* w, Adopt) : w_(w) {}
  ~Locked() { pthread_mutex_unlock(&w_->host_lock); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  driver::Window* w_;
};

std::span<uint64_t> slot_words(HostSlot& s, size_t n) { return {reinterpret_cast<uint64_t*>(s.data), n}; }

uint64_t elapsed_ms(uint64_t since_ns) { return (driver::monotonic_ns() - since_ns) / 1'000'000; }

}  // namespace

uint64_t HostArea::next_key(const char* op, const std::string& group, uint32_t tag, uint32_t chunk, uint64_t op_id) {
  uint64_t base = std::hash<std::string>{}(std::string(op) + '\0' + group);
  base = hash_combine(base, tag);
  base = hash_combine(base, chunk);
  base = hash_combine(base, ppn_);
  const uint64_t gen = op_id != 0 ? op_id : generation_[base]++;
  const uint64_t key = hash_combine(base, gen);
  return key && key != kRetired ? key : 1;
}

int HostArea::find(uint64_t key) const {
  for (int i = 0; i < kHostSlots; ++i)
    if (w_->host[i].key == key) return i;
  return -1;
}

int HostArea::allocate(uint64_t key, uint32_t expected) {
  for (int i = 0; i < kHostSlots; ++i) {
    HostSlot& s = w_->host[i];
    if (s.key) continue;
    std::memset(static_cast<void*>(&s), 0, sizeof s);
    s.key = key;
    s.expected = expected;
    s.since_ns = driver::monotonic_ns();
    return i;
  }
  return -1;
}

// A task of this channel is alive when the driver's task table still names it under
// `tkno` and its process exists. This task's own TKNO in a slot it has not joined
// belonged to a task before it (the driver gave the number again): that one is gone.
bool HostArea::alive(int tkno) const {
  if (tkno < 0 || tkno >= driver::kMaxLocalTasks || tkno == tkno_) return false;
  const driver::TaskSlot& t = w_->tasks[tkno];
  if (__atomic_load_n(&t.tkno, __ATOMIC_ACQUIRE) != tkno) return false;
  const pid_t pid = __atomic_load_n(&t.pid, __ATOMIC_ACQUIRE);
  return pid <= 0 || ::kill(pid, 0) == 0 || errno == EPERM;
}

bool HostArea::member_ended(const std::vector<std::pair<int, int>>& members, const HostSlot& s) const {
  for (const auto& [tkno, tid] : members) {
    if (tkno < 0 || tkno >= driver::kMaxLocalTasks || tkno == tkno_ || (s.arrived_tknos & tkno_bit(tkno))) continue;
    const driver::TaskSlot& t = w_->tasks[tkno];
    if (!alive(tkno) || __atomic_load_n(&t.tid, __ATOMIC_ACQUIRE) != tid) return true;
  }
  return false;
}

bool HostArea::purge(HostSlot& s, bool joined) {
  for (int t = 0; t < 64; ++t) {
    const uint64_t b = uint64_t{1} << t;
    if (!(s.at_cycle & b) || (joined && t == tkno_) || alive(t)) continue;
    s.at_cycle &= ~b;  // a dead holder will never take the result: counted as departed
    s.departed++;
  }
  const int wk = worker(s);
  return s.state == 0 && wk >= 0 && !(joined && wk == tkno_) && !alive(wk);
}

void HostArea::hold(HostSlot& s) { s.at_cycle |= tkno_bit(tkno_); }

void HostArea::free_if_done(HostSlot& s) {
  if (s.state == 0 || s.at_cycle != 0) return;
  if (s.key == kRetired || s.departed >= s.readers) s.key = 0;
}

void HostArea::leave(HostSlot& s) {
  s.at_cycle &= ~tkno_bit(tkno_);
  s.departed++;
  free_if_done(s);
}

void HostArea::retire(HostSlot& s, int rc) {
  s.state = rc;
  s.key = kRetired;
  free_if_done(s);
}

bool HostArea::stale(const HostSlot& s) const {
  if (timeout_ms_ <= 0 || s.at_cycle != 0) return false;  // a holder waits on it: its own wait is bounded
  if (s.state == 0 && worker(s) >= 0 && alive(worker(s))) return false;  // its channel part is running
  return elapsed_ms(s.since_ns) > uint64_t(timeout_ms_);
}

int HostArea::wait_over(uint64_t start_ns, int times) const {
  if (link_gone_ && link_gone_()) return CopErrLinkDown;
  if (timeout_ms_ > 0 && elapsed_ms(start_ns) > uint64_t(timeout_ms_) * uint64_t(times)) return CopErrTimeout;
  return 0;
}

// Every slot in use is checked (when none is free): a slot left by dead tasks only
// is freed, and so is a stale one (an operation that failed or timed out: partners
// that never came, results nobody waits for).
void HostArea::sweep() {
  for (int i = 0; i < kHostSlots; ++i) {
    HostSlot& s = w_->host[i];
    if (!s.key) continue;
    if (purge(s, false) && s.at_cycle == 0) {
      s.key = 0;
      continue;
    }
    if (stale(s)) {
      s.key = 0;
      continue;
    }
    free_if_done(s);
  }
}

int HostArea::claim(uint64_t key, uint32_t expected, bool take_over, Claim& how) {
  const uint64_t start = driver::monotonic_ns();
  for (;;) {
    // The bound is read before this round's sweep: a slot as old as this wait is swept
    // (stale) before the wait gives up.
    const int over = wait_over(start);
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    driver::lock_robust(&w_->host_lock);
    int slot = find(key);
    how = Claim::joined;
    if (slot >= 0) {
      HostSlot& s = w_->host[slot];
      const bool worker_dead = purge(s, false);
      if (worker_dead && take_over) {
        set_worker(s, tkno_);
        how = Claim::take_over;
        return slot;
      }
      if (worker_dead) {
        retire(s, CopErrPartnerDied);
        slot = -1;
      } else {
        free_if_done(s);  // left behind by tasks that died before taking the result
        if (!s.key) slot = -1;
      }
    }
    if (slot < 0) {
      how = Claim::allocated;
      slot = allocate(key, expected);
      if (slot < 0) {
        sweep();
        slot = allocate(key, expected);
      }
    }
    if (slot >= 0) return slot;
    pthread_mutex_unlock(&w_->host_lock);
    // Every slot is held by a live operation: bounded like every other wait.
    if (over < 0) return over;
    wait_change(seen);
  }
}

int HostArea::claim_with(uint64_t key, uint32_t expected, bool take_over,
                         const std::function<void(HostSlot&, Claim)>& with_slot) {
  Claim how;
  const int slot = claim(key, expected, take_over, how);
  if (slot < 0) return slot;
  Locked lock(w_, Adopt{});
  with_slot(w_->host[slot], how);
  return slot;
}

bool HostArea::take_result(HostSlot& s, std::span<uint64_t> words, int& rc) {
  if (s.state == 0) return false;
  rc = s.state < 0 ? s.state : 0;
  std::copy_n(slot_words(s, words.size()).begin(), words.size(), words.begin());
  leave(s);
  return true;
}

void HostArea::wait_change(uint32_t seen) {
  w_->host_waiters.fetch_add(1);
  driver::futex_wait(&w_->host_event, seen, 20);
  w_->host_waiters.fetch_sub(1);
}

void HostArea::notify() {
  w_->host_event.fetch_add(1, std::memory_order_release);
  if (w_->host_waiters.load()) driver::futex_wake_all(&w_->host_event);
}

int HostArea::gather(uint64_t key, uint32_t expected, uint32_t readers, bool wants_result, std::span<uint64_t> words,
                     const std::function<void(std::span<uint64_t>, bool)>& fold,
                     const std::function<int(std::span<uint64_t>)>& channel_work) {
  const std::vector<std::pair<int, int>> members = std::exchange(members_, {});
  if (expected <= 1) {  // alone on this host: no partial operation, straight to the channel
    std::vector<uint64_t> mine(words.size());
    fold(mine, true);
    const int rc = channel_work(mine);
    if (wants_result) std::copy(mine.begin(), mine.end(), words.begin());
    return rc;
  }
  bool last = false;
  const int slot = claim_with(key, expected, false, [&](HostSlot& s, Claim how) {
    fold(slot_words(s, words.size()), how == Claim::allocated);
    s.arrived++;
    s.arrived_tknos |= tkno_bit(tkno_);
    last = s.arrived == s.expected;
    if (last)
      set_worker(s, tkno_);
    else if (wants_result)
      hold(s);
  });
  if (slot < 0) return slot;
  HostSlot& s = w_->host[slot];
  if (last) {
    std::vector<uint64_t> folded(words.size());
    {
      Locked lock(w_);
      std::copy_n(slot_words(s, words.size()).begin(), words.size(), folded.begin());
    }
    const int rc = channel_work(folded);
    {
      Locked lock(w_);
      if (s.key == key) {  // not retired meanwhile
        std::copy(folded.begin(), folded.end(), slot_words(s, words.size()).begin());
        s.state = rc < 0 ? rc : 1;
        s.readers = readers;
        free_if_done(s);
      }
    }
    notify();
    if (wants_result) std::copy(folded.begin(), folded.end(), words.begin());
    return rc;
  }
  if (!wants_result) return 0;
  const uint64_t start = driver::monotonic_ns();
  for (;;) {
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    int rc = 1;
    {
      Locked lock(w_);
      if (take_result(s, words, rc)) {
        // rc: the worker's code
      } else if (purge(s, true)) {  // the worker died in the channel part
        retire(s, CopErrPartnerDied);
        rc = CopErrPartnerDied;
        leave(s);
      } else if (worker(s) < 0 && s.state == 0 && member_ended(members, s)) {
        // A local member ended before it added its part: the operation cannot complete.
        retire(s, CopErrTaskEnded);
        rc = CopErrTaskEnded;
        leave(s);
      } else if (const int over = wait_over(start, worker(s) < 0 ? 1 : 2); over < 0) {
        // Given up: a local partner never came (CopTimeout), the partner doing the
        // channel part did not finish (twice that: its own channel wait is bounded by
        // it), or the driver is gone. A slot whose partners never all came is retired:
        // nobody joins it later, whoever still holds it gets the error, and it is
        // freed when they have left.
        if (worker(s) < 0 && s.state == 0) retire(s, over);
        rc = over;
        leave(s);
      }
    }
    if (rc <= 0) {
      notify();  // the slot may be free now: a task waiting in claim() takes it
      return rc;
    }
    wait_change(seen);
  }
}

int HostArea::publish(uint64_t key, uint32_t expected, std::span<const uint64_t> words) {
  // A receiver that died fetching is no loss here: this sender fills the slot.
  const int slot = claim_with(key, expected, true, [&](HostSlot& s, Claim) {
    std::copy(words.begin(), words.end(), slot_words(s, words.size()).begin());
    // The sender's count of local receivers is the true one: a receiver from any sender
    // (srctid -1) that allocated the slot counted this sender among them, and the slot,
    // waiting for a reader that never comes, would stay until swept.
    s.readers = expected;
    set_worker(s, -1);  // nobody needs to fetch
    s.state = 1;
    free_if_done(s);  // every reader gave up already
  });
  if (slot < 0) return slot;
  notify();
  return 0;
}

int HostArea::receive(uint64_t key, uint32_t expected, std::span<uint64_t> words,
                      const std::function<int(std::span<uint64_t>, const std::function<bool()>&)>& fetch) {
  bool fetcher = false;
  const int slot = claim_with(key, expected, true, [&](HostSlot& s, Claim how) {
    if (how == Claim::allocated) {
      s.readers = expected;
      set_worker(s, tkno_);
    }
    hold(s);
    fetcher = how != Claim::joined;
  });
  if (slot < 0) return slot;
  HostSlot& s = w_->host[slot];
  // A local sender may fill the slot while we wait on the channel.
  auto filled = [&] {
    Locked lock(w_);
    return s.state != 0;
  };
  const uint64_t start = driver::monotonic_ns();
  for (;;) {
    if (fetcher) {
      std::vector<uint64_t> got(words.size());
      const int rc = fetch(got, filled);
      {
        Locked lock(w_);
        if (s.state == 0) {  // the channel delivered (or failed) first
          std::copy(got.begin(), got.end(), slot_words(s, words.size()).begin());
          s.state = rc < 0 ? rc : 1;
        }
      }
      notify();
      fetcher = false;
    }
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    int rc = 1;
    {
      Locked lock(w_);
      if (!take_result(s, words, rc)) {
        if (purge(s, true)) {
          // The receiver fetching for this host died: fetch in its place.
          set_worker(s, tkno_);
          fetcher = true;
        } else if (const int over = wait_over(start, 2); over < 0) {
          // The fetching receiver's own channel wait is bounded by the CopTimeout.
          rc = over;
          leave(s);
        }
      }
    }
    if (rc <= 0) {
      notify();  // the slot may be free now: a task waiting in claim() takes it
      return rc;
    }
    if (!fetcher) wait_change(seen);
  }
}

}  // namespace cop::lib
