// Every libcop call against a local computation, on a real pvmd with copd and
// one copdrv per emulated node (started by libcop_test.sh).
//
//   cop_libcop_check --nodes N --tasks T --access direct|normal --stack DIR [--scenario checks|kill]
//   --scenario loops: R (default 20) barriers, reductions and broadcasts on one tag each,
//     no barrier between, every iteration checked;
//   --scenario groups: even and odd instances as two groups on the same tags at once, R
//     (default 30) rounds of barrier, reduce and bcast each (libcop_groups.cpp);
//   --scenario bcastloop: one root, R (default 1000) one-double broadcasts on one tag;
//   --scenario mismatch: gather/scatter whose participants disagree on count, datatype or
//     root (CopErrMismatch on every task), a broadcast from a non-member, group windows
//     running out (CopErrNoWindow) and a task with another count of them (CopErrMismatch);
//   --scenario costs: not a check: the time per call of barrier, reduce, gather, scatter;
//   --scenario groupcosts: not a check: libcop's default group lookup against
//     CopStaticGroups in alternating blocks of one run (cop_barrier, one-long cop_reduce);
//   --scenario changes: libcop's default group views (CopGroupCache) through a join, a
//     leave, a leave with a join, and a member's exit (libcop_groups.cpp; 4 tasks or more);
//   --scenario killrecv: tasks killed -9 inside cop_bcast and cop_barrier; their
//     partners and successors on the node must complete or fail clearly (its own tasks);
// spawns N*T copies of itself (task i on node i / T + 1, COP_DRIVER=DIR/node<k>),
// each runs every check and reports; the parent prints the reports and exits
// non-zero if any check failed.
//
// Across the hosts of a cluster (tests/cluster/): one pvmd per host, hosts added
// in COP channel order, a copdrv on each at its default driver directory:
//   cop_libcop_check --hosts node1,node2,node3 [--tasks T] [--mapping table|direct|direct-setopt]
//                    [--scenario checks|collectives] [--rounds R] [--static-groups 0|1]
// spawns the tasks of node k on the k-th host (PvmTaskHost) and leaves COP_DRIVER
// to the task's default. --mapping direct selects the H-field mapping before the
// task joins its group (COP_MAPPING=direct; direct-setopt: cop_setopt after
// cop_mytid), and it must hold there. The collectives scenario is R
// rounds of cop_barrier, cop_reduce and cop_bcast, each checked (R = 0: only the
// PVM setup, the baseline of the traffic measurement).
#include <fstream>

#include "libcop_check.h"
#include "task_report.h"

namespace libcop_check {
namespace {

int child(int argc, char** argv) {
  const int node = std::atoi(argv[1]);
  // "-": a cluster host, whose copdrv sits at the task's default driver directory.
  g_cluster = std::strcmp(argv[3], "-") == 0;
  // A cluster host: its channels per level-1 controller reach the task as libcop reads
  // them (COP_PER_CONTROLLER, scripts/cluster up --per-controller).
  if (const char* k = std::getenv("COP_PER_CONTROLLER"); g_cluster && k && *k) g_per_controller = std::max(1, std::atoi(k));
  if (!g_cluster) {
    const std::string driver = std::string(argv[3]) + "/node" + std::to_string(node);
    setenv("COP_DRIVER", driver.c_str(), 1);
    // Two levels: the stack's channels per level-1 controller (scripts/cop-stack --per-controller).
    std::ifstream env(std::string(argv[3]) + "/stack.env");
    for (std::string line; std::getline(env, line);)
      if (line.rfind("STACK_PER_CONTROLLER=", 0) == 0) {
        g_per_controller = std::max(1, std::atoi(line.c_str() + 21));
        setenv("COP_PER_CONTROLLER", line.c_str() + 21, 1);
      }
  }
  setenv("COP_ACCESS", argv[2], 1);
  // Jobs sharing the virtual machine (libcop_test.sh jobs): each its own PVM group.
  if (const char* job = std::getenv("COP_JOB"); job && *job) {
    std::snprintf(kGroup, sizeof kGroup, "copcheck-%s", job);
    g_job_offset = 1000 * (long long)(std::hash<std::string>{}(job) % 100 + 1);
  }
  const int nodes = std::atoi(argv[4]), tasks = std::atoi(argv[5]);
  const std::string scenario = argc > 6 ? argv[6] : "checks";
  if (scenario == "killrecv")
    return argc > 10 ? kill_child(argv[7], argv[8], std::atoi(argv[9]), std::atoi(argv[10])) : 2;
  // direct: COP_MAPPING=direct at enrolment; direct-setopt: cop_setopt after it.
  const std::string mapping = argc > 7 ? argv[7] : "table";
  if (mapping == "direct") setenv("COP_MAPPING", "direct", 1);
  const int rounds = argc > 8 ? std::atoi(argv[8]) : 0, static_groups = argc > 9 ? std::atoi(argv[9]) : 0;
  // Polling before sleeping (libcop reads COP_POLL_US at enrolment): the same checks must hold.
  if (argc > 10 && std::atoi(argv[10]) > 0) setenv("COP_POLL_US", argv[10], 1);
  Checker c;
  const int tid = cop_mytid();
  c.expect(tid > 0 && tid == pvm_mytid(), "cop_mytid enrolls and returns the pvm tid: " + std::to_string(tid));
  const bool killed = scenario == "kill";
  // The task's checks and failures to the parent (its exit code).
  auto report = [&] {
    pvm_initsend(PvmDataDefault);
    int n = c.checks, bad = c.failures.empty() ? 0 : 1;
    pvm_pkint(&n, 1, 1);
    pvm_pkint(&bad, 1, 1);
    return cop::testing::report_to_parent(kReportTag, cop::testing::task_heading(g_inst, node) + " " +
                                                          std::to_string(c.checks) + " checks\n" + c.notes + c.failures);
  };
  if (tid > 0) {
    c.rc(cop_getopt(CopAccess), std::strcmp(argv[2], "direct") == 0 ? CopAccessDirect : CopAccessNormal, "access mode");
    if (mapping != "table") {
      // Before the group is used: changing the mapping enrols the task again.
      if (mapping == "direct-setopt")
        c.rc(cop_setopt(CopMapping, CopMapDirect), CopMapTable,
             "cop_setopt direct mapping (holds: one pvmd per host; task pid " + std::to_string(getpid()) + ")");
      c.rc(cop_getopt(CopMapping), CopMapDirect, "direct mapping selected");
      g_mapping = CopMapDirect;
      int chno = 0, tkno = 0;
      c.rc(cop_channel(&chno, &tkno), 0, "cop_channel after the remapping");
      // Two levels: host H is channel (H-1)%K+1 of its level-1 controller (seed 000 ch. IV).
      c.expect(chno == (((tid >> 18) & 0xfff) - 1) % g_per_controller + 1,
               "direct mapping: channel = (the tid's H field - 1) % K + 1");
    }
    if (static_groups) c.rc(cop_setopt(CopStaticGroups, 1), 0, "cop_setopt static groups");
    g_size = nodes * tasks;
    g_inst = pvm_joingroup(kGroup);
    pvm_barrier(kGroup, g_size);  // everyone joined (setup only: PVM's own barrier)
    for (int k = 0; k < g_size; ++k) g_tids.push_back(pvm_gettid(kGroup, k));
    if (killed) {
      run_copd_killed(c, tid, node, nodes);
      pvm_barrier(kGroup, g_size);  // the last node's tasks stay in the group until the others are done
    } else if (scenario == "collectives") {
      run_collectives(c, rounds);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "loops") {
      run_loops(c, rounds > 0 ? rounds : 20);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "groups") {
      run_two_groups(c, rounds > 0 ? rounds : 30);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "changes") {
      // The task that exits reports now and ends without leaving its groups.
      if (!run_changes(c)) {
        pvm_barrier(kGroup, g_size - 1);
        pvm_lvgroup(kGroup);
      }
      return report();
    } else if (scenario == "costs") {
      run_costs(c, rounds > 0 ? rounds : 500);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "groupcosts") {
      run_group_costs(c, rounds > 0 ? rounds : 2000);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "bcastloop") {
      run_bcast_loop(c, rounds > 0 ? rounds : 1000);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "identity") {
      run_identity(c);
      pvm_barrier(kGroup, g_size);
    } else if (scenario == "mismatch") {
      run_mismatch(c);
      run_nonmember_sender(c);
      run_windows(c);
      run_reduce_mismatch(c);
      pvm_barrier(kGroup, g_size);
    } else {
      run_checks(c, node);
      pvm_barrier(kGroup, g_size);
    }
    pvm_lvgroup(kGroup);
  }
  return report();
}

struct Options {
  int nodes = 4, tasks = 2;
  std::string access = "direct", stack, scenario = "checks", mapping = "table", rounds = "0", static_groups = "0",
              poll_us = "0";
  std::vector<std::string> hosts;  // --hosts: one pvmd per host (stack "-")
};

std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--nodes") o.nodes = std::atoi(argv[i + 1]);
    else if (k == "--tasks") o.tasks = std::atoi(argv[i + 1]);
    else if (k == "--access") o.access = argv[i + 1];
    else if (k == "--stack") o.stack = argv[i + 1];
    else if (k == "--scenario") o.scenario = argv[i + 1];
    else if (k == "--poll-us") o.poll_us = argv[i + 1];
    else if (k == "--mapping") o.mapping = argv[i + 1];
    else if (k == "--rounds") o.rounds = argv[i + 1];
    else if (k == "--static-groups") o.static_groups = argv[i + 1];
    else if (k == "--hosts") o.hosts = split_commas(argv[i + 1]);
    else {
      std::fprintf(stderr, "cop_libcop_check: unknown option %s\n", k.c_str());
      return false;
    }
  }
  if (!o.hosts.empty()) {
    o.stack = "-";
    o.nodes = int(o.hosts.size());
  }
  const std::string& sc = o.scenario;
  if (o.stack.empty() || (o.mapping != "table" && o.mapping != "direct" && o.mapping != "direct-setopt") ||
      (sc != "checks" && sc != "kill" && sc != "collectives" && sc != "loops" && sc != "killrecv" && sc != "groups" &&
       sc != "bcastloop" && sc != "mismatch" && sc != "costs" && sc != "changes" && sc != "groupcosts" &&
       sc != "identity")) {
    std::fprintf(stderr,
                 "usage: cop_libcop_check --stack DIR | --hosts H1,H2,... [--nodes N] [--tasks T] [--access direct|normal]\n"
                 "       [--mapping table|direct|direct-setopt] [--scenario checks|kill|collectives|loops|killrecv|groups|bcastloop|mismatch|costs|groupcosts|changes|identity] [--rounds R] [--static-groups 0|1]\n"
                 "       [--poll-us US]\n");
    return false;
  }
  if (sc == "changes" && o.nodes * o.tasks < 4) {
    std::fprintf(stderr, "cop_libcop_check: --scenario changes needs 4 tasks or more\n");
    return false;
  }
  return true;
}

// The tasks (child()), node k's on the k-th host with --hosts; false when one did not start.
bool spawn_tasks(const Options& o, std::vector<int>& tids) {
  for (int i = 0; i < o.nodes * o.tasks; ++i) {
    const std::string node = std::to_string(i / o.tasks + 1), n = std::to_string(o.nodes), t = std::to_string(o.tasks);
    char* args[] = {const_cast<char*>(node.c_str()), const_cast<char*>(o.access.c_str()),
                    const_cast<char*>(o.stack.c_str()), const_cast<char*>(n.c_str()), const_cast<char*>(t.c_str()),
                    const_cast<char*>(o.scenario.c_str()), const_cast<char*>(o.mapping.c_str()),
                    const_cast<char*>(o.rounds.c_str()), const_cast<char*>(o.static_groups.c_str()),
                    const_cast<char*>(o.poll_us.c_str()), nullptr};
    int tid = 0;
    // On a cluster node k is the k-th host; on one pvmd every task is local.
    std::string where = o.hosts.empty() ? "" : o.hosts[size_t(i / o.tasks)];
    if (pvm_spawn(const_cast<char*>("cop_libcop_check"), args, o.hosts.empty() ? PvmTaskDefault : PvmTaskHost,
                  where.data(), 1, &tid) != 1) {
      std::fprintf(stderr, "pvm_spawn%s%s failed: %d\n", where.empty() ? "" : " on ", where.c_str(), tid);
      return false;
    }
    tids.push_back(tid);
  }
  return true;
}

}  // namespace
}  // namespace libcop_check

using namespace libcop_check;

int main(int argc, char** argv) {
  if (pvm_parent() != PvmNoParent && argc >= 6) return child(argc, argv);
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (pvm_mytid() < 0) return 1;
  if (o.scenario == "killrecv") return kill_parent(o.access, o.stack);
  std::vector<int> tids;
  if (!spawn_tasks(o, tids)) {
    pvm_exit();
    return 1;
  }
  int failed = 0, total = 0;
  if (o.scenario == "kill" && !announce_barrier_entered((o.nodes - 1) * o.tasks)) failed = 1;
  for (size_t i = 0; i < tids.size(); ++i) {
    timeval tmout{120, 0};
    if (pvm_trecv(-1, kReportTag, &tmout) <= 0) {
      std::fprintf(stderr, "no report from %zu task(s) within 120 s\n", tids.size() - i);
      failed = 1;
      break;
    }
    int n = 0, bad = 0;
    char report[65536];
    pvm_upkint(&n, 1, 1);
    pvm_upkint(&bad, 1, 1);
    pvm_upkstr(report);
    total += n;
    failed |= bad;
    std::fputs(report, stdout);
  }
  std::printf("%s: %d checks over %d tasks on %d %s, access %s, mapping %s%s\n", failed ? "FAILED" : "passed", total,
              o.nodes * o.tasks, o.nodes, o.hosts.empty() ? "nodes" : "hosts", o.access.c_str(), o.mapping.c_str(),
              o.poll_us == "0" ? "" : (", polling " + o.poll_us + " us").c_str());
  pvm_exit();
  return failed;
}
