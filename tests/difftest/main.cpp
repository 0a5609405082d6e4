// cop_difftest: a randomized differential tester of libcop (issue 34, part 6), in the way
// of Jepsen and Csmith. From a seed it draws a libcop program (program.h: groups joined and
// left by libcop and by plain libgpvm3, tags used again and again, counts 1..512, the four
// datatypes, every reduction function, barriers, broadcasts and multicasts with srctid -1
// and explicit, short receives, gathers, scatters, fetch-and-add, task kills, copd stops,
// restarts and node partitions of 0.5-3 s), runs it on a live COP stack (libcop) and, as
// the reference, on PVM's own group calls, and fails on any result that is neither the
// reference's nor a negative code, and on a fetch-and-add history with an old value twice
// or a final counter out of bounds. tests/difftest/difftest.sh starts the stacks and
// drives the seeds; README.md there says how to run and replay.
//
//   cop_difftest --stack DIR --seed S [--features LIST] [--tasks T] [--nodes N] [--steps K]
//                [--job J] [--no-faults] [--cop-timeout-ms MS] [--run-timeout-s S] [--self-check]
//   cop_difftest --print --seed S [--features LIST] [--tasks T] [--nodes N] [--steps K]
// prints one line
//   DIFFTEST seed S job J: ops N errors N wrong N faa_dup N faa_bounds N refdiff N hang N PASS|FAIL
// (and per kind: ops/errors/wrong), the WRONG lines (seed, step, task, expected, got) and,
// on FAIL, the program. Exit 0 PASS, 1 FAIL, 2 bad usage. --self-check: the tasks change
// one element of every successful reduction result before checking it (the checker must
// then FAIL: the test cop_difftest_can_fail).
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "faults.h"
#include "task.h"

using namespace difftest;

namespace {

struct Options {
  std::string stack, features = default_features();
  uint64_t seed = 1;
  int tasks = 8, nodes = 4, steps = 40, job = 0, cop_timeout_ms = 3000, run_timeout_s = 180;
  bool print = false, no_faults = false, self_check = false;
};

bool parse(int argc, char** argv, Options& o, std::set<std::string>& features) {
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (k == "--print") o.print = true;
    else if (k == "--no-faults") o.no_faults = true;
    else if (k == "--self-check") o.self_check = true;
    else if (!v) return std::fprintf(stderr, "cop_difftest: %s needs a value\n", k.c_str()), false;
    else if (k == "--stack") o.stack = argv[++i];
    else if (k == "--seed") o.seed = std::strtoull(argv[++i], nullptr, 10);
    else if (k == "--features") o.features = argv[++i];
    else if (k == "--tasks") o.tasks = std::atoi(argv[++i]);
    else if (k == "--nodes") o.nodes = std::atoi(argv[++i]);
    else if (k == "--steps") o.steps = std::atoi(argv[++i]);
    else if (k == "--job") o.job = std::atoi(argv[++i]);
    else if (k == "--cop-timeout-ms") o.cop_timeout_ms = std::atoi(argv[++i]);
    else if (k == "--run-timeout-s") o.run_timeout_s = std::atoi(argv[++i]);
    else return std::fprintf(stderr, "cop_difftest: unknown option %s\n", k.c_str()), false;
  }
  std::string why;
  if (!parse_features(o.features, features, why)) return std::fprintf(stderr, "cop_difftest: %s\n", why.c_str()), false;
  if (o.nodes < 1 || o.tasks < 4 || o.tasks % o.nodes || o.tasks > 16 || o.steps < 1 || o.job < 0 || o.job > 1 ||
      (!o.print && o.stack.empty())) {
    std::fprintf(stderr, "usage: cop_difftest --stack DIR --seed S [--features LIST] [--tasks T (4..16, a multiple of "
                         "N)] [--nodes N] [--steps K] [--job 0|1] [--no-faults] [--cop-timeout-ms MS] "
                         "[--run-timeout-s S] [--self-check] | --print --seed S ...\n");
    return false;
  }
  return true;
}

std::vector<int> spawn(const Options& o) {
  std::vector<int> tids;
  const std::string seed = std::to_string(o.seed), job = std::to_string(o.job), tasks = std::to_string(o.tasks),
                    nodes = std::to_string(o.nodes), steps = std::to_string(o.steps),
                    timeout = std::to_string(o.cop_timeout_ms), self = o.self_check ? "1" : "0";
  for (int i = 0; i < o.tasks; ++i) {
    const std::string index = std::to_string(i);
    const std::string* a[] = {&index, &job, &seed, &tasks, &nodes, &o.features, &steps, &o.stack, &timeout, &self};
    std::vector<char*> args;
    for (auto* s : a) args.push_back(const_cast<char*>(s->c_str()));
    args.push_back(nullptr);
    int tid = 0;
    if (pvm_spawn(const_cast<char*>("cop_difftest"), args.data(), PvmTaskDefault, nullptr, 1, &tid) != 1) {
      std::fprintf(stderr, "cop_difftest: pvm_spawn failed: %d\n", tid);
      return {};
    }
    tids.push_back(tid);
  }
  pvm_initsend(PvmDataDefault);
  pvm_pkint(tids.data(), o.tasks, 1);
  pvm_mcast(tids.data(), o.tasks, kStartTag);
  return tids;
}

}  // namespace

namespace {

// The tasks' reports added up, and the fault threads the parent ran meanwhile.
struct Run {
  Tally sum;
  std::map<int, Counter> counters;
  std::string lines;
  int reports = 0, hang = 0, kills = 0;
  std::map<int, int> at_step;  // tid -> the step it began last
  std::vector<std::thread> faults;
  std::mutex fault_lines;  // the fault threads' notes
  std::mutex one_fault;    // faults one after the other (a restart reads the copd a stop is about)
};

void add(Run& r, const Tally& t, const std::string& text) {
  for (int k = 0; k < kKinds; ++k) {
    r.sum.ops[k] += t.ops[k];
    r.sum.errors[k] += t.errors[k];
    r.sum.wrong[k] += t.wrong[k];
  }
  r.sum.refdiff += t.refdiff;
  r.kills += t.killed;
  r.lines += text;
  for (auto& [key, k] : t.counters) {
    Counter& c = r.counters[key];
    c.olds.insert(c.olds.end(), k.olds.begin(), k.olds.end());
    c.failed += k.failed;
    if (k.read) {
      c.read = true;
      c.final = k.final;
    }
  }
}

// The process ids of node k's tasks (task i is on node i / (tasks / nodes) + 1), from pvmd.
std::vector<pid_t> node_pids(const Options& o, const std::vector<int>& tids, int node) {
  std::vector<pid_t> pids;
  int n = 0;
  pvmtaskinfo* info = nullptr;
  if (pvm_tasks(0, &n, &info) < 0) return pids;
  const int per = o.tasks / o.nodes;
  for (int t = (node - 1) * per; t < node * per && t < int(tids.size()); ++t)
    for (int k = 0; k < n; ++k)
      if (info[k].ti_tid == tids[size_t(t)]) pids.push_back(pid_t(info[k].ti_pid));
  return pids;
}

// Reports and fault requests until every task reported or the run's time is up.
void collect(const Options& o, Run& r, const std::vector<int>& tids) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(o.run_timeout_s);
  while (r.reports < o.tasks && std::chrono::steady_clock::now() < until) {
    timeval tmout{0, 200000};
    const int buf = pvm_trecv(-1, -1, &tmout);
    if (buf <= 0) continue;
    int bytes = 0, tag = 0, from = 0;
    pvm_bufinfo(buf, &bytes, &tag, &from);
    if (tag == kStepTag) {
      pvm_upkint(&r.at_step[from], 1, 1);
    } else if (tag == kFaultTag) {
      int m[4] = {};
      pvm_upkint(m, 4, 1);
      if (o.no_faults) continue;
      r.faults.emplace_back([&o, &r, m, pids = node_pids(o, tids, m[2])] {
        std::string why;
        std::unique_lock<std::mutex> order(r.one_fault);
        if (make_fault(o.stack, Fault(m[0]), m[1], m[2], pids, why)) return;
        order.unlock();
        std::lock_guard<std::mutex> hold(r.fault_lines);
        r.lines += "  fault not made: " + why + "\n";
      });
    } else if (tag == kReportTag) {
      Tally t;
      std::string text;
      t.unpack(text);
      std::lock_guard<std::mutex> hold(r.fault_lines);
      add(r, t, text);
      r.at_step[from] = -2;  // reported
      r.reports++;
    }
  }
  for (auto& f : r.faults) f.join();
  if (r.reports < o.tasks) {
    r.hang = o.tasks - r.reports;
    r.lines += "  HANG: " + std::to_string(r.hang) + " task(s) did not report within " + std::to_string(o.run_timeout_s) +
               " s (every libcop wait is bounded by CopTimeout); the step each task began last:";
    for (size_t t = 0; t < tids.size(); ++t)
      r.lines += " task " + std::to_string(t) + " step " + std::to_string(r.at_step.count(tids[t]) ? r.at_step[tids[t]] : -1);
    r.lines += "\n";
    for (int tid : tids) pvm_kill(tid);
  }
  continue_all(o.stack, o.nodes);
}

// Fetch-and-add: the old values of one counter unique; its final value at least the
// increments that returned success and at most those plus the ones that failed.
int check_counters(Run& r, int& bounds) {
  int dup = 0;
  bounds = 0;
  for (auto& [key, c] : r.counters) {
    std::sort(c.olds.begin(), c.olds.end());
    for (size_t i = 1; i < c.olds.size(); ++i)
      if (c.olds[i] == c.olds[i - 1]) dup++;
    if (dup) r.lines += "  WRONG fetch-and-add counter " + std::to_string(key) + ": an old value fetched twice\n";
    if (!c.read || r.kills) continue;  // a killed task's last increments are not known
    const long ok = long(c.olds.size());
    if (c.final < ok || c.final > ok + c.failed) {
      bounds++;
      r.lines += "  WRONG fetch-and-add counter " + std::to_string(key) + ": final " + std::to_string(c.final) + " after " +
                 std::to_string(ok) + " increments returned success and " + std::to_string(c.failed) + " failed\n";
    }
  }
  return dup;
}

int report(const Options& o, const Program& p, Run& r) {
  int bounds = 0;
  const int dup = check_counters(r, bounds);
  int ops = 0, errors = 0, wrong = 0;
  std::string kinds;
  for (int k = 0; k < kKinds; ++k) {
    ops += r.sum.ops[k];
    errors += r.sum.errors[k];
    wrong += r.sum.wrong[k];
    if (r.sum.ops[k])
      kinds += std::string(" ") + kind_name(Kind(k)) + " " + std::to_string(r.sum.ops[k]) + "/" +
               std::to_string(r.sum.errors[k]) + "/" + std::to_string(r.sum.wrong[k]);
  }
  const bool fail = wrong || dup || bounds || r.hang;  // refdiff: PVM's own answer, noted
  std::fputs(r.lines.c_str(), stdout);
  std::printf("DIFFTEST seed %llu job %d: ops %d errors %d wrong %d faa_dup %d faa_bounds %d refdiff %d hang %d %s\n",
              (unsigned long long)o.seed, o.job, ops, errors, wrong, dup, bounds, r.sum.refdiff, r.hang,
              fail ? "FAIL" : "PASS");
  std::printf("  per kind (ops/errors/wrong):%s\n", kinds.c_str());
  if (fail) std::printf("%s  replay: cop_difftest --seed %llu --features %s (difftest.sh --seed %llu)\n", print(p).c_str(),
                        (unsigned long long)o.seed, o.features.c_str(), (unsigned long long)o.seed);
  return fail ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A task's first argument is its index; the parent's are options (--print needs no PVM).
  if (argc >= 11 && argv[1][0] != '-' && pvm_parent() != PvmNoParent) return task_main(argc, argv);
  Options o;
  std::set<std::string> features;
  if (!parse(argc, argv, o, features)) return 2;
  const Program p = generate(o.seed, o.tasks, o.nodes, features, o.steps);
  if (o.print) {
    std::fputs(print(p).c_str(), stdout);
    return 0;
  }
  if (pvm_mytid() < 0) return 1;
  const std::vector<int> tids = spawn(o);
  if (tids.empty()) {
    pvm_exit();
    return 1;
  }
  Run r;
  collect(o, r, tids);
  const int rc = report(o, p, r);
  pvm_exit();
  return rc;
}
