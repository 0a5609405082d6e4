#include "lib/host.h"

#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

namespace cop::lib {

using driver::HostSlot;
using driver::kHostSlots;

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

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

}  // namespace

uint64_t HostArea::next_key(const char* op, const std::string& group, uint32_t tag, uint32_t chunk) {
  uint64_t base = std::hash<std::string>{}(std::string(op) + '\0' + group);
  base = mix(base, tag);
  base = mix(base, chunk);
  const uint64_t gen = generation_[base]++;
  const uint64_t key = mix(base, gen);
  return key ? key : 1;
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
    return i;
  }
  return -1;
}

int HostArea::claim(uint64_t key, uint32_t expected, bool& first) {
  constexpr uint64_t kSlotWaitNs = 30'000'000'000ull;  // then PvmOutOfRes: something is stuck
  const uint64_t start = driver::monotonic_ns();
  for (;;) {
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    driver::lock_robust(&w_->host_lock);
    int slot = find(key);
    first = slot < 0;
    if (first) slot = allocate(key, expected);
    if (slot >= 0) return slot;
    pthread_mutex_unlock(&w_->host_lock);
    if (driver::monotonic_ns() - start > kSlotWaitNs) return -1;
    wait_change(seen);
  }
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

void HostArea::leave(int slot) {
  HostSlot& s = w_->host[slot];
  if (++s.departed >= s.readers) s.key = 0;
}

int HostArea::gather(uint64_t key, uint32_t expected, uint32_t readers, bool wants_result, std::span<uint64_t> words,
                     const std::function<void(std::span<uint64_t>, bool)>& fold,
                     const std::function<int(std::span<uint64_t>)>& channel_work) {
  if (expected <= 1) {  // alone on this host: no partial operation, straight to the channel
    std::vector<uint64_t> mine(words.size());
    fold(mine, true);
    const int rc = channel_work(mine);
    if (wants_result) std::copy(mine.begin(), mine.end(), words.begin());
    return rc;
  }
  int slot = -1;
  bool last = false;
  {
    bool first = false;
    slot = claim(key, expected, first);
    if (slot < 0) return PvmOutOfRes;
    Locked lock(w_, Adopt{});
    HostSlot& s = w_->host[slot];
    fold(slot_words(s, words.size()), first);
    s.arrived++;
    last = s.arrived == s.expected;
  }
  if (last) {
    HostSlot& s = w_->host[slot];
    std::vector<uint64_t> folded(words.size());
    {
      Locked lock(w_);
      std::copy_n(slot_words(s, words.size()).begin(), words.size(), folded.begin());
    }
    const int rc = channel_work(folded);
    {
      Locked lock(w_);
      std::copy(folded.begin(), folded.end(), slot_words(s, words.size()).begin());
      s.state = rc < 0 ? rc : 1;
      s.readers = readers;
      if (s.readers == 0) s.key = 0;
    }
    notify();
    if (wants_result) std::copy(folded.begin(), folded.end(), words.begin());
    return rc;
  }
  if (!wants_result) return 0;
  for (;;) {
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    int rc = 1;
    {
      Locked lock(w_);
      HostSlot& s = w_->host[slot];
      if (s.state != 0) {
        rc = s.state < 0 ? s.state : 0;
        std::copy_n(slot_words(s, words.size()).begin(), words.size(), words.begin());
        leave(slot);
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
  {
    bool first = false;
    const int slot = claim(key, expected, first);
    if (slot < 0) return PvmOutOfRes;
    Locked lock(w_, Adopt{});
    HostSlot& s = w_->host[slot];
    std::copy(words.begin(), words.end(), slot_words(s, words.size()).begin());
    s.count = int32_t(words.size());
    s.readers = expected;
    s.state = 1;
  }
  notify();
  return 0;
}

int HostArea::receive(uint64_t key, uint32_t expected, std::span<uint64_t> words,
                      const std::function<int(std::span<uint64_t>, const std::function<bool()>&)>& fetch) {
  int slot = -1;
  bool fetcher = false;
  {
    slot = claim(key, expected, fetcher);
    if (slot < 0) return PvmOutOfRes;
    Locked lock(w_, Adopt{});
    if (fetcher) w_->host[slot].readers = expected;
  }
  HostSlot& s = w_->host[slot];
  if (fetcher) {
    // A local sender may fill the slot while we wait on the channel.
    auto filled = [&] {
      Locked lock(w_);
      return s.state != 0;
    };
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
  }
  for (;;) {
    const uint32_t seen = w_->host_event.load(std::memory_order_acquire);
    int rc = 1;
    {
      Locked lock(w_);
      if (s.state != 0) {
        rc = s.state < 0 ? s.state : 0;
        std::copy_n(slot_words(s, words.size()).begin(), words.size(), words.begin());
        leave(slot);
      }
    }
    if (rc <= 0) {
      notify();  // the slot may be free now: a task waiting in claim() takes it
      return rc;
    }
    wait_change(seen);
  }
}

}  // namespace cop::lib
