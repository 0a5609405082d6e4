// cop_libcop_check's scenarios of issue 25 (groups, tags and counts): two groups on the
// same tags at once, a broadcast loop without a barrier between rounds, participants
// that disagree on a count, and a sender that is not a member of the group. Every
// answer is checked against a local computation; a wrong value with rc 0 is a failure.
#include <sys/resource.h>

#include "libcop_check.h"

#ifndef CopErrNoWindow
#define CopErrNoWindow -136
#endif
#ifndef CopErrMismatch
#define CopErrMismatch -137
#endif
#ifndef CopGroupWindows
#define CopGroupWindows 5
#endif
#ifndef CopGroupCache
#define CopGroupCache 6
#endif

namespace libcop_check {
namespace {

// The tids of `group` (of `size` members) by instance number, once all have joined.
std::vector<int> join_and_wait(char* group, int size) {
  pvm_joingroup(group);
  pvm_barrier(group, size);
  std::vector<int> tids;
  for (int k = 0; k < size; ++k) tids.push_back(pvm_gettid(group, k));
  return tids;
}

}  // namespace

// Even and odd instances of the check's group form two groups (as the rows and columns
// of a 2-D code do) that use the same tag numbers at the same time: R rounds of barrier,
// reduction and broadcast, no barrier shared by the two groups between the rounds. In
// PVM the same tag in two groups is harmless; each group must get its own answers.
// At 4 nodes x 2 tasks both groups have a member on every channel; at 4 x 1 their
// channels are disjoint.
void run_two_groups(Checker& c, int rounds) {
  const int parity = g_inst % 2;
  char group[32];
  std::snprintf(group, sizeof group, "copcheck.%s", parity ? "odd" : "even");
  const int size = (g_size + (parity ? 0 : 1)) / 2;
  const std::vector<int> tids = join_and_wait(group, size);
  const int me = pvm_getinst(group, pvm_mytid());
  // Distinct values per group: a sum or broadcast from the other group shows at once.
  auto val = [&](int inst, int i, int r) { return long(value(inst, i) + 100000 * parity + 17 * r); };
  constexpr int kCount = 4;
  for (int r = 0; r < rounds; ++r) {
    const std::string round = " (" + std::string(group) + ", round " + std::to_string(r) + ")";
    c.rc(cop_barrier(group, size, 40), 0, "cop_barrier" + round);
    long data[kCount];
    for (int i = 0; i < kCount; ++i) data[i] = val(me, i, r);
    int root = r % size;
    c.rc(cop_reduce(COP_SUM, data, PVM_LONG, kCount, 41, group, &root, 1), 0, "cop_reduce" + round);
    if (me == root)
      for (int i = 0; i < kCount; ++i) {
        long want = 0;
        for (int k = 0; k < size; ++k) want += val(k, i, r);
        if (data[i] != want) {
          c.expect(false, "cop_reduce sum" + round + " element " + std::to_string(i) + ": got " +
                              std::to_string(data[i]) + " want " + std::to_string(want));
          break;
        }
      }
    const int src = (r + 1) % size;
    double buf[kCount];
    if (me == src) {
      for (int i = 0; i < kCount; ++i) buf[i] = 1000.0 * parity + r + 0.25 * i;
      c.rc(cop_bcast(buf, kCount, PVM_DOUBLE, group, 50, COP_SEND, -1), 0, "cop_bcast send" + round);
    } else if (size > 1) {
      c.rc(cop_bcast(buf, kCount, PVM_DOUBLE, group, 50, COP_RECV, tids[size_t(src)]), 0, "cop_bcast recv" + round);
      bool ok = true;
      for (int i = 0; i < kCount; ++i) ok &= buf[i] == 1000.0 * parity + r + 0.25 * i;
      c.expect(ok, "cop_bcast data" + round + ": got " + std::to_string(buf[0]));
    }
  }
  c.rc(cop_barrier(group, size, 40), 0, "cop_barrier after the rounds (" + std::string(group) + ")");
  pvm_barrier(group, size);
  pvm_lvgroup(group);
}

// One root broadcasts one double per round on one tag, R rounds back to back, to every
// other member naming it (no barrier between the rounds, as a pvm_bcast loop is written):
// every receiver gets every round, in order.
void run_bcast_loop(Checker& c, int rounds) {
  int bad = 0;
  for (int r = 0; r < rounds; ++r) {
    double v = 1000.0 + r;
    if (g_inst == 0) {
      const int rc = cop_bcast(&v, 1, PVM_DOUBLE, kGroup, 60, COP_SEND, -1);
      if (rc != 0 && bad++ == 0) c.rc(rc, 0, "cop_bcast loop send round " + std::to_string(r));
      continue;
    }
    v = -1;
    const int rc = cop_bcast(&v, 1, PVM_DOUBLE, kGroup, 60, COP_RECV, g_tids[0]);
    if (rc != 0) {
      c.rc(rc, 0, "cop_bcast loop recv round " + std::to_string(r));
      break;
    }
    if (v != 1000.0 + r) {
      c.expect(false, "cop_bcast loop round " + std::to_string(r) + " got " + std::to_string(long(v)) + " want " +
                          std::to_string(1000 + r));
      break;
    }
  }
  c.expect(bad == 0, "cop_bcast loop: every send returned 0");
  c.rc(cop_barrier(kGroup, g_size, 61), 0, "cop_barrier after the bcast loop");
}

// Participants that disagree on a count: every task gets CopErrMismatch, never a short
// or shifted result with rc 0; the same call with agreeing counts works afterwards.
void run_mismatch(Checker& c) {
  const int groot = 1 % g_size;
  int part[3] = {10 * g_inst, 10 * g_inst + 1, 10 * g_inst + 2};
  std::vector<int> all(size_t(3 * g_size), -1);
  const int gcount = g_inst == groot ? 3 : 2;
  c.rc(cop_gather(all.data(), part, gcount, PVM_INT, 100, kGroup, groot), CopErrMismatch,
       "cop_gather count " + std::to_string(gcount) + " (3 at the root, 2 elsewhere)");
  c.rc(cop_gather(all.data(), part, 3, PVM_INT, 100, kGroup, groot), 0, "cop_gather after the mismatch");
  if (g_inst == groot) {
    bool ok = true;
    for (int k = 0; k < g_size; ++k)
      for (int i = 0; i < 3; ++i) ok &= all[size_t(3 * k + i)] == 10 * k + i;
    c.expect(ok, "cop_gather data after the mismatch");
  }
  const int sroot = 2 % g_size;
  std::vector<int> src(size_t(3 * g_size));
  for (size_t i = 0; i < src.size(); ++i) src[i] = 700 + int(i);
  int got[3] = {-1, -1, -1};
  const int scount = g_inst == sroot ? 3 : 2;
  c.rc(cop_scatter(got, src.data(), scount, PVM_INT, 150, kGroup, sroot), CopErrMismatch,
       "cop_scatter count " + std::to_string(scount) + " (3 at the root, 2 elsewhere)");
  // A datatype the others do not name.
  long long lgot[2] = {-1, -1};
  std::vector<long long> lsrc(size_t(2 * g_size), 5);
  const int rc = g_inst == 0 ? cop_scatter(lgot, lsrc.data(), 2, PVM_LONG, 150, kGroup, sroot)
                             : cop_scatter(got, src.data(), 2, PVM_INT, 150, kGroup, sroot);
  c.rc(rc, CopErrMismatch, "cop_scatter with another datatype at instance 0");
  // A root the others do not name.
  c.rc(cop_gather(all.data(), part, 2, PVM_INT, 100, kGroup, g_inst == 0 ? 0 : groot), CopErrMismatch,
       "cop_gather with another root at instance 0");
  c.rc(cop_scatter(got, src.data(), 3, PVM_INT, 150, kGroup, sroot), 0, "cop_scatter after the mismatches");
  c.expect(got[0] == 700 + 3 * g_inst && got[2] == 702 + 3 * g_inst, "cop_scatter slice after the mismatches");
  c.rc(cop_barrier(kGroup, g_size, 62), 0, "cop_barrier after the mismatches");
}

// Group windows run out (cop.h "Tags"): instance 0 uses new one-member groups (named
// after this job) until a call gets CopErrNoWindow, which must come after at most
// CopGroupWindows-1 names; the groups named before keep working. A job run after this
// one on the same virtual machine finds the windows free again (libcop_test.sh runs the
// scenario twice). A task cutting the GAS into another count of
// windows than the virtual machine gets CopErrMismatch at its first group call.
void run_windows(Checker& c) {
  pvm_barrier(kGroup, g_size);
  if (g_inst == 0) {
    const int windows = cop_getopt(CopGroupWindows);
    c.rc(cop_setopt(CopGroupWindows, windows / 2), windows, "cop_setopt CopGroupWindows");
    char other[] = "copcheck.halfwindows";
    pvm_joingroup(other);
    c.rc(cop_barrier(other, 1, 0), CopErrMismatch, "a group call with another count of windows than the VM's");
    c.rc(cop_setopt(CopGroupWindows, windows), windows / 2, "cop_setopt CopGroupWindows back");
    c.rc(cop_setopt(CopGroupWindows, 3), PvmBadParam, "cop_setopt CopGroupWindows 3 (not a power of two)");
    int named = 0, rc = 0;
    for (; named < windows && rc == 0; ++named) {
      char g[48];
      std::snprintf(g, sizeof g, "copcheck.window%d.%x", named, unsigned(g_tids[0]));
      pvm_joingroup(g);
      rc = cop_barrier(g, 1, 7);
      pvm_lvgroup(g);
    }
    c.rc(rc, CopErrNoWindow, "a new group once every window is taken");
    // Windows 1 .. CopGroupWindows-1, of which this job's groups "copcheck" and
    // "copcheck.members" hold two: the others are free (an earlier job's are too).
    c.expect(named - 1 == windows - 3, "new groups got " + std::to_string(named - 1) + " windows, want " +
                                           std::to_string(windows - 3) + " (every window free but this job's two)");
    char first[48];
    std::snprintf(first, sizeof first, "copcheck.window0.%x", unsigned(g_tids[0]));
    pvm_joingroup(first);
    c.rc(cop_barrier(first, 1, 7), 0, "a group named before keeps its window");
    pvm_lvgroup(first);
    pvm_lvgroup(other);
  }
  pvm_barrier(kGroup, g_size);
  c.rc(cop_barrier(kGroup, g_size, 62), 0, "cop_barrier of the check's group after the windows ran out");
}

// A reduction whose root names more elements than the others (3 against 2), at a
// tag of its own: the root must not get rc 0 (its third element has no contribution
// from the others; its local partner's shorter array must not be folded into its own),
// whatever the others get; every call ends within the timeout. Then a reduction whose
// tasks disagree on the datatype. (Last in the scenario: the mismatched operations may
// hold their tags' entries until the tasks end.)
void run_reduce_mismatch(Checker& c) {
  const int old = cop_setopt(CopTimeout, 2000);
  long data[3] = {value(g_inst, 0), value(g_inst, 1), value(g_inst, 2)};
  int root = 0;
  const int n = g_inst == root ? 3 : 2;
  const int rc = cop_reduce(COP_SUM, data, PVM_LONG, n, 300, kGroup, &root, 1);
  if (g_inst == root) {
    bool right = rc == 0;
    for (int i = 0; i < 3 && right; ++i) {
      long want = 0;
      for (int k = 0; k < g_size; ++k) want += value(k, i);
      right = data[i] == want;
    }
    c.expect(rc < 0, "cop_reduce count 3 at the root, 2 elsewhere: the root returned " + std::to_string(rc) +
                         (rc == 0 ? (right ? " (a right sum?)" : " with a wrong sum") : ""));
  }
  // The tasks of node 1 sum doubles, the others longs (SUMF against SUMI64 in one
  // operation): the root gets CopErrMismatch (the controller's), never a mixed sum.
  // Every task starts it together: the reduction above ends at CopTimeout for some tasks
  // and at once for others, and a root whose local partner is still in that one would
  // wait for it in the host area until its own CopTimeout (a right error, not the one
  // this part checks; seen under load over two levels). A longer CopTimeout than above:
  // the root's answer comes over two levels, late on a loaded machine.
  pvm_barrier(kGroup, g_size);
  cop_setopt(CopTimeout, 5000);
  int chno = 0, tkno = 0;
  cop_channel(&chno, &tkno);
  double dv[2] = {1.0, 2.0};
  long lv[2] = {1, 2};
  const int trc = chno == 1 ? cop_reduce(COP_SUM, dv, PVM_DOUBLE, 2, 310, kGroup, &root, 1)
                            : cop_reduce(COP_SUM, lv, PVM_LONG, 2, 310, kGroup, &root, 1);
  if (g_inst == root) c.rc(trc, CopErrMismatch, "cop_reduce of doubles on node 1 and longs elsewhere, at the root");
  // A non-root's part may also end at CopTimeout (its local partner's wait in the host
  // area is bounded, and over two levels the operation's end can come after it): an
  // error, never a value.
  else c.expect(trc == 0 || trc == CopErrMismatch || trc == CopErrTimeout,
                "cop_reduce of doubles and longs: 0, CopErrMismatch or CopErrTimeout, got " + std::to_string(trc));
  cop_setopt(CopTimeout, old);
}

// A sender that is not a member of the group (the thesis allows it): every member gets
// its data, whether it names the sender or receives from any sender (-1).
void run_nonmember_sender(Checker& c) {
  char sub[] = "copcheck.members";
  const int sender = g_size - 1;
  std::vector<int> tids;
  if (g_inst != sender) tids = join_and_wait(sub, g_size - 1);
  pvm_barrier(kGroup, g_size);  // the subgroup is complete before the sender looks at it
  for (int r = 0; r < 3; ++r) {
    double buf[4];
    if (g_inst == sender) {
      for (int i = 0; i < 4; ++i) buf[i] = 300.0 + 10 * r + i;
      c.rc(cop_bcast(buf, 4, PVM_DOUBLE, sub, 63 + 4 * r, COP_SEND, -1), 0, "non-member cop_bcast send");
      continue;
    }
    const bool named = g_inst % 2 == 0;
    c.rc(cop_bcast(buf, 4, PVM_DOUBLE, sub, 63 + 4 * r, COP_RECV, named ? g_tids[size_t(sender)] : -1), 0,
         std::string("cop_bcast from a non-member, receiver ") + (named ? "naming it" : "with srctid -1"));
    bool ok = true;
    for (int i = 0; i < 4; ++i) ok &= buf[i] == 300.0 + 10 * r + i;
    c.expect(ok, "cop_bcast data from a non-member");
  }
  pvm_barrier(kGroup, g_size);
  if (g_inst != sender) pvm_lvgroup(sub);
}

// Issue 26: libcop's default keeps a group's view (CopGroupCache) and must still see every
// change. A subgroup changes between rounds as a program's groups do: a member joins, one
// leaves, one leaves while another joins (the same size, other members), one exits without
// leaving. Each change is followed by PVM's own barrier on the check's group (as a program
// tells its tasks of a change), then two rounds of cop_barrier (count -1), cop_reduce (a
// sum at instance 0, against the sum over the members this phase has) and cop_bcast (the
// member count and sum, checked by every member). A member missing from a view, or one too
// many, shows as a wrong sum or count, or as an error code. Returns true for the task that
// exits (its report goes first, then it ends without leaving the groups).
bool run_changes(Checker& c) {
  char sub[] = "copcheck.changes";
  const int n = g_size, last = n - 1, mover = 1, leaver = 2;
  c.rc(cop_getopt(CopGroupCache), 1, "CopGroupCache is on by default");
  c.rc(cop_getopt(CopStaticGroups), 0, "CopStaticGroups is off by default");
  // Errors end in bounded time: a stale view that waits for a member that left.
  cop_setopt(CopTimeout, 3000);
  auto sync = [&](int count) { pvm_barrier(kGroup, count); };
  std::vector<int> members;  // this phase's, by instance in the check's group
  auto in = [&](int inst) { return std::find(members.begin(), members.end(), inst) != members.end(); };
  auto play = [&](int phase, const std::string& what) {
    long want = 0;
    for (int k : members) want += 1000L * (phase + 1) + 7L * k + 3;
    for (int r = 0; r < 2; ++r) {
      const std::string round = " (" + what + ", round " + std::to_string(r) + ")";
      c.rc(cop_barrier(sub, -1, 10), 0, "cop_barrier" + round);
      long v = 1000L * (phase + 1) + 7L * g_inst + 3;
      int root = 0;  // instance 0 of the subgroup: the check's instance 0, which joins first and stays
      c.rc(cop_reduce(COP_SUM, &v, PVM_LONG, 1, 11, sub, &root, 1), 0, "cop_reduce" + round);
      if (g_inst == 0)
        c.expect(v == want, "cop_reduce sum" + round + ": got " + std::to_string(v) + " want " + std::to_string(want));
      long b[2] = {long(members.size()), want};
      if (g_inst == 0) {
        c.rc(cop_bcast(b, 2, PVM_LONG, sub, 12, COP_SEND, -1), 0, "cop_bcast send" + round);
      } else {
        b[0] = b[1] = -1;
        c.rc(cop_bcast(b, 2, PVM_LONG, sub, 12, COP_RECV, -1), 0, "cop_bcast recv" + round);
        c.expect(b[0] == long(members.size()) && b[1] == want,
                 "cop_bcast members and sum" + round + ": got " + std::to_string(b[0]) + ", " + std::to_string(b[1]) +
                     " want " + std::to_string(members.size()) + ", " + std::to_string(want));
      }
    }
  };
  // Every task finishes a phase's rounds before the next change (then `sync` again).
  auto rounds = [&](int phase, const std::string& what) {
    if (in(g_inst)) play(phase, what);
    sync(phase < 4 ? n : n - 1);
  };
  // Phase 0: every task but the last; instance 0 first, so it is the subgroup's instance 0.
  if (g_inst == 0) pvm_joingroup(sub);
  sync(n);
  if (g_inst != 0 && g_inst != last) pvm_joingroup(sub);
  sync(n);
  for (int k = 0; k < last; ++k) members.push_back(k);
  rounds(0, "the first members");
  // Phase 1: the last task joins.
  if (g_inst == last) pvm_joingroup(sub);
  sync(n);
  members.push_back(last);
  rounds(1, "after a join");
  // Phase 2: one leaves.
  if (g_inst == mover) c.expect(pvm_lvgroup(sub) >= 0, "pvm_lvgroup");
  sync(n);
  members.erase(std::find(members.begin(), members.end(), mover));
  rounds(2, "after a leave");
  // Phase 3: it joins again while another leaves: as many members as before, not the same.
  if (g_inst == mover) pvm_joingroup(sub);
  if (g_inst == leaver) c.expect(pvm_lvgroup(sub) >= 0, "pvm_lvgroup");
  sync(n);
  members.push_back(mover);
  members.erase(std::find(members.begin(), members.end(), leaver));
  std::sort(members.begin(), members.end());
  rounds(3, "after a leave and a join");
  // Phase 4: the last task exits without leaving. The others learn of it from PVM (their
  // own exit notify) and wait until the group server no longer counts it.
  int last_tid = g_tids[size_t(last)];
  constexpr int kExitTag = 4250;
  if (g_inst != last) pvm_notify(PvmTaskExit, kExitTag, 1, &last_tid);
  sync(n);
  if (g_inst == last) return true;
  timeval tmout{30, 0};
  c.expect(pvm_trecv(-1, kExitTag, &tmout) > 0, "the last task's exit notified within 30 s");
  members.pop_back();
  cop::testing::wait_until([&] { return pvm_gsize(sub) <= int(members.size()); }, std::chrono::seconds(30));
  c.rc(pvm_gsize(sub), int(members.size()), "the group server dropped the exited member");
  sync(n - 1);
  rounds(4, "after a member exited");
  if (in(g_inst)) pvm_lvgroup(sub);
  return false;
}

}  // namespace libcop_check

namespace libcop_check {

// Wall time and this task's CPU (user + system, getrusage), in microseconds: the cost scenarios' clocks.
static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static double cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return 1e6 * double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Not a test: the wall, CPU (this task's user + system, getrusage) and modelled time per
// call of cop_barrier, cop_reduce (one double, and one long), cop_gather and cop_scatter
// (one int a member), R calls each back to back, as instance 0 sees them (the cost of the
// argument checks, issue 25; of libcop's group lookup, issue 26).
void run_costs(Checker& c, int rounds) {
  auto cycles = [] {
    unsigned long long v = 0;
    cop_modelled_cycles(&v);
    return double(v);
  };
  std::string line;
  auto timed = [&](const char* name, const std::function<int()>& call) {
    c.rc(cop_barrier(kGroup, g_size, 90), 0, "cop_barrier before the timing");
    const double t0 = now_us(), u0 = cpu_us(), m0 = cycles();
    int rc = 0;
    for (int r = 0; r < rounds && rc == 0; ++r) rc = call();
    c.rc(rc, 0, std::string(name) + " timed");
    line += std::string(" ") + name + " " + std::to_string((now_us() - t0) / rounds) + " us " +
            std::to_string((cpu_us() - u0) / rounds) + " cpu us " + std::to_string((cycles() - m0) / rounds) +
            " cycles;";
  };
  int root = 0, one = g_inst;
  double d = 1.0;
  long l = 1;
  std::vector<int> all(static_cast<size_t>(g_size)), src(static_cast<size_t>(g_size), 3);
  timed("cop_barrier", [&] { return cop_barrier(kGroup, g_size, 90); });
  timed("cop_reduce", [&] { return cop_reduce(COP_SUM, &d, PVM_DOUBLE, 1, 91, kGroup, &root, 1); });
  timed("cop_reduce_long", [&] {
    l = g_inst + 1;
    const int rc = cop_reduce(COP_SUM, &l, PVM_LONG, 1, 92, kGroup, &root, 1);
    // A wrong sum is no measurement.
    return rc == 0 && g_inst == 0 && l != long(g_size) * (g_size + 1) / 2 ? -1 : rc;
  });
  timed("cop_gather", [&] { return cop_gather(all.data(), &one, 1, PVM_INT, 200, kGroup, 0); });
  timed("cop_scatter", [&] { return cop_scatter(&one, src.data(), 1, PVM_INT, 210, kGroup, 0); });
  if (g_inst == 0) c.notes += "COSTS " + std::to_string(rounds) + " calls each:" + line + "\n";
}


// Not a test: libcop's default group lookup against CopStaticGroups in one run (issue 26),
// blocks of R/10 cop_barrier and one-long cop_reduce calls, the two options alternating
// so that whatever else the machine runs weighs on both alike; each call's result checked.
// Reports wall and CPU (this task's, getrusage) per call of each, as instance 0 sees them.
void run_group_costs(Checker& c, int rounds) {
  constexpr int kBlocks = 10;
  const int per = std::max(1, rounds / kBlocks);
  double wall[2][2] = {}, cpu[2][2] = {};  // [static][barrier, reduce]
  int rc = 0;
  for (int b = 0; b < kBlocks && rc == 0; ++b) {
    const int st = b % 2;
    cop_setopt(CopStaticGroups, st);
    rc = cop_barrier(kGroup, g_size, 93);  // the lookup of the new option, untimed
    double t0 = now_us(), u0 = cpu_us();
    for (int r = 0; r < per && rc == 0; ++r) rc = cop_barrier(kGroup, g_size, 93);
    wall[st][0] += now_us() - t0;
    cpu[st][0] += cpu_us() - u0;
    c.rc(rc, 0, std::string("cop_barrier, ") + (st ? "static" : "default") + " groups");
    t0 = now_us();
    u0 = cpu_us();
    int root = 0;
    for (int r = 0; r < per && rc == 0; ++r) {
      long l = g_inst + 1;
      rc = cop_reduce(COP_SUM, &l, PVM_LONG, 1, 94, kGroup, &root, 1);
      if (rc == 0 && g_inst == 0 && l != long(g_size) * (g_size + 1) / 2) rc = -1;  // a wrong sum
    }
    wall[st][1] += now_us() - t0;
    cpu[st][1] += cpu_us() - u0;
    c.rc(rc, 0, std::string("cop_reduce of one long, ") + (st ? "static" : "default") + " groups");
  }
  cop_setopt(CopStaticGroups, 0);
  const double n = double(per) * kBlocks / 2;
  auto fmt = [&](int st, int op) {
    return std::to_string(wall[st][op] / n) + " us " + std::to_string(cpu[st][op] / n) + " cpu us";
  };
  if (g_inst == 0)
    c.notes += "GROUPCOSTS " + std::to_string(int(n)) + " calls each: barrier default " + fmt(0, 0) + ", static " +
               fmt(1, 0) + " (wall ratio " + std::to_string(wall[0][0] / wall[1][0]) + "); reduce_long default " +
               fmt(0, 1) + ", static " + fmt(1, 1) + " (wall ratio " + std::to_string(wall[0][1] / wall[1][1]) + ")\n";
}

}  // namespace libcop_check
