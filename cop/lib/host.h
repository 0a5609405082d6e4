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
//
// A task killed inside an operation must not leave the others (or the next
// task of this host on the same group and tag) waiting forever. Each slot
// therefore records, by task number (TKNO):
//   - the worker: the task doing the operation's channel part (the last to
//     arrive at a barrier or reduction, the first receiver of a broadcast);
//   - the holders: the tasks that still have to take the result.
// Whoever waits on a slot checks these tasks against the driver's task table
// (pid, kill(pid, 0)): a holder that died is counted as gone; when the worker
// died before publishing, a broadcast receiver takes its place (fetches from
// the channel itself), and a barrier or reduction fails for every waiter with
// CopErrPartnerDied. A later task that meets a slot left by a dead task does
// the same, or starts afresh, instead of waiting on it. Every wait is bounded
// by the CopTimeout (when not 0), as the channel's own waits are, and ends with
// CopErrLinkDown as soon as copdrv is gone (the stack stopped under the task).
// Slots of an operation that failed or timed out are swept: a waiter that gives
// up on a slot whose local partners never all came retires it (CopErrTimeout to
// whoever still holds it, nobody joins it); a slot that nobody holds any more and
// that is older than the CopTimeout (a partner that never came, after a link
// outage or a failed call, and tasks that did not wait for the result) is freed
// when a slot is needed, so they never pile up until every collective waits.
// Not covered: a task killed after it has added its part to a barrier or
// reduction but before the last local task arrived has its part counted (a
// task started in its place and arriving with the same key completes the
// local count).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "driver/window.h"

namespace cop::lib {

class HostArea {
 public:
  HostArea(driver::Window* w, int tkno) : w_(w), tkno_(tkno) {}

  // Milliseconds a task waits for its local partners (0: as long as they live).
  void set_timeout(int ms) { timeout_ms_ = ms; }
  // Whether the channel's driver is gone (the task's waits then end with CopErrLinkDown).
  void set_link_check(std::function<bool()> gone) { link_gone_ = std::move(gone); }
  // The task's partition (its job's): tasks of other jobs on this host share the
  // area, and their operations on the same group names and tags are not ours.
  void set_partition(uint8_t ppn) { ppn_ = ppn; }

  // The local members (TKNO, tid) of the next gather(): a waiter finds one that ended
  // (its driver's task table no longer names it) without adding its part, and the
  // operation fails for every local waiter with CopErrTaskEnded at once instead of at
  // the CopTimeout (issue 34, liveness). Cleared by gather().
  void expect_members(std::vector<std::pair<int, int>> members) { members_ = std::move(members); }

  // The key of this task's next operation of this kind on (group, tag, chunk). With an
  // operation identity (`op_id`, not 0: the call's, lib/library.h CallIdentity) the key is
  // made of it instead of this task's own count of such operations: local tasks of
  // different jobs, rounds, datatypes or counts never meet in one slot.
  uint64_t next_key(const char* op, const std::string& group, uint32_t tag, uint32_t chunk, uint64_t op_id = 0);

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
  enum class Claim { joined, allocated, take_over };
  int find(uint64_t key) const;  // host_lock held
  int allocate(uint64_t key, uint32_t expected);
  // The slot of `key`, allocating it when absent and, when every slot is in use, waiting
  // for one to be freed: a task that runs ahead of the others of its host (a non-root
  // reduce, a broadcast's sender) takes a slot per operation and chunk and must not fail
  // for it. A slot whose worker died before publishing is taken over (take_over: a
  // broadcast receiver fetches in its place) or retired and replaced by a fresh one.
  // Returns the slot's index with host_lock held, or (not held) CopErrTimeout after the
  // CopTimeout, CopErrLinkDown when the driver is gone.
  int claim(uint64_t key, uint32_t expected, bool take_over, Claim& how);
  // claim(), then `with_slot` on the slot while the claim's lock is held; the slot's
  // index, or claim's error.
  int claim_with(uint64_t key, uint32_t expected, bool take_over,
                 const std::function<void(driver::HostSlot&, Claim)>& with_slot);
  // With host_lock held: when the slot's result is published, its words and code
  // (0 or the worker's error) to this task, which leaves the slot; false while unpublished.
  bool take_result(driver::HostSlot& s, std::span<uint64_t> words, int& rc);
  void wait_change(uint32_t seen);
  void notify();
  // host_lock held for all of these:
  bool alive(int tkno) const;
  bool purge(driver::HostSlot& s, bool joined);  // true: the worker died before publishing
  void hold(driver::HostSlot& s);
  void leave(driver::HostSlot& s);
  void retire(driver::HostSlot& s, int rc);
  void free_if_done(driver::HostSlot& s);
  // Nobody holds it, nobody works on it, and it is older than the CopTimeout.
  bool stale(const driver::HostSlot& s) const;
  void sweep();
  // A wait's end: 0 to wait on, else CopErrLinkDown (driver gone) or CopErrTimeout
  // (`times` CopTimeouts since start_ns: 2 for a wait on a partner that is itself in a
  // channel wait bounded by the CopTimeout).
  int wait_over(uint64_t start_ns, int times = 1) const;

  driver::Window* w_;
  int tkno_;
  int timeout_ms_ = 10000;
  std::function<bool()> link_gone_;
  uint8_t ppn_ = 0;
  std::vector<std::pair<int, int>> members_;  // expect_members()
  // One of `members` that has not arrived and whose task ended (host_lock held).
  bool member_ended(const std::vector<std::pair<int, int>>& members, const driver::HostSlot& s) const;
  std::map<uint64_t, uint64_t> generation_;
};

}  // namespace cop::lib
