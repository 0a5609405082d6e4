// cop_libcop_check's parts (libcop_check.cpp: the tasks and the parent;
// libcop_calls.cpp: every call checked; libcop_scenarios.cpp: the loops,
// collectives and kill scenarios): what they share.
#pragma once
#include <cop/cop.h>
#include <pvm3.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "task_report.h"
#include "wait.h"

// Codes of newer cop.h (so the check also builds against an older libcop, to show its failures).
#ifndef CopErrTagOverlap
#define CopErrTagOverlap -134
#endif
#ifndef CopErrPartnerDied
#define CopErrPartnerDied -135
#endif

namespace libcop_check {

constexpr int kReportTag = 4242;
// Task to parent in the kill scenarios: a task's pid, just before it waits.
constexpr int kHelloTag = 4243;
// Parent to task in scenario killrecv: go (send, or return), enter the collective.
constexpr int kGoTag = 4244, kEnterTag = 4245;
// The parent's line on which libcop_test.sh kills copd (scenario kill).
constexpr const char* kCopdMayBeKilled = "copd may be killed now";
inline char kGroup[96] = "copcheck";  // "copcheck-" COP_JOB when set (jobs sharing a virtual machine)

struct Checker {
  std::string failures;
  std::string notes;  // reported beside the failures, not one (scenario costs)
  int checks = 0;
  void expect(bool ok, const std::string& what) {
    checks++;
    if (!ok) failures += "  FAIL " + what + "\n";
  }
  void rc(int got, int want, const std::string& what) {
    expect(got == want, what + ": returned " + std::to_string(got) + " (" + cop_strerror(got) + "), expected " +
                            std::to_string(want));
  }
};

// This task in the group (set by child() before any check runs).
inline int g_inst = 0, g_size = 0;
inline std::vector<int> g_tids;
inline bool g_cluster = false;       // one pvmd per host: the direct mapping holds
inline int g_mapping = CopMapTable;  // selected before joining the group
// Channels per level-1 controller of the stack (its stack.env): node k is on channel (k-1)%K+1.
inline int g_per_controller = 64;

// The value task `inst` contributes at element i, per type.
// Jobs sharing the stack (libcop_test.sh jobs) contribute different values: a sum
// with another job's contribution in it is wrong, even in the same round.
inline long long g_job_offset = 0;
inline long long value(int inst, int i) { return (inst + 1) * 7 + i * 3 - 11 + g_job_offset; }

// libcop_calls.cpp: every libcop call against a local computation (scenario checks).
void run_checks(Checker& c, int node);

// libcop_scenarios.cpp
void run_collectives(Checker& c, int rounds);
void run_loops(Checker& c, int iters);
// libcop_groups.cpp (issue 25: groups, tags and counts)
void run_two_groups(Checker& c, int rounds);
void run_bcast_loop(Checker& c, int rounds);
void run_mismatch(Checker& c);
void run_nonmember_sender(Checker& c);
void run_windows(Checker& c);
void run_reduce_mismatch(Checker& c);
// libcop_identity.cpp (issue 34: operation identity, cop_resync)
void run_identity(Checker& c);
void run_costs(Checker& c, int rounds);
void run_group_costs(Checker& c, int rounds);
// true for the task that exits (scenario changes: it ends without leaving the groups).
bool run_changes(Checker& c);
// scenario kill: the task's part, and the parent's word that copd may be killed.
void run_copd_killed(Checker& c, int tid, int node, int nodes);
bool announce_barrier_entered(int waiting);
// scenario killrecv: a spawned task in `role`, and the parent that kills them.
int kill_child(const std::string& role, char* group, int tag, int srctid);
int kill_parent(const std::string& access, const std::string& stack);

}  // namespace libcop_check
