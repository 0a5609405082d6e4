// The live stack's modelled time equals the analytic model's (seed 000 ch. VI,
// cop/model/analytic.h) for the same call: copd charges every term the model
// charges, t_CN-COP included (a command frame is ready t_CN-COP after the node
// started writing it, cop/link.h).
//
//   cop_modelled_check --stack DIR --nodes N [--access direct|normal]
// spawns N tasks on the local pvmd (task i on node i+1, one a node). Each call is
// made after a cop_barrier (every node then has the exit, at modelled time X),
// each task reads its channel's modelled clock before and after (then a
// pvm_barrier: no next call overlaps this one); the call's
// modelled time is the latest clock after minus the earliest before (X). The
// calls: cop_barrier, cop_reduce of 1 and 128 PVM_LONG (SUM, root instance 0),
// cop_bcast of 1, 128 and 2048 PVM_LONG from instance 0. Expected: the libcop-call model
// (cop/model/libcop_call.h) over the ideal link, which is, with Hall's timings and
// integer costs:
//   barrier, bcast  analytic_cycles with C̄ = the other channels that send in the
//                   call (barrier N-1, t̄OP = one control command; bcast 0)
//   bcast 2048      16 bursts of 128 (two frames) through the same core: 16 times
//                   the 128-element call, t_CN-COP once (the rest pipelines)
//   reduce          the same plus, per other channel, the SETTC, SETBM and UNLOCK
//                   every SPMD channel sends (it cannot know it is not the first)
//                   that ch. VI's t_contrib does not count
// Prints one line per call (OK or WRONG, both values); exits 1 on any WRONG.
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "model/libcop_call.h"

namespace {

constexpr int kResultTag = 6262;
char kGroup[] = "copmodelled";
constexpr int kCalls = 6;
const char* const kNames[kCalls] = {"cop_barrier",      "cop_reduce 1 long",  "cop_reduce 128 long",
                                    "cop_bcast 1 long", "cop_bcast 128 long", "cop_bcast 2048 long"};

unsigned long long clock_now() {
  unsigned long long c = 0;
  cop_modelled_cycles(&c);
  return c;
}

// Call k (kNames) as instance `inst` of `size`; its answer checked.
int call(int k, int inst, int size, int root_tid) {
  std::vector<long> v(2048);
  const int n = (k == 1 || k == 3) ? 1 : k == 5 ? 2048 : 128;
  int root = 0;
  switch (k) {
    case 0: return cop_barrier(kGroup, size, 10);
    case 1:
    case 2: {
      for (int i = 0; i < n; ++i) v[size_t(i)] = inst * 1000 + i;
      const int rc = cop_reduce(COP_SUM, v.data(), PVM_LONG, n, 100 + 200 * k, kGroup, &root, 1);
      for (int i = 0; i < n && inst == 0 && rc >= 0; ++i)
        if (v[size_t(i)] != 1000L * size * (size - 1) / 2 + long(size) * i) return -1;
      return rc;
    }
    default: {
      for (int i = 0; i < n; ++i) v[size_t(i)] = inst == 0 ? 77 + i : -1;
      const int rc = inst == 0 ? cop_bcast(v.data(), n, PVM_LONG, kGroup, 1000 + 200 * k, COP_SEND, -1)
                               : cop_bcast(v.data(), n, PVM_LONG, kGroup, 1000 + 200 * k, COP_RECV, root_tid);
      for (int i = 0; i < n && rc >= 0; ++i)
        if (v[size_t(i)] != 77 + i) return -1;
      return rc;
    }
  }
}

int child(char** argv) {
  const int node = std::atoi(argv[1]), size = std::atoi(argv[4]);
  setenv("COP_ACCESS", argv[2], 1);
  setenv("COP_DRIVER", (std::string(argv[3]) + "/node" + std::to_string(node)).c_str(), 1);
  int status = cop_mytid();
  std::vector<unsigned long long> clocks(2 * kCalls, 0);
  if (status > 0) {
    const int inst = pvm_joingroup(kGroup);
    pvm_barrier(kGroup, size);
    cop_setopt(CopStaticGroups, 1);
    const int root_tid = pvm_gettid(kGroup, 0);
    status = cop_barrier(kGroup, size, 1);
    for (int k = 0; k < kCalls && status >= 0; ++k) {
      status = cop_barrier(kGroup, size, 2);  // every node has the exit: the call starts there
      clocks[size_t(2 * k)] = clock_now();
      if (status >= 0) status = call(k, inst, size, root_tid);
      clocks[size_t(2 * k + 1)] = clock_now();
      // Nobody starts the next call before every task has ended this one: its
      // commands would be serviced inside this call's modelled time.
      pvm_barrier(kGroup, size);
    }
    pvm_barrier(kGroup, size);
    pvm_lvgroup(kGroup);
  }
  pvm_initsend(PvmDataDefault);
  pvm_pkint(&status, 1, 1);
  pvm_pkulong(reinterpret_cast<unsigned long*>(clocks.data()), 2 * kCalls, 1);
  pvm_send(pvm_parent(), kResultTag);
  cop_exit();
  pvm_exit();
  return 0;
}

// The libcop-call model's cycles for call k at n nodes over the live stack's ideal link
// (cop/model/libcop_call.h; the header says what that is in ch. VI's terms).
uint64_t expected(int k, uint64_t nodes) {
  using namespace cop::model;
  const Timing t;
  const auto call = [&](Function f, uint64_t elements) {
    return libcop_call_cycles(f, DataType::integer, t, SerialLink::ideal(), nodes, elements);
  };
  switch (k) {
    case 0: return call(Function::barrier_spmd, 1);
    case 1:
    case 2: return call(Function::reduce, k == 1 ? 1 : 128);
    case 3:
    case 4: return call(Function::bcast, k == 3 ? 1 : 128);
    default: return call(Function::bcast, 2048);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (pvm_parent() != PvmNoParent && argc == 5) return child(argv);
  std::string stack, access = "direct";
  int nodes = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--stack") stack = argv[i + 1];
    else if (k == "--nodes") nodes = std::atoi(argv[i + 1]);
    else if (k == "--access") access = argv[i + 1];
  }
  if (stack.empty() || nodes < 2 || nodes > 64) {
    std::fprintf(stderr, "usage: cop_modelled_check --stack DIR --nodes N [--access direct|normal]\n");
    return 2;
  }
  if (pvm_mytid() < 0) return 1;
  for (int i = 0; i < nodes; ++i) {
    const std::string node = std::to_string(i + 1), n = std::to_string(nodes);
    char* args[] = {const_cast<char*>(node.c_str()), const_cast<char*>(access.c_str()), const_cast<char*>(stack.c_str()),
                    const_cast<char*>(n.c_str()), nullptr};
    int tid = 0;
    if (pvm_spawn(const_cast<char*>("cop_modelled_check"), args, PvmTaskDefault, nullptr, 1, &tid) != 1) {
      std::fprintf(stderr, "pvm_spawn failed: %d\n", tid);
      return 1;
    }
  }
  std::vector<unsigned long long> first(kCalls, ~0ull), last(kCalls, 0);
  int failed = 0;
  for (int i = 0; i < nodes; ++i) {
    timeval tmout{120, 0};
    if (pvm_trecv(-1, kResultTag, &tmout) <= 0) {
      std::fprintf(stderr, "a task did not report within 120 s\n");
      return 1;
    }
    int status = 0;
    std::vector<unsigned long long> c(2 * kCalls);
    pvm_upkint(&status, 1, 1);
    pvm_upkulong(reinterpret_cast<unsigned long*>(c.data()), 2 * kCalls, 1);
    if (status < 0) failed = status;
    for (int k = 0; k < kCalls; ++k) {
      first[size_t(k)] = std::min(first[size_t(k)], c[size_t(2 * k)]);
      last[size_t(k)] = std::max(last[size_t(k)], c[size_t(2 * k + 1)]);
    }
  }
  pvm_exit();
  if (failed < 0) {
    std::fprintf(stderr, "a task failed: %s\n", cop_strerror(failed));
    return 1;
  }
  int wrong = 0;
  for (int k = 0; k < kCalls; ++k) {
    const unsigned long long live = last[size_t(k)] - first[size_t(k)], want = expected(k, uint64_t(nodes));
    std::printf("%-22s %d nodes: live %llu cycles, libcop-call model %llu  %s\n", kNames[k], nodes, live, want,
                live == want ? "OK" : "WRONG");
    wrong += live != want;
  }
  return wrong ? 1 : 0;
}
