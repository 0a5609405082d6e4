// Collectives among the tasks of one host, before and after one of them uses
// the channel (seed 000 ch. V, "Barrier Implementation": a partial barrier,
// reduction or broadcast in shared memory, then one task goes to the
// controller for the whole host). The slots live in the channel window
// (driver/window.h), so every local task of the channel sees them.
//
// Each operation is named by a key: (operation, group, tag, chunk) and how
// many times this task has done that operation before, so successive
// operations on one tag never meet in the same slot, even when a fast task
// starts the next before a slow one has left the last.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "driver/window.h"

namespace cop::lib {

class HostArea {
 public:
  explicit HostArea(driver::Window* w) : w_(w) {}

  // The key of this task's next operation of this kind on (group, tag, chunk).
  uint64_t next_key(const char* op, const std::string& group, uint32_t tag, uint32_t chunk);

  // Gathering collective (barrier, reduce): `expected` local tasks arrive,
  // each folding its contribution into the slot's words with `fold`; the last
  // to arrive runs `channel_work` on the folded words (it may replace them by
  // the result) and publishes its return code. Tasks with wants_result wait
  // for the publication and get the words; the others leave at once.
  // Returns the published code (0 or negative).
  int gather(uint64_t key, uint32_t expected, uint32_t readers, bool wants_result, std::span<uint64_t> words,
             const std::function<void(std::span<uint64_t> slot, bool first)>& fold,
             const std::function<int(std::span<uint64_t> slot)>& channel_work);

  // Distributing collective (broadcast receive): `expected` local receivers;
  // the first to arrive runs `fetch` to fill the slot (from the channel) unless
  // a local sender has filled it already; the others copy.
  int receive(uint64_t key, uint32_t expected, std::span<uint64_t> words,
              const std::function<int(std::span<uint64_t> slot, const std::function<bool()>& filled)>& fetch);
  // A local sender fills the slot for `expected` local receivers.
  int publish(uint64_t key, uint32_t expected, std::span<const uint64_t> words);

 private:
  int find(uint64_t key) const;  // host_lock held
  int allocate(uint64_t key, uint32_t expected);
  // The slot of `key`, allocating it when absent (`first` says so) and, when every slot is
  // in use, waiting for one to be freed: a task that runs ahead of the others of its host
  // (a non-root reduce, a broadcast's sender) takes a slot per operation and chunk and
  // must not fail for it. Returns with host_lock held, or -1 (not held) after 30 s.
  int claim(uint64_t key, uint32_t expected, bool& first);
  void wait_change(uint32_t seen);
  void notify();
  void leave(int slot);

  driver::Window* w_;
  std::map<uint64_t, uint64_t> generation_;
};

}  // namespace cop::lib
