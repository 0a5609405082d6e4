// Jobs isolated (issue 25, item 4; seed 000 ch. V, partitions): copd + copdrv
// as real processes on loopback, tasks opened as libcop opens them (open_port)
// with their job ids. A task of another job, on the same channel, cannot set
// the masks of, contribute to, or receive the results of a job's operations,
// even on the same tags; copdrv admits only its job's user, and a job belongs
// to one user.
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <string>
#include <vector>

#include <cop/cop.h>

#include "driver/port.h"
#include "lib/commands.h"
#include "stack.h"

namespace {

using cop::driver::Answer;
using cop::driver::Port;
using cop::driver::ResultKind;
using cop::driver::Wanted;
using cop::testing::Stack;
using cop::wire::Error;
using cop::wire::Message;
using cop::wire::Opcode;

constexpr uint32_t kTag = 40;

uint64_t bit(int channel) { return uint64_t{1} << (channel - 1); }

std::unique_ptr<Port> open_job(const Stack& s, int node, const std::string& job) {
  auto r = cop::driver::open_port(s.driver_dir(node), true, 0x40001, -1, {}, job);
  EXPECT_EQ(r.status, 0) << r.error;
  return std::move(r.port);
}

cop::commands::Sender sender(const Port& p, int ppn = -1) {
  return {p.info().tkno, static_cast<uint8_t>(ppn < 0 ? p.info().ppn : ppn)};
}

// One command's answer (its ACK or NACK error).
Error one(Port& p, const Message& m) {
  std::vector<Answer> a;
  const std::vector<Message> frame{m};
  if (Error e = p.exchange(frame, a); e != Error::none) return e;
  return a.at(0).error;
}

// A task's reduction burst (SETTC tc, SETBM bm, SUMI64 value), sent without waiting.
Error send_reduction(Port& p, uint64_t value, uint64_t tc, uint64_t bm) {
  const uint64_t words[1] = {value};
  return p.send_only(cop::commands::reduction(sender(p), Opcode::SUMI64, kTag, words, tc, bm));
}

// Its answers (a peer's mask_in_use is the SPMD rule), then the result when `root`.
Error finish_reduction(Port& p, bool root, uint64_t* result) {
  std::vector<Answer> a;
  if (Error e = p.finish(a); e != Error::none) return e;
  for (const Answer& x : a)
    if (x.error != Error::none && x.error != Error::mask_in_use) return x.error;
  if (!root) return Error::none;
  Message m;
  if (Error e = p.await(Wanted{ResultKind::reduction, kTag, 1, 0}, std::span<Message>(&m, 1), nullptr); e != Error::none)
    return e;
  *result = cop::wire::payload(m);
  return Error::none;
}

TEST(JobsIsolated, ForeignTaskCannotSetMasksOrContributeInAJob) {
  Stack s(2, 4);
  auto a1 = open_job(s, 1, "job-a");
  auto a2 = open_job(s, 2, "job-a");
  auto x = open_job(s, 1, "job-x");  // same user, another job, on job a's channel 1
  ASSERT_TRUE(a1 && a2 && x);
  EXPECT_EQ(a1->info().ppn, a2->info().ppn) << "one job, one partition on every node";
  const int victim = a1->info().ppn;
  const uint64_t both = bit(1) | bit(2);
  // The intruder sets job a's terminal-count mask on its tag (both nodes, then one
  // node left out) and adds its own value: every command refused.
  EXPECT_EQ(one(*x, cop::commands::mask_command(sender(*x, victim), Opcode::SETTC, kTag, both)), Error::partition);
  EXPECT_EQ(one(*x, cop::commands::mask_command(sender(*x, victim), Opcode::SETTC, kTag, bit(1))), Error::partition);
  EXPECT_EQ(one(*x, cop::commands::mask_command(sender(*x, victim), Opcode::SETBM, kTag, bit(1))), Error::partition);
  Message add = cop::commands::command(sender(*x, victim), Opcode::SUMI64, cop::wire::Space::GAS, kTag);
  cop::wire::set_payload(add, 1000);
  EXPECT_EQ(one(*x, add), Error::partition);
  // Nor can it read or write job a's GAS word.
  Message peek = cop::commands::command(sender(*x, victim), Opcode::RSRAM64, cop::wire::Space::GAS, kTag);
  EXPECT_EQ(one(*x, peek), Error::partition);
  // Job a's reduction, root on node 1: exactly its two values, twice.
  for (uint64_t round = 1; round <= 2; ++round) {
    uint64_t sum = 0;
    ASSERT_EQ(send_reduction(*a2, 7 * round, both, bit(1)), Error::none);
    ASSERT_EQ(finish_reduction(*a2, false, nullptr), Error::none);
    ASSERT_EQ(send_reduction(*a1, 5 * round, both, bit(1)), Error::none);
    ASSERT_EQ(finish_reduction(*a1, true, &sum), Error::none);
    EXPECT_EQ(sum, 12 * round) << "round " << round;
  }
}

TEST(JobsIsolated, TwoJobsOnTheSameTagsAtOnceBothRight) {
  Stack s(2, 4);
  auto a1 = open_job(s, 1, "job-a"), a2 = open_job(s, 2, "job-a");
  auto b1 = open_job(s, 1, "job-b"), b2 = open_job(s, 2, "job-b");
  ASSERT_TRUE(a1 && a2 && b1 && b2);
  EXPECT_NE(a1->info().ppn, b1->info().ppn);
  const uint64_t both = bit(1) | bit(2);
  // Interleaved: each job's first contribution, then the other job's, on one tag.
  for (uint64_t round = 1; round <= 3; ++round) {
    ASSERT_EQ(send_reduction(*a1, 1 * round, both, bit(1)), Error::none);
    ASSERT_EQ(send_reduction(*b2, 100 * round, both, bit(1)), Error::none);
    ASSERT_EQ(send_reduction(*a2, 2 * round, both, bit(1)), Error::none);
    ASSERT_EQ(send_reduction(*b1, 200 * round, both, bit(1)), Error::none);
    uint64_t sa = 0, sb = 0;
    ASSERT_EQ(finish_reduction(*b2, false, nullptr), Error::none);
    ASSERT_EQ(finish_reduction(*a2, false, nullptr), Error::none);
    ASSERT_EQ(finish_reduction(*a1, true, &sa), Error::none);
    ASSERT_EQ(finish_reduction(*b1, true, &sb), Error::none);
    EXPECT_EQ(sa, 3 * round) << "job a, round " << round;
    EXPECT_EQ(sb, 300 * round) << "job b, round " << round;
  }
}

// Opens a port as user `uid` (a child process: setresuid), returns its status.
int open_as(uid_t uid, const std::string& dir, const std::string& job) {
  int fds[2];
  if (::pipe(fds) != 0) return 1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int status = 1;
    if (::setgroups(0, nullptr) == 0 && ::setresgid(uid, uid, uid) == 0 && ::setresuid(uid, uid, uid) == 0) {
      auto r = cop::driver::open_port(dir, true, 0x40002, -1, {}, job);
      status = r.status;
    }
    (void)!::write(fds[1], &status, sizeof status);
    ::_exit(0);
  }
  ::close(fds[1]);
  int status = 1;
  if (::read(fds[0], &status, sizeof status) != ssize_t(sizeof status)) status = 1;
  ::close(fds[0]);
  cop::testing::wait_exit(pid, 10000);
  return status;
}

TEST(JobsIsolated, TaskOfAnotherUserRefusedAtEnrolment) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: the test runs a task as other users (setresuid)";
  constexpr uid_t kJobUser = 65534, kOther = 65533;
  Stack s(1, 4);
  ASSERT_EQ(::chmod(s.dir().c_str(), 0711), 0);  // every user reaches the driver directories
  const std::string sock = s.driver_dir(1) + "/copdrv.sock";
  // A root-run copdrv serves root only: its socket is closed to other users...
  EXPECT_EQ(open_as(kOther, s.driver_dir(1), "job-o"), CopErrNotPermitted);
  // ...and opened wide by mistake, copdrv still refuses them (SO_PEERCRED).
  ASSERT_EQ(::chmod(sock.c_str(), 0666), 0);
  EXPECT_EQ(open_as(kOther, s.driver_dir(1), "job-o"), CopErrNotPermitted);
  // copdrv logs the refusal after answering it: wait for the line, not a first read.
  EXPECT_TRUE(s.wait_for_driver_log(1, "admits only uid")) << s.driver_log(1);
  // A root-run copdrv serving a job's user (--allow-uid): that user enrols, another does not.
  const std::string dir2 = s.dir() + "/node2";
  const pid_t drv2 = cop::testing::spawn({COPDRV_BIN, "--channel", "2", "--controller", s.endpoint(), "--local",
                                          "127.0.0.1", "--dir", dir2, "--key", s.key_file(), "--heartbeat-ms", "50", "--dead-ms", "1000",
                                          "--register-timeout-ms", "5000", "--allow-uid", std::to_string(kJobUser)},
                                         s.dir() + "/copdrv2.log");
  ASSERT_GT(drv2, 0);
  struct Stop {
    pid_t pid;
    ~Stop() {
      ::kill(pid, SIGTERM);
      if (cop::testing::wait_exit(pid, 3000) < 0) {
        ::kill(pid, SIGKILL);
        cop::testing::wait_exit(pid, 3000);
      }
    }
  } stop{drv2};
  ASSERT_TRUE(s.wait_for_driver(2));
  EXPECT_EQ(open_as(kJobUser, dir2, "job-n"), 0);
  EXPECT_EQ(open_as(kOther, dir2, "job-n"), CopErrNotPermitted);
  // A job is its first task's user's: root's job is not open to the job user's tasks.
  auto root_task = open_job(s, 1, "job-r");
  ASSERT_TRUE(root_task);
  EXPECT_EQ(open_as(kJobUser, dir2, "job-r"), CopErrNotPermitted);
}

// The lease tests' start: job-a's tasks on nodes 1 and 2, word 5 of the job's task
// address space written 77 by the first.
struct JobWithWord {
  std::unique_ptr<Port> a1, a2;
  uint32_t tas = 0;
};
JobWithWord job_with_word(const Stack& s) {
  JobWithWord j{open_job(s, 1, "job-a"), open_job(s, 2, "job-a")};
  if (!j.a1 || !j.a2) return j;
  j.tas = cop::wire::Address::tas_tag(uint32_t(j.a1->info().tkno), 5);
  Message w = cop::commands::command(sender(*j.a1), Opcode::WSRAM64, cop::wire::Space::TAS, j.tas);
  w.set_data64(77);
  EXPECT_EQ(one(*j.a1, w), Error::none);
  return j;
}

// Both nodes' drivers (and so their channels) silent from construction (SIGSTOP) until
// resume() or the end of the scope (SIGCONT).
class SilentNodes {
 public:
  explicit SilentNodes(const Stack& s) : s_(s) {
    for (int k = 1; k <= 2; ++k) EXPECT_EQ(::kill(s_.driver_pid(k), SIGSTOP), 0);
  }
  ~SilentNodes() { resume(); }
  SilentNodes(const SilentNodes&) = delete;
  SilentNodes& operator=(const SilentNodes&) = delete;
  void resume() {
    for (int k = 1; k <= 2; ++k) ::kill(s_.driver_pid(k), SIGCONT);
  }

 private:
  const Stack& s_;
};

// Every channel of a job past its lease at once (what copd stopped past its lease
// does, cop_fault_outage): the drivers register again and re-join their tasks,
// which find their task address spaces as they were. Before, the job's last
// task left with the last lease, the partition was freed and cleared, and the
// same PPN given again: a fetch-and-add's counter (a TAS word) was back at 0
// with success ("wrong 1 duplicated 8" in cop_fault_outage).
TEST(JobsIsolated, TaskAddressSpaceKeptWhenEveryLeaseRunsOut) {
  Stack s(2, 4);
  auto [a1, a2, tas] = job_with_word(s);
  ASSERT_TRUE(a1 && a2 && !HasFailure());
  // Both nodes silent (stopped) until copd has dropped both channels, then on again.
  SilentNodes silent(s);
  ASSERT_TRUE(s.wait_for_copd_log("down (no frame", 2)) << s.copd_log();
  ASSERT_EQ(s.count_in_copd_log("down (no frame"), 2u) << s.copd_log();
  silent.resume();
  // The task's commands fail (link down) until its driver has enrolled it again.
  const std::vector<Message> read{cop::commands::command(sender(*a1), Opcode::RSRAM64, cop::wire::Space::TAS, tas)};
  std::vector<Answer> a;
  Error e = Error::link_down;
  ASSERT_TRUE(cop::testing::wait_until([&] { return (e = a1->exchange(read, a)) == Error::none; }, std::chrono::seconds(20)))
      << cop::wire::error_name(e) << "\n" << s.copd_log();
  ASSERT_EQ(a.at(0).error, Error::none);
  ASSERT_TRUE(a[0].has_data);
  EXPECT_EQ(a[0].data.data64(), 77u) << "the task address space was cleared under the task";
  EXPECT_EQ(a1->info().ppn, a2->info().ppn);
}

// Issue 34 (cop.h "Epochs"): every channel of a job silent past its lease and then one
// more (a network partition of 2-3 s, longer than two leases): copd frees the job's
// partition (and clears it). When the nodes come back, copdrv re-joins the tasks naming
// the partition's epoch, which is gone: the tasks get epoch_lost on every command, never
// the cleared partition's words as their own (before: a fetch-and-add repeated its old
// values with success). A task that enrols again knowingly works in a new partition life.
TEST(JobsIsolated, TasksBackAfterTheirPartitionWasFreedGetEpochLost) {
  Stack s(2, 4);
  auto [a1, a2, tas] = job_with_word(s);
  ASSERT_TRUE(a1 && a2 && !HasFailure());
  SilentNodes silent(s);
  ASSERT_TRUE(s.wait_for_copd_log("its epoch ends")) << s.copd_log();
  silent.resume();
  const std::vector<Message> read{cop::commands::command(sender(*a1), Opcode::RSRAM64, cop::wire::Space::TAS, tas)};
  std::vector<Answer> a;
  Error e = Error::link_down;
  bool wrong = false;
  ASSERT_TRUE(cop::testing::wait_until(
      [&] {
        e = a1->exchange(read, a);
        wrong |= e == Error::none && a.at(0).error == Error::none;
        return e == Error::none && a.at(0).error == Error::epoch_lost;
      },
      std::chrono::seconds(15)))
      << cop::wire::error_name(e) << "\n" << s.copd_log();
  EXPECT_FALSE(wrong) << "a task whose partition was freed read it with success";
  EXPECT_TRUE(s.wait_for_copd_log("its partition is gone")) << s.copd_log();
  // The other node's task too, on its next command.
  const std::vector<Message> probe{cop::commands::command(sender(*a2), Opcode::PROBE)};
  ASSERT_TRUE(cop::testing::wait_until([&] { return a2->exchange(probe, a) == Error::none && a.at(0).error != Error::link_down; },
                                       std::chrono::seconds(10)));
  EXPECT_EQ(a.at(0).error, Error::epoch_lost);
  // Enrolled again knowingly: the job has a new partition life, whose words start clear.
  a1.reset();
  auto again = open_job(s, 1, "job-a");
  ASSERT_TRUE(again);
  const uint32_t tas2 = cop::wire::Address::tas_tag(uint32_t(again->info().tkno), 5);
  const std::vector<Message> read2{cop::commands::command(sender(*again), Opcode::RSRAM64, cop::wire::Space::TAS, tas2)};
  ASSERT_EQ(again->exchange(read2, a), Error::none);
  ASSERT_EQ(a.at(0).error, Error::none);
  EXPECT_EQ(a.at(0).data.data64(), 0u);
}

}  // namespace
