// libcop under link faults (cop/link/fault.h): every operation must give the
// right answer or a clear error, never a wrong or doubled one.
//
//   cop_fault_check --stack DIR --faults SPEC [--nodes N] [--tasks T] [--rounds R] [--access direct|normal]
//                   [--max-errors E] [--burst 1]
// spawns N*T copies of itself on the local pvmd (task i on node i / T + 1,
// COP_DRIVER=DIR/node<k>, COP_FAULTS=SPEC: the tasks' own sends and receives
// suffer the faults too; copd and copdrv got the same spec from the harness,
// fault_test.sh). Each task runs R rounds of a checked cop_barrier, a
// cop_reduce (sums against a local computation), a cop_bcast (data checked)
// and one fetch-and-add (cop_rmw +1 on task 0's task address space); with
// --burst 1 also a cop_reduce and a cop_bcast of arrays of many bursts (2100
// elements: 17 bursts of t_MAX-OP, two link frames; checked). The
// parent checks the fetch-and-add exactly: every old value 0..N*T*R-1 fetched
// once (a value twice is a doubled effect) and the word equal to N*T*R at the
// end, and prints one line:
//   FAULTS spec ops N errors N wrong N duplicated N us_per_op X
// It exits non-zero on any wrong or duplicated result, and on more than E errors.
//
//   cop_fault_check --stack DIR --outage-ms D [--nodes N] [--tasks T] [--rounds R]
// a link outage longer than copd's lease: once the tasks run, the parent stops copd
// (SIGSTOP, its PID from DIR/copd.pid) for D ms and lets it go on (SIGCONT). Each
// round (a checked barrier, reduce, broadcast and fetch-and-add, on tags of its own)
// is followed by task 0 gathering every task's errors over PVM and telling each
// whether to go on, so the tasks stay in step whatever failed. Errors are allowed
// until the outage is over and two rounds in a row had none; the R rounds after
// that must all succeed (no host-area slot leaked, no wait left behind). Values
// are checked throughout (a wrong one with success is a failure), and a hang is
// the test's TIMEOUT. OUTAGE_REUSE=1 in the environment uses the same tags every 4
// rounds instead, as a PVM program would: a call on a tag whose earlier operation
// failed for some of its participants must still get its own round's values or an
// error (libcop voids what the failed call left, controller.h "Voiding"). Prints
//   OUTAGE ms D ops N errors N wrong N duplicated N after_ops N after_errors N longest_wait_ms X
#include <cop/cop.h>
#include <pvm3.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include "task_report.h"

namespace {

constexpr int kReportTag = 4343;
// The outage scenario: task 0 to the parent once running; the parent to task 0 when
// copd goes on; each task's errors of a round to task 0; task 0's word to the others.
constexpr int kHelloTag = 4344, kOverTag = 4345, kRoundTag = 4346, kNextTag = 4347;
constexpr int kMaxOutageRounds = 1200;  // tags of their own per round stay within 65536 words
// Rounds kept for after the outage, until the stack has recovered: rounds that fail at once
// (link down, a few ms each) while the drivers register again. 100 were used up once on a
// loaded machine (cop_fault_outage_long: "never recovered"); the rounds before the outage
// ends wait for it (a condition), so the reserve costs no round of the outage itself.
constexpr int kRecoveryRounds = 400;
char kGroup[] = "copfault";
constexpr int kFaaTag = 5;  // the counter: word 5 of task 0's task address space

long long value(int inst, int i, int r) { return (inst + 1) * 7 + i * 3 - 11 + r; }

struct Tally {
  int ops = 0, errors = 0, wrong = 0;
  double longest_ms = 0;  // the longest call
  std::map<int, int> codes;  // error code -> count
  std::string first_problems;
  void error(int rc, const std::string& what) {
    errors++;
    codes[rc]++;
    if (first_problems.size() < 2000) first_problems += "  ERROR " + what + ": " + cop_strerror(rc) + "\n";
  }
  // Counts an operation; false (and the error noted) when it failed.
  bool op(int rc, const std::string& what) {
    ops++;
    if (rc < 0) error(rc, what);
    return rc >= 0;
  }
  void check(bool ok, const std::string& what) {
    if (ok) return;
    wrong++;
    if (first_problems.size() < 2000) first_problems += "  WRONG " + what + "\n";
  }
};

// A call timed: its duration into the tally's longest.
template <class Call>
int timed(Tally& t, Call call) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = call();
  t.longest_ms = std::max(t.longest_ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return rc;
}

// One round: a checked cop_barrier, cop_reduce (sums against a local computation),
// cop_bcast (data checked) and one fetch-and-add on task 0's counter, whose old
// value goes to `fetched`; each call timed.
struct RoundTags {
  int barrier, reduce, bcast;
};
// The ordinary rounds' tags: the same every 4 rounds, as a PVM program would reuse them.
RoundTags reused_tags(int r) { return {20, 2000 + 8 * (r % 4), 3000 + 16 * (r % 4)}; }
// The outage scenario's: tags no other round uses, or with OUTAGE_REUSE those of 4
// rounds before.
RoundTags outage_tags(int r) {
  const int rr = std::getenv("OUTAGE_REUSE") ? r % 4 : r;
  return {40000 + rr, 2000 + 8 * rr, 20000 + 16 * rr};
}
void run_round(Tally& t, int r, int inst, const std::vector<int>& tids, std::vector<long>& fetched, RoundTags tags) {
  const int size = int(tids.size());
  constexpr int kCount = 4, kBcast = 8;
  const std::string round = " round " + std::to_string(r);
  const int rtag = tags.reduce, ctag = tags.bcast, root = r % size, src = (r + 1) % size;
  t.op(timed(t, [&] { return cop_barrier(kGroup, size, tags.barrier); }), "cop_barrier" + round);
  long data[kCount];
  for (int i = 0; i < kCount; ++i) data[i] = long(value(inst, i, r));
  int roots[1] = {root};
  if (t.op(timed(t, [&] { return cop_reduce(COP_SUM, data, PVM_LONG, kCount, rtag, kGroup, roots, 1); }),
           "cop_reduce" + round) &&
      inst == root) {
    bool ok = true;
    for (int i = 0; i < kCount; ++i) {
      long want = 0;
      for (int k = 0; k < size; ++k) want += long(value(k, i, r));
      ok &= data[i] == want;
    }
    t.check(ok, "cop_reduce sum" + round);
  }
  double buf[kBcast];
  if (inst == src) {
    for (int i = 0; i < kBcast; ++i) buf[i] = src * 1000.0 + r + i;
    t.op(timed(t, [&] { return cop_bcast(buf, kBcast, PVM_DOUBLE, kGroup, ctag, COP_SEND, -1); }), "cop_bcast send" + round);
  } else {
    for (double& b : buf) b = -1;
    if (t.op(timed(t, [&] { return cop_bcast(buf, kBcast, PVM_DOUBLE, kGroup, ctag, COP_RECV, tids[size_t(src)]); }),
             "cop_bcast recv" + round)) {
      bool ok = true;
      for (int i = 0; i < kBcast; ++i) ok &= buf[i] == src * 1000.0 + r + i;
      t.check(ok, "cop_bcast data" + round);
    }
  }
  long one = 1;
  if (t.op(timed(t, [&] { return cop_rmw(&one, 1, PVM_LONG, tids[0], kFaaTag, COP_NORMAL); }), "cop_rmw +1" + round))
    fetched.push_back(one);
}

// What task 0 tells the others after a round.
enum Next { go_on = 0, clean = 1, stop = 2, never_recovered = 3 };

// The outage scenario's rounds (see the top): `during` counts until the stack has
// recovered, `after` the `after_rounds` rounds that must all succeed.
void run_outage(Tally& during, Tally& after, int after_rounds, int inst, const std::vector<int>& tids,
                std::vector<long>& fetched) {
  const int size = int(tids.size());
  cop_setopt(CopTimeout, 3000);  // a partner that failed is not waited for 10 s each time
  bool in_clean = false, over = false;
  int clean_done = 0, ok_in_a_row = 0;
  for (int r = 0;; ++r) {
    Tally& t = in_clean ? after : during;
    const int errors_before = t.errors;
    run_round(t, r, inst, tids, fetched, outage_tags(r));
    int mine = t.errors - errors_before, next = go_on;
    if (inst == 0) {
      bool all_ok = mine == 0;
      for (int k = 1; k < size; ++k) {
        int e = 0;
        pvm_recv(-1, kRoundTag);
        pvm_upkint(&e, 1, 1);
        all_ok &= e == 0;
      }
      if (r == 0) {
        pvm_initsend(PvmDataDefault);
        pvm_send(pvm_parent(), kHelloTag);
      }
      if (!over && pvm_nrecv(pvm_parent(), kOverTag) > 0) over = true;
      // A long outage (copd stopped 15 s): rounds failing at once (link down) would use
      // up the rounds' tags before it ends. Near that bound task 0 waits for the
      // parent's word that the outage is over (a condition, bounded by 60 s).
      if (!over && r + after_rounds + kRecoveryRounds >= kMaxOutageRounds) {
        timeval until_over{60, 0};
        if (pvm_trecv(pvm_parent(), kOverTag, &until_over) > 0) over = true;
      }
      ok_in_a_row = over && all_ok ? ok_in_a_row + 1 : 0;
      if (in_clean)
        next = ++clean_done >= after_rounds ? stop : clean;
      else if (ok_in_a_row >= 2)
        next = clean;  // recovered: every round from now on must succeed
      else if (r + after_rounds >= kMaxOutageRounds)
        next = never_recovered;
      pvm_initsend(PvmDataDefault);
      pvm_pkint(&next, 1, 1);
      for (int k = 1; k < size; ++k) pvm_send(tids[size_t(k)], kNextTag);
    } else {
      pvm_initsend(PvmDataDefault);
      pvm_pkint(&mine, 1, 1);
      pvm_send(tids[0], kRoundTag);
      pvm_recv(tids[0], kNextTag);
      pvm_upkint(&next, 1, 1);
    }
    if (next == never_recovered) {
      after.check(false, "the stack never recovered from the outage (" + std::to_string(r + 1) + " rounds)");
      return;
    }
    if (next == stop) return;
    in_clean = next == clean;
  }
}

// Arrays of many bursts: a lost, damaged or doubled frame of them is resent
// whole, never half-applied, so every element is right or the call fails.
void run_bursts(Tally& t, int r, int inst, const std::vector<int>& tids) {
  const int size = int(tids.size());
  constexpr int kBurst = 2100, kReduceTag = 8192, kCastTag = 8192 + kBurst;
  const std::string round = " round " + std::to_string(r);
  const int root = (r + 2) % size, src = (r + 3) % size;
  std::vector<long> arr(kBurst);
  for (int i = 0; i < kBurst; ++i) arr[size_t(i)] = long(value(inst, i, r));
  int roots[1] = {root};
  if (t.op(cop_reduce(COP_SUM, arr.data(), PVM_LONG, kBurst, kReduceTag, kGroup, roots, 1), "cop_reduce burst" + round) &&
      inst == root) {
    bool ok = true;
    for (int i = 0; i < kBurst; ++i) {
      long want = 0;
      for (int k = 0; k < size; ++k) want += long(value(k, i, r));
      ok &= arr[size_t(i)] == want;
    }
    t.check(ok, "cop_reduce burst sum" + round);
  }
  std::vector<double> cast(kBurst, -1);
  if (inst == src) {
    for (int i = 0; i < kBurst; ++i) cast[size_t(i)] = src * 1e6 + r * 1e4 + i;
    t.op(cop_bcast(cast.data(), kBurst, PVM_DOUBLE, kGroup, kCastTag, COP_SEND, -1), "cop_bcast burst send" + round);
  } else if (t.op(cop_bcast(cast.data(), kBurst, PVM_DOUBLE, kGroup, kCastTag, COP_RECV, tids[size_t(src)]),
                  "cop_bcast burst recv" + round)) {
    bool ok = true;
    for (int i = 0; i < kBurst; ++i) ok &= cast[size_t(i)] == src * 1e6 + r * 1e4 + i;
    t.check(ok, "cop_bcast burst data" + round);
  }
}

int child(char** argv) {
  const int node = std::atoi(argv[1]);
  setenv("COP_ACCESS", argv[2], 1);
  setenv("COP_DRIVER", (std::string(argv[3]) + "/node" + std::to_string(node)).c_str(), 1);
  const int size = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  setenv("COP_FAULTS", argv[6], 1);  // before the first link use: the fault layer reads it then
  const bool bursts = std::strcmp(argv[7], "1") == 0;
  const int outage_after = std::atoi(argv[8]);  // > 0: the outage scenario, this many rounds after it
  Tally t, after;
  std::vector<long> fetched;
  const int tid = cop_mytid();
  int inst = -1;
  double seconds = 0;
  if (tid < 0) {
    t.error(tid, "cop_mytid");
  } else {
    // Four group windows of 16K words (cop.h "Tags"): the bursts' tags reach 12392. The
    // outage scenario's tags of their own per round reach 41200: its one group has the
    // whole GAS (every task of the run sets the same count).
    cop_setopt(CopGroupWindows, outage_after > 0 ? 1 : 4);
    inst = pvm_joingroup(kGroup);
    pvm_barrier(kGroup, size);  // setup only: PVM's own barrier
    std::vector<int> tids;
    for (int k = 0; k < size; ++k) tids.push_back(pvm_gettid(kGroup, k));
    const auto t0 = std::chrono::steady_clock::now();
    if (outage_after > 0) {
      run_outage(t, after, outage_after, inst, tids, fetched);
    } else {
      for (int r = 0; r < rounds; ++r) {
        run_round(t, r, inst, tids, fetched, reused_tags(r));
        if (bursts) run_bursts(t, r, inst, tids);
      }
    }
    t.op(cop_barrier(kGroup, size, 21), "cop_barrier after the rounds");
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Task 0 reads the counter; the parent compares it with the increments that returned success.
    long counter = -1;
    if (inst == 0) t.op(cop_read(&counter, 1, PVM_LONG, tid, kFaaTag, COP_NORMAL), "cop_read of the counter");
    fetched.push_back(counter);  // last: the counter (task 0), or -1
    pvm_barrier(kGroup, size);
    pvm_lvgroup(kGroup);
  }
  pvm_initsend(PvmDataDefault);
  int head[8] = {t.ops + after.ops, t.errors + after.errors, t.wrong + after.wrong, int(fetched.size()),
                 after.ops, after.errors, int(std::max(t.longest_ms, after.longest_ms) + 0.5), 0};
  pvm_pkint(head, 8, 1);
  std::vector<int> packed(fetched.begin(), fetched.end());  // PVM packs a long in 32 bits anyway
  pvm_pkint(packed.data(), int(packed.size()), 1);
  pvm_pkdouble(&seconds, 1, 1);
  std::string codes;
  for (auto [code, n] : t.codes) codes += std::string(" ") + cop_strerror(code) + " x" + std::to_string(n);
  for (auto [code, n] : after.codes) codes += std::string(" after: ") + cop_strerror(code) + " x" + std::to_string(n);
  return cop::testing::report_to_parent(
      kReportTag, cop::testing::task_heading(inst, node) + codes + "\n" + t.first_problems + after.first_problems);
}

struct Options {
  int nodes = 4, tasks = 2, rounds = 40, max_errors = 0, outage_ms = 0;
  bool bursts = false;
  std::string access = "direct", stack, faults;
};

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--nodes") o.nodes = std::atoi(argv[i + 1]);
    else if (k == "--tasks") o.tasks = std::atoi(argv[i + 1]);
    else if (k == "--rounds") o.rounds = std::atoi(argv[i + 1]);
    else if (k == "--access") o.access = argv[i + 1];
    else if (k == "--stack") o.stack = argv[i + 1];
    else if (k == "--faults") o.faults = argv[i + 1];
    else if (k == "--max-errors") o.max_errors = std::atoi(argv[i + 1]);
    else if (k == "--burst") o.bursts = std::strcmp(argv[i + 1], "1") == 0;
    else if (k == "--outage-ms") o.outage_ms = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "cop_fault_check: unknown option %s\n", k.c_str());
      return false;
    }
  }
  if (o.stack.empty() || o.nodes < 1 || o.tasks < 1 || o.rounds < 1 || o.outage_ms < 0) {
    std::fprintf(stderr, "usage: cop_fault_check --stack DIR --faults SPEC [--nodes N] [--tasks T] [--rounds R] "
                         "[--access direct|normal] [--max-errors E] [--burst 1] [--outage-ms D]\n");
    return false;
  }
  if (o.faults.empty()) o.faults = "drop=0";
  return true;
}

bool spawn_tasks(const Options& o) {
  const int size = o.nodes * o.tasks;
  for (int i = 0; i < size; ++i) {
    const std::string node = std::to_string(i / o.tasks + 1), n = std::to_string(size), r = std::to_string(o.rounds),
                      outage = std::to_string(o.outage_ms > 0 ? o.rounds : 0);
    char* args[] = {const_cast<char*>(node.c_str()), const_cast<char*>(o.access.c_str()),
                    const_cast<char*>(o.stack.c_str()), const_cast<char*>(n.c_str()), const_cast<char*>(r.c_str()),
                    const_cast<char*>(o.faults.c_str()), const_cast<char*>(o.bursts ? "1" : "0"),
                    const_cast<char*>(outage.c_str()), nullptr};
    int tid = 0;
    if (pvm_spawn(const_cast<char*>("cop_fault_check"), args, PvmTaskDefault, nullptr, 1, &tid) != 1) {
      std::fprintf(stderr, "pvm_spawn failed: %d\n", tid);
      return false;
    }
  }
  return true;
}

// The tasks' reports added up.
struct Totals {
  int ops = 0, errors = 0, wrong = 0, duplicated = 0, faa_ok = 0, after_ops = 0, after_errors = 0, longest_ms = 0;
  long counter = -1;    // the fetch-and-add word at the end (task 0 reads it)
  double seconds = 0;   // the slowest task's
  std::vector<long> olds;  // the old values the successful increments fetched
  std::string reports;
};

// One task's report (child()'s message) into the totals.
void add_report(Totals& t) {
  int head[8] = {};
  pvm_upkint(head, 8, 1);
  std::vector<int> packed(size_t(std::max(head[3], 0)));
  pvm_upkint(packed.data(), head[3], 1);
  std::vector<long> fetched(packed.begin(), packed.end());
  double s = 0;
  pvm_upkdouble(&s, 1, 1);
  char report[8192] = {};
  pvm_upkstr(report);
  t.ops += head[0];
  t.errors += head[1];
  t.wrong += head[2];
  t.after_ops += head[4];
  t.after_errors += head[5];
  t.longest_ms = std::max(t.longest_ms, head[6]);
  t.seconds = std::max(t.seconds, s);
  if (!fetched.empty()) {
    if (fetched.back() >= 0) t.counter = fetched.back();
    fetched.pop_back();
  }
  t.faa_ok += int(fetched.size());
  t.olds.insert(t.olds.end(), fetched.begin(), fetched.end());
  if (std::strchr(report, '\n') && std::strlen(std::strchr(report, '\n')) > 1) t.reports += report;
  else if (std::strstr(report, " x")) t.reports += report;
}

// The fetch-and-add: every increment that returned success happened exactly once, so
// the old values are faa_ok distinct values and the counter is at least faa_ok (an
// increment that failed with a link error may or may not have reached copd: at most
// `errors` of them). Returns how many increments failed.
long check_fetch_and_add(Totals& t, long increments) {
  std::sort(t.olds.begin(), t.olds.end());
  for (size_t i = 1; i < t.olds.size(); ++i)
    if (t.olds[i] == t.olds[i - 1]) t.duplicated++;
  const long faa_failed = increments - t.faa_ok;
  if (t.counter < t.faa_ok || t.counter > t.faa_ok + faa_failed) {
    if (t.counter > t.faa_ok + faa_failed) t.duplicated += int(t.counter - t.faa_ok - faa_failed);
    if (t.counter < t.faa_ok) t.wrong++;
    t.reports += "  counter " + std::to_string(t.counter) + " after " + std::to_string(t.faa_ok) +
                 " successful increments (" + std::to_string(faa_failed) + " failed)\n";
  }
  if (!t.olds.empty() && (t.olds.front() < 0 || t.olds.back() >= t.counter)) {
    t.wrong++;
    t.reports += "  fetched values outside 0.." + std::to_string(t.counter - 1) + "\n";
  }
  return faa_failed;
}

// The outage (see the top): copd stopped for outage_ms once task 0 says the tasks run,
// then let go on; task 0 told. False (said) when the tasks never ran or copd was not found.
bool outage(const Options& o) {
  timeval tmout{60, 0};
  const int buf = pvm_trecv(-1, kHelloTag, &tmout);
  int bytes = 0, tag = 0, task0 = 0;
  if (buf <= 0 || pvm_bufinfo(buf, &bytes, &tag, &task0) < 0) {
    std::fprintf(stderr, "the tasks did not start their rounds within 60 s\n");
    return false;
  }
  std::ifstream pidfile(o.stack + "/copd.pid");
  pid_t copd = 0;
  if (!(pidfile >> copd) || copd <= 0 || ::kill(copd, SIGSTOP) != 0) {
    std::fprintf(stderr, "cannot stop copd (pid file %s/copd.pid)\n", o.stack.c_str());
    return false;
  }
  // The outage itself: copd hears nothing and answers nothing this long (not a wait for a condition).
  std::this_thread::sleep_for(std::chrono::milliseconds(o.outage_ms));
  ::kill(copd, SIGCONT);
  pvm_initsend(PvmDataDefault);
  pvm_send(task0, kOverTag);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (pvm_parent() != PvmNoParent && argc == 9) return child(argv);
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (pvm_mytid() < 0) return 1;
  if (!spawn_tasks(o)) {
    pvm_exit();
    return 1;
  }
  const int size = o.nodes * o.tasks;
  if (o.outage_ms > 0 && !outage(o)) {
    pvm_exit();
    return 1;
  }
  Totals t;
  for (int i = 0; i < size; ++i) {
    timeval tmout{150, 0};
    if (pvm_trecv(-1, kReportTag, &tmout) <= 0) {
      std::fprintf(stderr, "no report from %d task(s) within 150 s\n", size - i);
      pvm_exit();
      return 1;
    }
    add_report(t);
  }
  if (o.outage_ms > 0) {  // as many increments as the tasks made: the successful ones and the errors
    const bool failed = t.wrong > 0 || t.duplicated > 0 || t.after_errors > 0 || t.after_ops == 0;
    check_fetch_and_add(t, long(t.faa_ok) + t.errors);
    const bool faa_failed = t.wrong > 0 || t.duplicated > 0;
    std::fputs(t.reports.c_str(), stdout);
    std::printf("OUTAGE ms %d ops %d errors %d wrong %d duplicated %d after_ops %d after_errors %d longest_wait_ms %d%s\n",
                o.outage_ms, t.ops, t.errors, t.wrong, t.duplicated, t.after_ops, t.after_errors, t.longest_ms,
                failed || faa_failed ? " FAILED" : "");
    pvm_exit();
    return failed || faa_failed ? 1 : 0;
  }
  const long faa_failed = check_fetch_and_add(t, long(size) * o.rounds);
  std::fputs(t.reports.c_str(), stdout);
  std::printf("fetch-and-add: counter %ld, %d increments returned success, %ld failed\n", t.counter, t.faa_ok,
              faa_failed);
  const bool failed = t.wrong > 0 || t.duplicated > 0 || t.errors > o.max_errors;
  std::printf("FAULTS %s ops %d errors %d wrong %d duplicated %d us_per_op %.1f%s\n", o.faults.c_str(), t.ops, t.errors,
              t.wrong, t.duplicated, t.ops ? t.seconds * 1e6 / (double(t.ops) / size) : 0.0, failed ? " FAILED" : "");
  pvm_exit();
  return failed ? 1 : 0;
}
