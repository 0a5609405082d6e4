// cop_libcop_check's scenarios besides the checks: rounds of collectives, one tag
// used again and again, copd killed inside a barrier, tasks killed inside the host area.
#include <algorithm>
#include <initializer_list>

#include "libcop_check.h"

namespace libcop_check {

// R rounds of barrier, reduce (root and values change each round) and broadcast
// (the source changes each round), each checked against a local computation.
void run_collectives(Checker& c, int rounds) {
  constexpr int kCount = 4, kBcast = 16;
  for (int r = 0; r < rounds; ++r) {
    c.rc(cop_barrier(kGroup, g_size, 20), 0, "cop_barrier round " + std::to_string(r));
    const int rtag = 2000 + 8 * (r % 4), btag = 3000 + 32 * (r % 4), root = r % g_size, src = (r + 1) % g_size;
    long data[kCount];
    for (int i = 0; i < kCount; ++i) data[i] = long(value(g_inst, i) + r);
    int roots[1] = {root};
    c.rc(cop_reduce(COP_SUM, data, PVM_LONG, kCount, rtag, kGroup, roots, 1), 0, "cop_reduce round " + std::to_string(r));
    if (g_inst == root) {
      bool ok = true;
      for (int i = 0; i < kCount; ++i) {
        long want = 0;
        for (int k = 0; k < g_size; ++k) want += long(value(k, i) + r);
        ok &= data[i] == want;
      }
      c.expect(ok, "cop_reduce sum round " + std::to_string(r));
    }
    double buf[kBcast];
    if (g_inst == src) {
      for (int i = 0; i < kBcast; ++i) buf[i] = src * 1000.0 + r + i;
      c.rc(cop_bcast(buf, kBcast, PVM_DOUBLE, kGroup, btag, COP_SEND, -1), 0, "cop_bcast send round " + std::to_string(r));
    } else {
      c.rc(cop_bcast(buf, kBcast, PVM_DOUBLE, kGroup, btag, COP_RECV, g_tids[size_t(src)]), 0,
           "cop_bcast recv round " + std::to_string(r));
      bool ok = true;
      for (int i = 0; i < kBcast; ++i) ok &= buf[i] == src * 1000.0 + r + i;
      c.expect(ok, "cop_bcast data round " + std::to_string(r));
    }
  }
  if (rounds > 0) c.rc(cop_barrier(kGroup, g_size, 21), 0, "cop_barrier after the rounds");
}

// One tag used again and again with no barrier between: every iteration's answer is
// checked against a local computation (ch. V: the controller keeps successive
// operations on one GAS word in order).
void run_loops(Checker& c, int iters) {
  const int me = pvm_mytid();
  // Barrier loop: after barrier r everyone has written r, and nobody can have written
  // r + 2 (that needs barrier r + 1, which this task has not entered).
  for (long long r = 1; r <= iters; ++r) {
    c.rc(cop_write(&r, 1, PVM_LONG, me, 5, COP_NORMAL), 0, "cop_write round");
    c.rc(cop_barrier(kGroup, g_size, 50), 0, "cop_barrier loop, same tag");
    for (int k = 0; k < g_size; ++k) {
      long long seen = 0;
      c.rc(cop_read(&seen, 1, PVM_LONG, g_tids[size_t(k)], 5, COP_NORMAL), 0, "cop_read round");
      c.expect(seen == r || seen == r + 1, "barrier loop iteration " + std::to_string(r) + ": task " +
                                               std::to_string(k) + " has written round " + std::to_string(seen));
    }
  }
  c.rc(cop_barrier(kGroup, g_size, 51), 0, "cop_barrier after the barrier loop");
  // Reduce loop: 4 words on tag 52, two roots, new values each iteration.
  int roots[2] = {0, g_size - 1};
  for (int r = 0; r < iters; ++r) {
    long data[4];
    for (int i = 0; i < 4; ++i) data[i] = long(value(g_inst, i) + 13 * r);
    c.rc(cop_reduce(COP_SUM, data, PVM_LONG, 4, 52, kGroup, roots, 2), 0, "cop_reduce loop, same tag");
    if (g_inst != 0 && g_inst != g_size - 1) continue;
    for (int i = 0; i < 4; ++i) {
      long want = 0;
      for (int k = 0; k < g_size; ++k) want += long(value(k, i) + 13 * r);
      if (data[i] != want) {
        c.expect(false, "reduce loop iteration " + std::to_string(r) + " element " + std::to_string(i) + ": got " +
                            std::to_string(data[i]) + " want " + std::to_string(want));
        break;
      }
    }
  }
  c.rc(cop_barrier(kGroup, g_size, 60), 0, "cop_barrier after the reduce loop");
  // Broadcast loop: 8 doubles on tag 70 from instance 1, new values each iteration.
  const int src = 1 % g_size;
  for (int r = 0; r < iters; ++r) {
    double buf[8];
    if (g_inst == src) {
      for (int i = 0; i < 8; ++i) buf[i] = r * 100.0 + i + 0.5;
      c.rc(cop_bcast(buf, 8, PVM_DOUBLE, kGroup, 70, COP_SEND, -1), 0, "cop_bcast loop send");
      continue;
    }
    c.rc(cop_bcast(buf, 8, PVM_DOUBLE, kGroup, 70, COP_RECV, g_tids[size_t(src)]), 0, "cop_bcast loop recv");
    bool ok = true;
    for (int i = 0; i < 8; ++i) ok &= buf[i] == r * 100.0 + i + 0.5;
    c.expect(ok, "bcast loop iteration " + std::to_string(r) + " data");
  }
  c.rc(cop_barrier(kGroup, g_size, 61), 0, "cop_barrier after the bcast loop");
}

// ---- tasks killed inside the host area (scenario killrecv) ----
// Each part kills -9 a task of node 2 while it waits inside a collective (its wait is
// seen in /proc), then checks that the others of its node, and a new task there on the
// same group and tag, complete or get a clear error within a bounded time, instead of
// waiting for ever on the slot the killed task left (seed 000 ch. V, the host's partial
// operations in shared memory).
//   part 1: the receiver fetching a broadcast for its host is killed; a new receiver on
//           its node and tag gets the data;
//   part 2: the same with a second receiver already waiting on the slot: it fetches in
//           the killed one's place (the data, or CopErrTimeout: it and the sender saw
//           the group before and after the kill);
//   part 3: the last task to enter a barrier (doing the channel part for its host) is
//           killed; its waiting partner gets CopErrPartnerDied.
constexpr int kKillCount = 8;

// role: sender (cop_bcast SEND on "go"), receiver (cop_bcast RECV from srctid on
// "enter"), barrier (cop_barrier of 3 on "enter"), idle (waits for "go"); each reports
// its return code and whether the data was right.
int kill_child(const std::string& role, char* group, int tag, int srctid) {
  int rc = cop_mytid(), ok = 1;
  if (rc > 0) {
    pvm_joingroup(group);
    pvm_initsend(PvmDataDefault);
    int pid = getpid();
    pvm_pkint(&pid, 1, 1);
    pvm_send(pvm_parent(), kHelloTag);
    double buf[kKillCount] = {};
    if (role == "sender" || role == "idle") {
      pvm_recv(pvm_parent(), kGoTag);
      for (int i = 0; i < kKillCount; ++i) buf[i] = 1000.0 + tag + i;
      rc = role == "idle" ? 0 : cop_bcast(buf, kKillCount, PVM_DOUBLE, group, tag, COP_SEND, -1);
    } else {
      pvm_recv(pvm_parent(), kEnterTag);
      if (role == "barrier") {
        rc = cop_barrier(group, 3, tag);
      } else {
        rc = cop_bcast(buf, kKillCount, PVM_DOUBLE, group, tag, COP_RECV, srctid);
        for (int i = 0; i < kKillCount && rc == 0; ++i) ok &= buf[i] == 1000.0 + tag + i;  // data of a success
      }
    }
    pvm_lvgroup(group);
  }
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&rc, 1, 1);
  pvm_pkint(&ok, 1, 1);
  return cop::testing::send_to_parent_and_exit(kReportTag);
}

// What the kernel has a task of node 2 asleep in: "skb" (a UDP receive: the channel,
// read by the one local task waiting on it) or "futex" (the host area, or the channel
// read by another task); libpvm sleeps in select.
std::string wchan(int pid) {
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/wchan").c_str(), "r");
  if (!f) return "";
  char w[128] = {};
  const size_t n = std::fread(w, 1, sizeof w - 1, f);
  std::fclose(f);
  return std::string(w, n);
}

// Waits (at most `seconds`) until process `pid` sleeps in one of `where` (wchan()).
bool wait_asleep_in(int pid, std::initializer_list<const char*> where, int seconds) {
  return cop::testing::wait_until(
      [&] {
        const std::string w = wchan(pid);
        for (const char* what : where)
          if (w.find(what) != std::string::npos) return true;
        return false;
      },
      std::chrono::seconds(seconds), std::chrono::milliseconds(2));
}

struct KillParent {
  std::string access, stack;
  std::string failures;
  std::vector<int> spawned;

  int spawn(int node, const char* role, const char* group, int tag, int srctid) {
    const std::string nd = std::to_string(node), tg = std::to_string(tag), src = std::to_string(srctid);
    char* args[] = {const_cast<char*>(nd.c_str()), const_cast<char*>(access.c_str()), const_cast<char*>(stack.c_str()),
                    const_cast<char*>("2"), const_cast<char*>("1"), const_cast<char*>("killrecv"),
                    const_cast<char*>(role), const_cast<char*>(group), const_cast<char*>(tg.c_str()),
                    const_cast<char*>(src.c_str()), nullptr};
    int tid = 0;
    if (pvm_spawn(const_cast<char*>("cop_libcop_check"), args, PvmTaskDefault, const_cast<char*>(""), 1, &tid) != 1)
      return -1;
    spawned.push_back(tid);
    return tid;
  }
  // Tasks of a part that failed half way may still wait: none outlives the check.
  ~KillParent() {
    for (int tid : spawned)
      if (pvm_pstat(tid) == PvmOk) pvm_kill(tid);
  }
  int hello(int tid) {
    timeval t{30, 0};
    int pid = -1;
    if (tid > 0 && pvm_trecv(tid, kHelloTag, &t) > 0) pvm_upkint(&pid, 1, 1);
    return pid;
  }
  void tell(int tid, int tag) {
    pvm_initsend(PvmDataDefault);
    pvm_send(tid, tag);
  }
  // Bounded condition waits (20 s): the task asleep in `what`; the group's size.
  bool wait_in(int pid, const char* what) { return wait_asleep_in(pid, {what}, 20); }
  bool wait_size(char* group, int size) {
    return cop::testing::wait_until([&] { return pvm_gsize(group) == size; }, std::chrono::seconds(20),
                                    std::chrono::milliseconds(5));
  }
  // The report of `tid`: its return code must be `want` (and its data right).
  void expect(int tid, int want, const std::string& what) { expect_one_of(tid, {want}, what); }
  // The report of `tid` is one of `wants` (a race decides which clear error comes first).
  void expect_one_of(int tid, std::initializer_list<int> wants, const std::string& what) {
    timeval t{40, 0};  // above the task's own bound (CopTimeout, 10 s)
    int rc = 1, ok = 0;
    if (pvm_trecv(tid, kReportTag, &t) <= 0) {
      failures += "  FAIL " + what + ": no report within 40 s (waits for ever)\n";
      return;
    }
    pvm_upkint(&rc, 1, 1);
    pvm_upkint(&ok, 1, 1);
    std::printf("%s: returned %d (%s)%s\n", what.c_str(), rc, cop_strerror(rc), ok ? "" : ", wrong data");
    if (std::find(wants.begin(), wants.end(), rc) == wants.end() || !ok)
      failures += "  FAIL " + what + ": returned " + std::to_string(rc) + (ok ? "" : " with wrong data") +
                  ", expected " + std::to_string(*wants.begin()) + (wants.size() > 1 ? " or another of its set" : "") + "\n";
  }
  bool step(bool done, const std::string& why) {
    if (!done) failures += "  FAIL " + why + "\n";
    return done;
  }

  // Lets `tid` (process `pid`) enter its collective and waits until it sleeps in `where`.
  bool enter(int tid, int pid, const char* where, const std::string& why) {
    tell(tid, kEnterTag);
    return step(wait_in(pid, where), why);
  }

  // One task on node 1 and two on node 2, all of group `g` and started.
  struct Trio {
    int first = 0, a = 0, b = 0;
    int first_pid = -1, a_pid = -1, b_pid = -1;
  };
  bool start_trio(const std::string& part, char* g, int tag, const char* first_role, const char* node2_role,
                  bool node2_receive_from_first, Trio& t) {
    t.first = spawn(1, first_role, g, tag, 0);
    const int src = node2_receive_from_first ? t.first : 0;
    t.a = spawn(2, node2_role, g, tag, src);
    t.b = spawn(2, node2_role, g, tag, src);
    t.first_pid = hello(t.first);
    t.a_pid = hello(t.a);
    t.b_pid = hello(t.b);
    return step(t.first_pid > 0 && t.a_pid > 0 && t.b_pid > 0 && wait_size(g, 3), part + ": the tasks did not start");
  }

  void part1() {
    char g[] = "copkill1";
    const int s = spawn(1, "sender", g, 500, 0);
    if (!step(hello(s) > 0, "part 1: the sender did not start")) return;
    const int a = spawn(2, "receiver", g, 500, s);
    const int a_pid = hello(a);
    if (!step(a_pid > 0, "part 1: the receiver did not start")) return;
    if (!enter(a, a_pid, "skb", "part 1: the receiver never waited on its channel")) return;
    ::kill(a_pid, SIGKILL);
    if (!step(wait_size(g, 1), "part 1: the killed receiver stayed in the group")) return;
    const int c = spawn(2, "receiver", g, 500, s);
    const int c_pid = hello(c);
    if (!step(c_pid > 0, "part 1: the new receiver did not start")) return;
    // Only once it waits on its channel has it looked the sender up: a sender that had
    // sent and left already would be no task (PvmNoTask) to it.
    if (!enter(c, c_pid, "skb", "part 1: the new receiver never waited on its channel")) return;
    tell(s, kGoTag);
    expect(s, 0, "part 1: cop_bcast send");
    expect(c, 0, "part 1: a new receiver on the killed receiver's node and tag");
  }

  void part2() {
    char g[] = "copkill2";
    Trio t;
    if (!start_trio("part 2", g, 600, "sender", "receiver", true, t)) return;
    if (!enter(t.a, t.a_pid, "skb", "part 2: the first receiver never waited on its channel")) return;
    if (!enter(t.b, t.b_pid, "futex", "part 2: the second receiver never waited in the host area")) return;
    ::kill(t.a_pid, SIGKILL);
    if (!step(wait_size(g, 2), "part 2: the killed receiver stayed in the group")) return;
    tell(t.first, kGoTag);
    expect(t.first, 0, "part 2: cop_bcast send");
    // The receiver called while the killed one was a member, the sender after: they see
    // two views of the group, whose broadcasts' identities differ (cop.h "Operation
    // identity": a view's generations start at 0, so naming the view is what keeps an
    // earlier view's round from passing for a later one's). It fetches in the killed
    // one's place and gets the data or, views apart, a bounded CopErrTimeout.
    expect_one_of(t.b, {0, CopErrTimeout}, "part 2: the receiver that waited beside the killed one");
  }

  void part3() {
    char g[] = "copkill3";
    Trio t;
    if (!start_trio("part 3", g, 700, "idle", "barrier", false, t)) return;
    if (!enter(t.a, t.a_pid, "futex", "part 3: the first task never waited in the host area")) return;
    if (!enter(t.b, t.b_pid, "skb", "part 3: the last task never waited on its channel")) return;
    ::kill(t.b_pid, SIGKILL);
    expect(t.a, CopErrPartnerDied, "part 3: the barrier partner of the killed task");
    tell(t.first, kGoTag);
    expect(t.first, 0, "part 3: the member that never entered");
  }

  // Issue 34 (liveness): a member killed before it enters a barrier while its node
  // partner waits in the host area for it. The partner finds it gone from the driver's
  // task table (CopErrTaskEnded) and has the controller void the barrier, so the member
  // on node 1, waiting on its channel, gets CopErrVoided (or CopErrTaskEnded, when copd
  // hears of the task's end first) at once. Before: both waited for
  // their CopTimeout (CopErrTimeout after 10 s).
  void part4() {
    char g[] = "copkill4";
    Trio t;
    if (!start_trio("part 4", g, 800, "barrier", "barrier", false, t)) return;
    if (!enter(t.first, t.first_pid, "skb", "part 4: the member of node 1 never waited on its channel")) return;
    if (!enter(t.a, t.a_pid, "futex", "part 4: the task of node 2 never waited in the host area")) return;
    ::kill(t.b_pid, SIGKILL);
    expect(t.a, CopErrTaskEnded, "part 4: the node partner of a member killed before it entered");
    // Which comes first is a race: the controller's task_ended for the killed task (its
    // driver told copd) or the partner's VOID; both are the operation's clear end.
    expect_one_of(t.first, {CopErrVoided, CopErrTaskEnded}, "part 4: the member on another node");
  }
};

int kill_parent(const std::string& access, const std::string& stack) {
  bool failed = false;
  {
    KillParent k{access, stack, "", {}};
    k.part1();
    k.part2();
    k.part3();
    k.part4();
    std::fputs(k.failures.c_str(), stdout);
    failed = !k.failures.empty();
  }
  std::printf("%s: tasks killed -9 inside cop_bcast and cop_barrier, their partners and successors\n",
              failed ? "FAILED" : "passed");
  pvm_exit();
  return failed ? 1 : 0;
}

// ---- copd killed inside a barrier (scenario kill) ----
// The harness kills copd while the tasks of nodes 1..N-1 wait in a barrier that the
// last node never enters: each must get CopErrLinkDown (an error, not a hang), and the
// CopChannelDown notification it asked for. Each tells the parent its pid just before
// the barrier; the parent says on stdout when all of them sleep inside it
// (kCopdMayBeKilled), and the harness kills copd on that line.

void run_copd_killed(Checker& c, int tid, int node, int nodes) {
  if (node == nodes) return;
  // cop_notify(CopChannelDown): the failure must also arrive as a PVM message.
  constexpr int kDownTag = 77;
  c.rc(cop_notify(CopChannelDown, kDownTag, 0, nullptr), 0, "cop_notify(CopChannelDown)");
  c.rc(pvm_nrecv(-1, kDownTag), 0, "no channel-down message before the failure");
  pvm_initsend(PvmDataDefault);
  int pid = getpid();
  pvm_pkint(&pid, 1, 1);
  pvm_send(pvm_parent(), kHelloTag);
  c.rc(cop_barrier(kGroup, g_size, 30), CopErrLinkDown, "cop_barrier while copd is killed");
  timeval within{5, 0};
  const int got = pvm_trecv(-1, kDownTag, &within);
  int code = 0, src = 0, bytes = 0, tag = 0;
  if (got > 0) {
    pvm_bufinfo(got, &bytes, &tag, &src);
    pvm_upkint(&code, 1, 1);
  }
  c.expect(got > 0 && src == tid && code == CopErrLinkDown,
           "cop_notify: the task got a CopChannelDown message carrying CopErrLinkDown (buf " + std::to_string(got) +
               ", code " + std::to_string(code) + ")");
  c.rc(pvm_nrecv(-1, kDownTag), 0, "only one channel-down message");
}

// The parent's part: the `waiting` tasks' pids, then each asleep in the barrier (on its
// channel, "skb" with direct access, or in the host area, "futex"); false with a message
// on stderr when that does not happen within the bounds.
bool announce_barrier_entered(int waiting) {
  std::vector<int> pids;
  for (int i = 0; i < waiting; ++i) {
    timeval t{60, 0};
    int pid = -1;
    if (pvm_trecv(-1, kHelloTag, &t) <= 0) {
      std::fprintf(stderr, "scenario kill: %d of %d tasks did not reach cop_barrier within 60 s\n", waiting - i,
                   waiting);
      return false;
    }
    pvm_upkint(&pid, 1, 1);
    pids.push_back(pid);
  }
  for (int pid : pids)
    if (!wait_asleep_in(pid, {"skb", "futex"}, 20)) {
      std::fprintf(stderr, "scenario kill: task pid %d never waited inside cop_barrier (wchan %s)\n", pid,
                   wchan(pid).c_str());
      return false;
    }
  std::printf("%s: %d tasks wait in cop_barrier\n", kCopdMayBeKilled, waiting);
  std::fflush(stdout);
  return true;
}

}  // namespace libcop_check
