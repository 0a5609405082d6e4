// copd + copdrv in both access modes: restarts of copd and copdrv, commands waiting for
// service, locks and waits that time out, killed daemons and tasks ending every wait
// with an error (not a hang), and a controller that never answers.
#include "driver_harness.h"

namespace {

// copdrv killed and started again on its node within the lease takes its
// channel back (copd fails what the old one left waiting); another node is
// still refused (RefusesSecondRegistrationAndUnknownChannel).
TEST_P(Modes, RestartedDriverTakesItsChannelBack) {
  Stack s(2);
  {
    auto p = open(s, 1, GetParam());
    ASSERT_TRUE(p);
  }
  s.kill_driver(1);
  const pid_t again = s.start_driver(1);
  ASSERT_TRUE(s.wait_for_driver_log(1, "registered with copd", 2)) << s.driver_log(1) << s.copd_log();
  EXPECT_EQ(::waitpid(again, nullptr, WNOHANG), 0);  // still running
  EXPECT_TRUE(s.wait_for_copd_log("taken over by a new driver")) << s.copd_log();
  auto p1 = open(s, 1, GetParam());
  auto p2 = open(s, 2, GetParam());
  ASSERT_TRUE(p1 && p2);
  Error e2 = Error::none;
  std::thread t([&] { e2 = barrier(*p2, 60, bit(1) | bit(2)); });
  EXPECT_EQ(barrier(*p1, 60, bit(1) | bit(2)), Error::none);
  t.join();
  EXPECT_EQ(e2, Error::none);
}

// copd restarted: each copdrv registers again (a new session of the reply stream,
// copd's new epoch) and joins its tasks again naming their partition's epoch, which
// the new copd does not have: the task that was there before gets epoch_lost for
// every command (cop.h "Epochs"), never an answer of the zeroed controller as if it
// were its own (before: enrolled again silently, a counter read back as 0 with rc 0).
// It joins again knowingly (a new port: cop_exit + cop_mytid) and works.
TEST_P(Modes, TasksGetEpochLostAfterCopdRestarts) {
  Stack s(2);
  auto p = open(s, 1, GetParam());
  ASSERT_TRUE(p);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
  ASSERT_EQ(p->exchange(probe, a), Error::none);
  ASSERT_EQ(a[0].error, Error::none);
  s.kill_copd();
  s.start_copd();
  ASSERT_TRUE(wait_until([&] { return s.count_in_copd_log("registered by") >= 4; }, std::chrono::seconds(10)))
      << "the two drivers did not register with the restarted copd within 10 s:\n"
      << s.copd_log();
  EXPECT_TRUE(s.wait_for_driver_log(1, "copd has another epoch")) << s.driver_log(1);
  // link_down (or timeout) while the channel is down; then epoch_lost, never a success.
  Error e = Error::link_down;
  bool succeeded = false;
  ASSERT_TRUE(wait_until(
      [&] {
        e = p->exchange(probe, a);
        succeeded |= e == Error::none && a.at(0).error == Error::none;
        return e == Error::none && a.at(0).error == Error::epoch_lost;
      },
      std::chrono::seconds(10)))
      << "the task's commands did not get epoch_lost 10 s after copd came back: " << cop::wire::error_name(e) << "\n"
      << s.copd_log();
  EXPECT_FALSE(succeeded) << "a command of the task enrolled before the restart succeeded";
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(p->exchange(probe, a), Error::none);
    EXPECT_EQ(a.at(0).error, Error::epoch_lost);
  }
  p.reset();
  auto again = open(s, 1, GetParam());
  ASSERT_TRUE(again);
  std::vector<Message> probe2 = {cmd(Opcode::PROBE, *again)};
  ASSERT_EQ(again->exchange(probe2, a), Error::none);
  EXPECT_EQ(a.at(0).error, Error::none);
}

// A frame whose commands wait for service (here a LOCK held by another
// channel) is not lost: copd answers its resends "in progress", and the
// waiting task does not run into its retry limit however long the wait.
TEST_P(Modes, CommandsWaitingForServiceDoNotExhaustTheRetryLimit) {
  Stack s(2, 8, {"--lock-limit-ms", "0"});  // the LOCK is held for as long as the test needs
  auto holder = open(s, 1, GetParam());
  auto waiter = open(s, 2, GetParam());
  ASSERT_TRUE(holder && waiter);
  cop::driver::LinkOptions quick;
  quick.ack_timeout_ms = 10;
  quick.retry_limit = 2;  // 10 + 20 + 40 ms without the in-progress word
  waiter->set_link_options(quick);
  std::vector<Answer> a;
  std::vector<Message> lock = {cmd(Opcode::LOCK, *holder)};
  ASSERT_EQ(holder->exchange(lock, a), Error::none);
  ASSERT_EQ(a[0].error, Error::none);
  Error waited = Error::timeout;
  std::atomic<bool> finished{false};
  std::vector<Answer> wa;
  const uint64_t resends_before = waiter->window()->resends.load();
  std::thread t([&] {
    std::vector<Message> f = {cmd(Opcode::LOCK, *waiter), cmd(Opcode::PROBE, *waiter), cmd(Opcode::UNLOCK, *waiter)};
    waited = waiter->exchange(f, wa);
    finished = true;
  });
  // The point is the length of the wait: the waiter's frame is resent more
  // often than its retry budget allows, and the waiter still waits.
  const uint64_t beyond_budget = uint64_t(quick.retry_limit) + 2;
  EXPECT_TRUE(wait_until([&] { return finished || waiter->window()->resends.load() - resends_before >= beyond_budget; },
                         std::chrono::seconds(10)))
      << "the waiter resent its frame only " << waiter->window()->resends.load() - resends_before << " times in 10 s";
  EXPECT_FALSE(finished) << "the waiter gave up while the LOCK was held: "
                         << (finished ? cop::wire::error_name(waited) : "");
  std::vector<Message> unlock = {cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(unlock, a), Error::none);
  t.join();
  ASSERT_EQ(waited, Error::none);
  ASSERT_EQ(wa.size(), 3u);
  for (const auto& x : wa) EXPECT_EQ(x.error, Error::none);
  ASSERT_TRUE(wa[1].has_data);
  EXPECT_EQ(wa[1].data.addr.chno, 2);
}

// The deadlock timer (copd --lock-limit-ms, default 500 ms; seed 000 ch. IV: a LOCK
// stops the poll counter at its channel): a task that sends LOCK and never its
// UNLOCK stops the other channels only until copd takes the lock back. The other
// channel's operations complete; the holder's UNLOCK gets NACK lock_timeout.
TEST_P(Modes, ALockHeldTooLongIsTakenBackAndTheOtherChannelsRun) {
  Stack s(2);
  auto holder = open(s, 1, GetParam());
  auto other = open(s, 2, GetParam());
  ASSERT_TRUE(holder && other);
  std::vector<Answer> a;
  std::vector<Message> lock = {cmd(Opcode::LOCK, *holder)};
  ASSERT_EQ(holder->exchange(lock, a), Error::none);
  ASSERT_EQ(a[0].error, Error::none);
  // Ten fetch-and-adds on the other channel's own task address space, each checked.
  auto done = std::async(std::launch::async, [&] {
    const uint32_t word = cop::wire::Address::tas_tag(other->info().tkno, 3);
    int right = 0;
    for (uint64_t i = 0; i < 10; ++i) {
      Message rmw = cmd(Opcode::RMW64, *other, Space::TAS, word);
      rmw.set_data64(1);
      std::vector<Message> f = {rmw};
      std::vector<Answer> b;
      if (other->exchange(f, b) != Error::none || b[0].error != Error::none || !b[0].has_data) break;
      if (b[0].data.data64() == i) right++;
    }
    return right;
  });
  // Bounded: with no deadlock timer the operations wait for ever; copd killed after
  // 20 s turns that into the failure below.
  if (done.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(done.get(), 10) << "the other channel's operations did not all complete while a LOCK was held";
  EXPECT_TRUE(s.wait_for_copd_log("taken back")) << s.copd_log();
  std::vector<Message> unlock = {cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(unlock, a), Error::none);
  EXPECT_EQ(a[0].error, Error::lock_timeout);
  // The holder starts clean with its next locked sequence.
  std::vector<Message> again = {cmd(Opcode::LOCK, *holder), cmd(Opcode::PROBE, *holder), cmd(Opcode::UNLOCK, *holder)};
  ASSERT_EQ(holder->exchange(again, a), Error::none);
  for (const Answer& x : a) EXPECT_EQ(x.error, Error::none);
}

// A frame whose commands wait for service (here: a second barrier on a tag whose
// first is still waiting for the other channel) is answered "in progress" when it
// is resent, which restarts the retry count; the wait still ends at the task's
// timeout (CopTimeout, LinkOptions::wait_timeout_ms) with timeout, and the task's
// next frames work.
TEST_P(Modes, CommandsKeptInProgressStillTimeOut) {
  Stack s(2);
  auto one = open(s, 1, GetParam());
  auto two = open(s, 2, GetParam());
  ASSERT_TRUE(one && two);
  const uint32_t tag = 70;
  const uint64_t mask = bit(1) | bit(2);
  std::vector<Answer> a;
  auto first = barrier_frame(*one, tag, mask);
  ASSERT_EQ(one->exchange(first, a), Error::none);
  ASSERT_EQ(a[3].error, Error::none);  // channel 1 is in the first barrier, channel 2 is not
  cop::driver::LinkOptions o;
  o.ack_timeout_ms = 10;
  o.retry_limit = 2;
  o.wait_timeout_ms = 500;
  one->set_link_options(o);
  auto second = std::async(std::launch::async, [&] {
    auto frame = barrier_frame(*one, tag, mask);  // the next barrier on the tag: held by copd
    std::vector<Answer> b;
    return one->exchange(frame, b);
  });
  // Bounded: a wait without end is turned into link_down by killing copd after 20 s.
  if (second.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(second.get(), Error::timeout);
  // Channel 2 completes the first barrier; channel 1's next frame is answered.
  EXPECT_EQ(barrier(*two, tag, mask), Error::none);
  std::vector<Message> probe = {cmd(Opcode::PROBE, *one)};
  ASSERT_EQ(one->exchange(probe, a), Error::none);
  EXPECT_EQ(a[0].error, Error::none);
}

// copdrv killed -9 and not yet reaped (a zombie, which kill(pid, 0) still finds): its
// node's task's next call fails with link_down instead of going on through the
// channel socket it shares with the dead driver.
TEST_P(Modes, KilledDriverEndsItsTasksNextCallEvenAsAZombie) {
  Stack s(2);
  auto p = open(s, 1, GetParam());
  ASSERT_TRUE(p);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *p)};
  ASSERT_EQ(p->exchange(probe, a), Error::none);
  const pid_t driver = s.driver_pid(1);
  ASSERT_EQ(::kill(driver, SIGKILL), 0);
  // Not reaped (the Stack reaps it at the end): wait until the kernel shows the zombie.
  auto state = [&] {
    const std::string stat = cop::testing::read_file("/proc/" + std::to_string(driver) + "/stat");
    const size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
  };
  ASSERT_TRUE(wait_until([&] { return state() == 'Z'; }, std::chrono::seconds(10))) << "state " << state();
  EXPECT_EQ(p->exchange(probe, a), Error::link_down);
  EXPECT_EQ(p->exchange(probe, a), Error::link_down);
}

// A member killed before it calls (its channel's only task): copdrv sees its socket
// close and tells copd (task_end); the root's barrier over that channel, begun after,
// ends with task_ended once the channel has stayed without a task for copd's lease,
// not at the root's own timeout (it would be timeout) or never.
TEST_P(Modes, AMemberThatDiesBeforeItCallsEndsTheRootsWaitWithTaskEnded) {
  Stack s(2, 8, {"--verbose"});
  auto root = open(s, 1, GetParam());
  auto member = open(s, 2, GetParam(), 0x40003);
  ASSERT_TRUE(root && member);
  std::vector<Answer> a;
  std::vector<Message> probe = {cmd(Opcode::PROBE, *member)};
  ASSERT_EQ(member->exchange(probe, a), Error::none);  // as cop_mytid does
  member.reset();  // killed: its connection to copdrv closes
  ASSERT_TRUE(wait_until([&] { return s.count_in_copd_log("ended") >= 1; }, std::chrono::seconds(10)))
      << "copd never heard that the member ended:\n"
      << s.copd_log();
  cop::driver::LinkOptions o;
  o.wait_timeout_ms = 8000;  // the root's CopTimeout: reached, the answer would be timeout
  root->set_link_options(o);
  auto waited = std::async(std::launch::async, [&] { return barrier(*root, 80, bit(1) | bit(2)); });
  if (waited.wait_for(std::chrono::seconds(20)) != std::future_status::ready) s.kill_copd();
  EXPECT_EQ(waited.get(), Error::task_ended);
}

// Nodes 1-3 wait in a barrier over all 4 channels; `kill` ends a piece of
// the stack; every waiting task must get link_down.
void waiting_tasks_get_link_down(Stack& s, bool direct, uint32_t tag, const std::function<void(Port&)>& kill) {
  const uint64_t mask = bit(1) | bit(2) | bit(3) | bit(4);
  std::vector<std::unique_ptr<Port>> ports;
  for (int k = 1; k <= 4; ++k) {
    ports.push_back(open(s, k, direct));
    ASSERT_TRUE(ports.back());
  }
  auto observer = open(s, 4, direct, 0x40005);  // another task of node 4: see below
  ASSERT_TRUE(observer);
  std::vector<Error> results(3, Error::none);
  std::vector<std::thread> waiting;
  for (int k = 0; k < 3; ++k) waiting.emplace_back([&, k] { results[size_t(k)] = barrier(*ports[size_t(k)], tag, mask); });
  // Nodes 1-3 are in the barrier once the terminal-count entry waits for
  // channel 4 alone: its live mask, read with RSRAM64 M by another task of
  // node 4 (node 4's own task must find its driver gone at its next command).
  uint64_t pending = 0;
  EXPECT_TRUE(wait_until(
      [&] {
        Message read = cmd(Opcode::RSRAM64, *observer, Space::GAS, tag);
        read.ins.m = true;
        std::vector<Message> f = {read};
        std::vector<Answer> a;
        pending = observer->exchange(f, a) == Error::none && a[0].has_data ? a[0].data.data64() : 0;
        return pending == bit(4);
      },
      std::chrono::seconds(10)))
      << "nodes 1-3 not all in the barrier after 10 s: pending mask " << pending;
  kill(*ports[3]);
  // Every waiter returns (copd's lease or the driver's silence limit ends the wait; a
  // hang is caught by the test's CTest TIMEOUT), and each with link_down.
  for (auto& t : waiting) t.join();
  for (Error e : results) EXPECT_EQ(e, Error::link_down);
}

TEST_P(Modes, KilledDriverGivesEveryWaitingTaskAnError) {
  Stack s(4);
  waiting_tasks_get_link_down(s, GetParam(), 7, [&](Port& node4) {
    s.kill_driver(4);
    // Node 4's own task sees its driver gone.
    EXPECT_EQ(barrier(node4, 7, bit(1) | bit(2) | bit(3) | bit(4)), Error::link_down);
  });
  EXPECT_TRUE(s.wait_for_copd_log("channel 4 down")) << s.copd_log();
}

TEST_P(Modes, KilledCopdGivesEveryWaitingTaskAnError) {
  Stack s(4);
  waiting_tasks_get_link_down(s, GetParam(), 9, [&](Port&) { s.kill_copd(); });
}

// A barrier voided by a task that ended before its channel contributed: copd sends
// NACK task_ended for the tag to every channel of the mask, and a channel whose tasks
// have gone keeps it filed. The next tasks there (the next run) must not take it for
// their own barrier on the same tag (it would fail at once): a fresh task starts with
// nothing its predecessors left (seed 000 ch. V), and their barrier completes.
TEST_P(Modes, NextTasksDoNotTakeTheNackOfABarrierVoidedBefore) {
  Stack s(2);
  const uint32_t tag = 11;
  const uint64_t mask = bit(1) | bit(2);
  {
    auto first = open(s, 1, GetParam());
    ASSERT_TRUE(first);
    std::vector<Answer> answers;
    auto frame = barrier_frame(*first, tag, mask);
    ASSERT_EQ(first->exchange(frame, answers), Error::none);
    ASSERT_EQ(answers[3].error, Error::none);  // BENTRY taken: channel 1 is in the barrier
    open(s, 2, GetParam(), 0x40007).reset();   // channel 2's task ends before its BENTRY
    // The barrier is void: channel 1 hears it (copd sent the NACKs to both channels).
    Message exit;
    EXPECT_EQ(first->await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr),
              Error::task_ended);
  }
  auto one = open(s, 1, GetParam(), 0x40003);
  auto two = open(s, 2, GetParam(), 0x40005);
  ASSERT_TRUE(one && two);
  auto at_one = std::async(std::launch::async, [&] { return barrier(*one, tag, mask); });
  auto at_two = std::async(std::launch::async, [&] { return barrier(*two, tag, mask); });
  // Bounded: a barrier that waited on ends with copd killed after 20 s (link_down).
  const auto by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  if (at_one.wait_until(by) != std::future_status::ready || at_two.wait_until(by) != std::future_status::ready)
    s.kill_copd();
  EXPECT_EQ(at_one.get(), Error::none);
  EXPECT_EQ(at_two.get(), Error::none);
}

TEST(Link, NoAnswerEndsInRetryLimitNotAHang) {
  // A controller that never answers: a bound UDP socket nobody reads.
  cop::link::UdpSocket silent(cop::link::parse_endpoint("127.0.0.1:0", 0));
  cop::link::UdpSocket node(cop::link::parse_endpoint("127.0.0.1:0", 0));
  node.connect(silent.local());
  auto window = std::make_unique<cop::driver::Window>();
  cop::driver::init_window(window.get(), ::getpid(), 1);
  window->last_heard_ns.store(cop::driver::monotonic_ns());
  cop::driver::LinkOptions o;
  o.ack_timeout_ms = 20;
  o.retry_limit = 3;
  o.dead_ms = 60000;
  cop::driver::ChannelClient client(window.get(), node.fd(), 1, cop::link::Key{}, cop::link::Key{}, o);
  std::vector<Answer> a;
  std::vector<Message> probe = {cop::wire::make(Opcode::PROBE, 1)};
  EXPECT_EQ(client.exchange(probe, a), Error::retry_limit);
  EXPECT_EQ(window->resends.load(), 3u);
}

// Files a barrier exit of `tag` in partition `ppn` (identity `op_id`) out of context.
void file_exit(cop::driver::Window& w, uint8_t ppn, uint32_t tag, uint64_t op_id = 0) {
  Message exit = cop::wire::make(Opcode::BENTRY, 0, cop::wire::Space::GAS, tag);
  exit.ins.ppn = ppn;
  const cop::link::Entry e = cop::link::make_entry(exit, cop::wire::Direction::to_node, cop::link::EntryKind::broadcast);
  cop::driver::OutOfContext& o = w.ooc[w.ooc_high++];
  o.used = 1;
  o.kind = static_cast<uint8_t>(e.kind);
  o.nwords = e.nwords;
  o.op_id = op_id;
  std::copy(e.words.begin(), e.words.end(), o.words);
  w.ooc_count++;
}

// Two jobs' tasks on one node share the channel and its out-of-context buffer, and may run
// the same tags (issue 34). A job that forgets the results of its words before its own
// barrier or reduction (forget_results) must leave the other job's result there: its task
// still waits for it (before, it timed out, difftest class jobs on one level).
TEST(OutOfContext, ForgettingAJobsWordsLeavesAnotherJobsResult) {
  auto window = std::make_unique<cop::driver::Window>();
  cop::driver::init_window(window.get(), ::getpid(), 1);
  file_exit(*window, 0, 5);
  file_exit(*window, 1, 5);
  cop::driver::forget_results(*window, 0, 5, 1, false);
  ASSERT_EQ(window->ooc_count, 1u);
  EXPECT_EQ(window->ooc[0].used, 0);
  EXPECT_EQ(window->ooc[1].used, 1);  // job 1's barrier exit, still for its task
  cop::driver::forget_results(*window, 1, 5, 1, false);
  EXPECT_EQ(window->ooc_count, 0u);
}

// The same for an operation consumed whole (forget_operation): another job's operation of
// the same identity (a 16-bit site hash may agree) is not dropped, and the ring of forgotten
// operations names the partition (what comes later of the other job's is still filed).
TEST(OutOfContext, ForgettingAnOperationLeavesAnotherJobsOfTheSameIdentity) {
  auto window = std::make_unique<cop::driver::Window>();
  cop::driver::init_window(window.get(), ::getpid(), 1);
  const uint64_t id = cop::wire::make_identity(7, 0x12345678);
  file_exit(*window, 0, 5, id);
  file_exit(*window, 1, 5, id);
  cop::driver::forget_operation(*window, 0, id);
  ASSERT_EQ(window->ooc_count, 1u);
  EXPECT_EQ(window->ooc[1].used, 1);
  EXPECT_EQ(window->forgotten_ppn[0], 0);
  EXPECT_EQ(window->forgotten_ops[0], id);
}

}  // namespace
