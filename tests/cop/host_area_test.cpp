// libcop's host area (cop/lib/host.h: the partial collectives among the tasks of
// one host) on a channel window in this process, two local tasks as two
// HostArea objects: the slots of operations that failed or timed out are swept,
// and no wait outlives the CopTimeout or the driver.
#include "lib/host.h"

#include <cop/cop.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using cop::lib::HostArea;

namespace {

// A channel window whose task table has tasks 0 and 1 (this process: both alive).
struct Area {
  std::unique_ptr<cop::driver::Window> w = std::make_unique<cop::driver::Window>();
  Area() {
    cop::driver::init_window(w.get(), ::getpid(), 1);
    w->tasks_per_channel = 8;
    for (int t : {0, 1}) w->tasks[t] = cop::driver::TaskSlot{::getpid(), 0x40001 + t, int16_t(t), 1, 0};
  }
  bool holds(uint64_t key) const {
    for (const auto& s : w->host)
      if (s.key == key) return true;
    return false;
  }
  int slots_in_use() const {
    int n = 0;
    for (const auto& s : w->host) n += s.key != 0;
    return n;
  }
};

// A reduction's host part with 2 local members: this task's word folded in; the
// channel part (done by the last to arrive) succeeds. `readers`: the members that
// take the result from the slot (a root that is not the last to arrive).
int reduce_part(HostArea& h, uint64_t key, bool wants_result, uint32_t readers) {
  std::vector<uint64_t> words = {7};
  return h.gather(
      key, 2, readers, wants_result, words,
      [&](std::span<uint64_t> slot, bool first) { slot[0] = first ? words[0] : slot[0] + words[0]; },
      [](std::span<uint64_t>) { return 0; });
}

}  // namespace

// A non-root member arrives, adds its part and leaves (it wants no result); its local
// partner never comes (its call failed before, as after a link outage). Every such
// slot used to stay until all 64 were taken; then each collective waited 30 s for a
// free one and failed. They are swept once older than the CopTimeout.
TEST(HostArea, SlotsWhosePartnersNeverCameAreSwept) {
  Area a;
  HostArea task(a.w.get(), 0);
  task.set_timeout(200);
  for (uint64_t key = 1; key <= uint64_t(cop::driver::kHostSlots); ++key) ASSERT_EQ(reduce_part(task, key, false, 0), 0);
  EXPECT_EQ(a.slots_in_use(), cop::driver::kHostSlots);
  // The next operation gets a slot once the stale ones are swept (not CopErrTimeout
  // or PvmOutOfRes), and its partner meets it there.
  HostArea partner(a.w.get(), 1);
  partner.set_timeout(200);
  EXPECT_EQ(reduce_part(task, 1000, false, 0), 0);
  // The oldest stale slot was swept (how many others were too depends on how long the
  // 64 took to fill: a loaded machine spreads them past the CopTimeout).
  EXPECT_FALSE(a.holds(1));
  EXPECT_TRUE(a.holds(1000));
  EXPECT_EQ(reduce_part(partner, 1000, true, 0), 0);  // the partner is the last: it has the result itself
  EXPECT_FALSE(a.holds(1000));                        // and the slot is free again
}

// A member that waits for the result and whose partner never comes gives up at the
// CopTimeout and retires the slot: a partner arriving later does not complete an
// operation its partner has given up on; it waits on its own slot and times out too.
TEST(HostArea, AWaiterThatGivesUpRetiresTheSlot) {
  Area a;
  HostArea first(a.w.get(), 0), late(a.w.get(), 1);
  first.set_timeout(100);
  late.set_timeout(100);
  EXPECT_EQ(reduce_part(first, 42, true, 1), CopErrTimeout);
  EXPECT_EQ(a.slots_in_use(), 0);
  EXPECT_EQ(reduce_part(late, 42, true, 1), CopErrTimeout);
  EXPECT_EQ(a.slots_in_use(), 0);
}

// The driver gone (the stack stopped under the task): a wait on a partner ends at
// once with CopErrLinkDown, even with no CopTimeout.
TEST(HostArea, WaitsEndWhenTheDriverIsGone) {
  Area a;
  HostArea task(a.w.get(), 0);
  task.set_timeout(0);
  task.set_link_check([] { return true; });
  EXPECT_EQ(reduce_part(task, 5, true, 1), CopErrLinkDown);
  EXPECT_EQ(a.slots_in_use(), 0);
}

// A broadcast receiver from any sender (srctid -1) counts every local member as a
// receiver, the local sender too (it cannot know who sends): it allocates the slot for
// 2 readers. The sender publishes for the 1 there is; once that one has its words the
// slot is free, not left waiting for a second reader until swept (issue 34: such a
// leftover slot met a later call of the same key).
TEST(HostArea, ASenderSetsTheReadersOfASlotAReceiverFromAnySenderAllocated) {
  Area a;
  HostArea receiver(a.w.get(), 0), sender(a.w.get(), 1);
  receiver.set_timeout(5000);
  sender.set_timeout(5000);
  std::atomic<int> rc{1};
  std::vector<uint64_t> got(1);
  std::thread t([&] {
    rc = receiver.receive(77, 2, got, [](std::span<uint64_t>, const std::function<bool()>& filled) {
      while (!filled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return 0;
    });
  });
  while (!a.holds(77)) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the receiver allocated it
  const std::vector<uint64_t> words = {527};
  EXPECT_EQ(sender.publish(77, 1, words), 0);
  t.join();
  EXPECT_EQ(rc.load(), 0);
  EXPECT_EQ(got[0], 527u);
  EXPECT_EQ(a.slots_in_use(), 0);
}
