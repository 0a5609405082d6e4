// Every libcop call against a local computation, on a real pvmd with copd and
// one copdrv per emulated node (started by libcop_test.sh).
//
//   cop_libcop_check --nodes N --tasks T --access direct|normal --stack DIR [--scenario checks|kill]
//   --scenario loops: R (default 20) barriers, reductions and broadcasts on one tag each,
//     no barrier between, every iteration checked;
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

// Codes of newer cop.h (so the check also builds against an older libcop, to show its failures).
#ifndef CopErrTagOverlap
#define CopErrTagOverlap -134
#endif
#ifndef CopErrPartnerDied
#define CopErrPartnerDied -135
#endif

namespace {

constexpr int kReportTag = 4242;
char kGroup[] = "copcheck";

struct Checker {
  std::string failures;
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

int g_inst = 0, g_size = 0;
std::vector<int> g_tids;
bool g_cluster = false;        // one pvmd per host: the direct mapping holds
int g_mapping = CopMapTable;   // selected before joining the group

// The value task `inst` contributes at element i, per type.
long long value(int inst, int i) { return (inst + 1) * 7 + i * 3 - 11; }

template <typename T>
void check_reduce(Checker& c, int func, int datatype, const char* tname, int count, int tag) {
  std::vector<T> data(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) data[size_t(i)] = T(value(g_inst, i));
  int roots[2] = {0, g_size - 1};
  const int rc = cop_reduce(func, data.data(), datatype, count, tag, kGroup, roots, 2);
  c.rc(rc, 0, std::string("cop_reduce ") + tname + " func " + std::to_string(func));
  if (rc < 0 || (g_inst != 0 && g_inst != g_size - 1)) return;
  for (int i = 0; i < count; ++i) {
    T want = T(value(0, i));
    for (int k = 1; k < g_size; ++k) {
      const T v = T(value(k, i));
      switch (func) {
        case COP_SUM: want = T(want + v); break;
        case COP_MAX: want = std::max(want, v); break;
        case COP_MIN: want = std::min(want, v); break;
        case COP_AND: if constexpr (std::is_integral_v<T>) want = T(want & v); break;
        case COP_OR: if constexpr (std::is_integral_v<T>) want = T(want | v); break;
        case COP_EXOR: if constexpr (std::is_integral_v<T>) want = T(want ^ v); break;
      }
    }
    if (data[size_t(i)] != want) {
      c.expect(false, std::string("cop_reduce ") + tname + " func " + std::to_string(func) + " element " +
                          std::to_string(i) + ": got " + std::to_string(double(data[size_t(i)])) + " want " +
                          std::to_string(double(want)));
      return;
    }
  }
  c.expect(true, "");
}

// A tid no task has: the L field far beyond what the pvmd has handed out.
int unknown_tid() { return (pvm_mytid() & ~0x3FFFF) | 0x3FF00; }

// Arguments every call must refuse with a documented code (cop.h), locally, at once.
void check_arguments(Checker& c) {
  const int me = pvm_mytid();
  long long v[4] = {1, 2, 3, 4};
  float f = 1.0f;
  int root0 = 0, bad_root = g_size, two_roots[2] = {0, 0};
  c.rc(cop_write(v, 1, PVM_LONG, me, 0, 7), PvmBadParam, "cop_write mode 7");
  c.rc(cop_read(v, 1, PVM_LONG, me, 0, -1), PvmBadParam, "cop_read mode -1");
  c.rc(cop_write(nullptr, 1, PVM_LONG, me, 0, COP_NORMAL), PvmBadParam, "cop_write null data");
  c.rc(cop_read(v, -1, PVM_LONG, me, 0, COP_NORMAL), PvmBadParam, "cop_read count -1");
  c.rc(cop_write(v, 1, 999, me, 0, COP_NORMAL), PvmBadParam, "cop_write unknown datatype");
  c.rc(cop_write(v, 1, PVM_LONG, me, -3, COP_NORMAL), PvmBadParam, "cop_write negative tag");
  c.rc(cop_write(v, 0, PVM_LONG, me, 0, COP_NORMAL), 0, "cop_write count 0 does nothing");
  c.rc(cop_rmw(&f, 1, PVM_FLOAT, me, 0, COP_NORMAL), CopErrBadType, "cop_rmw on PVM_FLOAT");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 1, 30000, kGroup, &root0, 0), PvmBadParam, "cop_reduce with 0 roots");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 1, 30000, kGroup, nullptr, 1), PvmBadParam, "cop_reduce null roots");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 1, 30000, kGroup, &bad_root, 1), PvmNoInst, "cop_reduce root out of range");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 1, 30000, kGroup, two_roots, 2), PvmBadParam, "cop_reduce root named twice");
  c.rc(cop_reduce(0, v, PVM_LONG, 1, 30000, kGroup, &root0, 1), PvmBadParam, "cop_reduce function 0");
  c.rc(cop_reduce(99, v, PVM_LONG, 1, 30000, kGroup, &root0, 1), PvmBadParam, "cop_reduce function 99");
  c.rc(cop_reduce(COP_SUM, v, 999, 1, 30000, kGroup, &root0, 1), PvmBadParam, "cop_reduce unknown datatype");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, -2, 30000, kGroup, &root0, 1), PvmBadParam, "cop_reduce count -2");
  c.rc(cop_reduce(COP_SUM, nullptr, PVM_LONG, 1, 30000, kGroup, &root0, 1), PvmBadParam, "cop_reduce null data");
  c.rc(cop_reduce(COP_MAX, v, PVM_ULONG, 1, 30000, kGroup, &root0, 1), CopErrBadType, "cop_reduce MAX on PVM_ULONG");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 1, 30000, nullptr, &root0, 1), PvmBadParam, "cop_reduce null group");
  c.rc(cop_mcast(v, 1, PVM_LONG, g_tids.data(), 0, 30000, COP_SEND, -1), PvmBadParam, "cop_mcast to 0 tasks");
  c.rc(cop_mcast(v, 1, PVM_LONG, nullptr, 2, 30000, COP_SEND, -1), PvmBadParam, "cop_mcast null tids");
  c.rc(cop_mcast(v, 1, PVM_LONG, g_tids.data(), g_size, 30000, 9, -1), PvmBadParam, "cop_mcast mode 9");
  c.rc(cop_bcast(v, 1, PVM_LONG, kGroup, 30000, 5, -1), PvmBadParam, "cop_bcast mode 5");
  c.rc(cop_bcast(v, 1, 999, kGroup, 30000, COP_SEND, -1), PvmBadParam, "cop_bcast unknown datatype");
  c.rc(cop_bcast(v, -1, PVM_LONG, kGroup, 30000, COP_SEND, -1), PvmBadParam, "cop_bcast count -1");
  c.rc(cop_bcast(v, 1, PVM_LONG, nullptr, 30000, COP_SEND, -1), PvmBadParam, "cop_bcast null group");
  c.rc(cop_bcast(v, 1, PVM_LONG, kGroup, 30000, COP_RECV, me), PvmBadParam, "cop_bcast receiving from itself");
  c.rc(cop_barrier(kGroup, 0, 30000), PvmBadParam, "cop_barrier count 0");
  c.rc(cop_barrier(kGroup, -5, 30000), PvmBadParam, "cop_barrier count -5");
  c.rc(cop_barrier(nullptr, g_size, 30000), PvmBadParam, "cop_barrier null group");
  c.rc(cop_gather(v, v, 1, PVM_LONG, 100, kGroup, g_size), PvmNoInst, "cop_gather root out of range");
  c.rc(cop_scatter(v, v, 1, PVM_LONG, 100, kGroup, -1), PvmNoInst, "cop_scatter root -1");
  c.rc(cop_gather(v, v, -1, PVM_LONG, 100, kGroup, 0), PvmBadParam, "cop_gather count -1");
  c.rc(cop_notify(CopChannelDown, -1, 0, nullptr), PvmBadParam, "cop_notify negative tag");
  // Beyond the 64K-word global address space.
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 4, 65534, kGroup, &root0, 1), CopErrAddressRange, "cop_reduce past the GAS");
  c.rc(cop_bcast(v, 2, PVM_LONG, kGroup, 65535, COP_SEND, -1), CopErrAddressRange, "cop_bcast past the GAS");
  // A tid that names no task: PvmNoTask at once (before: the call waited for the
  // mapping table for the whole timeout, 60 s here, and answered CopErrMapping).
  const int nobody = unknown_tid();
  c.rc(cop_read(v, 1, PVM_LONG, nobody, 0, COP_NORMAL), PvmNoTask, "cop_read from an unknown tid");
  c.rc(cop_rmw(v, 1, PVM_LONG, nobody, 0, COP_NORMAL), PvmNoTask, "cop_rmw on an unknown tid");
  c.rc(cop_bcast(v, 1, PVM_LONG, kGroup, 30000, COP_RECV, nobody), PvmNoTask, "cop_bcast from an unknown tid");
  int with_nobody[2] = {me, nobody};
  c.rc(cop_mcast(v, 1, PVM_LONG, with_nobody, 2, 30000, COP_SEND, -1), PvmNoTask, "cop_mcast to an unknown tid");
  // A multicast receiver that is not among the recipients would wait for ever.
  if (g_size > 1) {
    int others[1] = {g_tids[size_t((g_inst + 1) % g_size)]};
    c.rc(cop_mcast(v, 1, PVM_LONG, others, 1, 30000, COP_RECV, -1), PvmNotInGroup, "cop_mcast receiver not a recipient");
  }
}

// Tags are GAS address ranges (ch. V): PVM-style consecutive tags with arrays overlap,
// and libcop must refuse the second at the call, not stall or mix the data.
void check_tag_overlap(Checker& c) {
  // PVM-style tags 10, 11, 12 (words 10.. were barriers' earlier, ended by barrier 14).
  constexpr int T = 10;
  int root = 0;
  long v[3];
  auto sums_ok = [&](int round) {
    if (g_inst != 0) return true;
    bool ok = true;
    for (int i = 0; i < 3; ++i) {
      long want = 0;
      for (int k = 0; k < g_size; ++k) want += long(value(k, i) + round);
      ok &= v[i] == want;
    }
    return ok;
  };
  for (int i = 0; i < 3; ++i) v[i] = long(value(g_inst, i));
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 3, T, kGroup, &root, 1), 0, "cop_reduce tag 10, 3 words");
  c.expect(sums_ok(0), "cop_reduce tag 10 sums");
  // Words 10..12 may still be in use (a non-root returns before the root has the sum).
  c.rc(cop_barrier(kGroup, g_size, T + 1), CopErrTagOverlap, "cop_barrier tag 11 inside a reduction's range");
  long b = 5;
  c.rc(cop_bcast(&b, 1, PVM_LONG, kGroup, T + 2, COP_SEND, -1), CopErrTagOverlap, "cop_bcast tag 12 inside it");
  c.rc(cop_reduce(COP_SUM, v, PVM_LONG, 3, T - 2, kGroup, &root, 1), CopErrTagOverlap, "cop_reduce tag 8, 3 words");
  c.rc(cop_bcast(v, 3, PVM_LONG, kGroup, T, COP_SEND, -1), CopErrTagOverlap, "cop_bcast on the reduction's tag");
  // (The same variable again is allowed: the loops scenario uses one tag 20 times.)
  // A disjoint tag is fine, and a full barrier ends the reduction: 11 is free after it.
  c.rc(cop_barrier(kGroup, g_size, T + 3), 0, "cop_barrier on a disjoint tag");
  c.rc(cop_barrier(kGroup, g_size, T + 1), 0, "cop_barrier tag 11 after a full barrier");
}

// The options, and cop_channel naming this node's channel; this task's TKNO.
int check_options(Checker& c, int node) {
  int chno = 0, tkno = 0;
  c.rc(cop_channel(&chno, &tkno), 0, "cop_channel");
  c.expect(chno == node, "cop_channel names this node's channel");
  c.rc(cop_getopt(CopStaticGroups), 0, "static groups off by default");
  c.rc(cop_setopt(12345, 1), PvmBadParam, "cop_setopt unknown option");
  c.rc(cop_setopt(CopMapping, 7), PvmBadParam, "cop_setopt bad mapping");
  c.rc(cop_getopt(CopMapping), g_mapping, "the selected mapping (table by default)");
  // One pvmd for every emulated node: every tid's H field is 1, so the direct
  // mapping cannot hold on the other channels, and the library says so and keeps the table.
  if (!g_cluster && node != 1) {
    c.rc(cop_setopt(CopMapping, CopMapDirect), CopErrMapping, "direct mapping where H field != channel");
    c.rc(cop_getopt(CopMapping), CopMapTable, "mapping unchanged after the refusal");
  }
  c.rc(cop_setopt(CopTimeout, 60000), 10000, "cop_setopt timeout returns the old value");
  return tkno;
}

// A task's address space starts cleared, even when the task number was another task's
// before (cop_mytid clears it; ch. V: the controller clears it when a task ends).
void check_fresh_space(Checker& c, int tkno) {
  std::vector<long long> space(256, -1);
  c.rc(cop_read(space.data(), 256, PVM_LONG, pvm_mytid(), 0, COP_NORMAL), 0, "cop_read own fresh TAS");
  int nonzero = 0;
  for (long long w : space) nonzero += w != 0;
  c.expect(nonzero == 0, "a fresh task address space (TKNO " + std::to_string(tkno) + ") reads zero: " +
                             std::to_string(nonzero) + " words hold an earlier task's data");
}

// Barrier: everyone's TAS word holds the round before anyone leaves it.
void check_barrier_rounds(Checker& c) {
  for (int round = 1; round <= 4; ++round) {
    long long r = round;
    c.rc(cop_write(&r, 1, PVM_LONG, pvm_mytid(), 0, COP_NORMAL), 0, "cop_write round");
    c.rc(cop_barrier(kGroup, g_size, 10), 0, "cop_barrier");
    for (int k = 0; k < g_size; ++k) {
      long long seen = 0;
      c.rc(cop_read(&seen, 1, PVM_LONG, g_tids[size_t(k)], 0, COP_NORMAL), 0, "cop_read round");
      c.expect(seen >= round, "task " + std::to_string(k) + " passed the barrier before writing round " +
                                  std::to_string(round));
    }
    c.rc(cop_barrier(kGroup, g_size, 10), 0, "cop_barrier (2)");
  }
}

// Reductions: every function of Table I on every type, two roots. Uses the GAS words
// from `tag` on; returns the last tag used.
int check_reductions(Checker& c, int tag) {
  const int funcs[] = {COP_SUM, COP_MAX, COP_MIN, COP_AND, COP_OR, COP_EXOR};
  for (int f : funcs) {
    check_reduce<int>(c, f, PVM_INT, "int", 3, tag += 8);
    check_reduce<unsigned>(c, f, PVM_UINT, "uint", 3, tag += 8);
    check_reduce<long>(c, f, PVM_LONG, "long", 3, tag += 8);
    if (f != COP_MAX && f != COP_MIN) check_reduce<unsigned long>(c, f, PVM_ULONG, "ulong", 3, tag += 8);
    if (f <= COP_MIN) {
      check_reduce<double>(c, f, PVM_DOUBLE, "double", 3, tag += 8);
      check_reduce<float>(c, f, PVM_FLOAT, "float", 3, tag += 8);
    }
  }
  double d = 1.0;
  int root = 0;
  c.rc(cop_reduce(COP_AND, &d, PVM_DOUBLE, 1, tag += 8, kGroup, &root, 1), CopErrBadType, "AND on doubles");
  // Longer than 1024 bytes: split into chunks, each its own channel access.
  check_reduce<long>(c, COP_SUM, PVM_LONG, "long[300]", 300, tag += 8);
  tag += 300;
  c.rc(cop_barrier(kGroup, g_size, 12), 0, "cop_barrier after reductions");
  return tag;
}

// Broadcast from each of two roots, from tag + 256 on; returns the last tag used.
// Receivers late on purpose: each asks only after the sender's cop_bcast has returned
// (a PVM message says so), so the data reaches it first and must wait in the
// out-of-context buffer.
int check_broadcasts(Checker& c, int tag) {
  constexpr int kSentTag = 4250;
  for (int src : {1, g_size - 1}) {
    std::vector<double> buf(200);
    const int btag = (tag += 256);
    if (g_inst == src) {
      for (int i = 0; i < 200; ++i) buf[size_t(i)] = src * 1000.0 + i;
      c.rc(cop_bcast(buf.data(), 200, PVM_DOUBLE, kGroup, btag, COP_SEND, -1), 0, "cop_bcast send");
      std::vector<int> receivers;
      for (int k = 0; k < g_size; ++k)
        if (k != src) receivers.push_back(g_tids[size_t(k)]);
      pvm_initsend(PvmDataDefault);
      pvm_mcast(receivers.data(), int(receivers.size()), kSentTag);
    } else {
      pvm_recv(g_tids[size_t(src)], kSentTag);
      const int from = src == 1 ? g_tids[size_t(src)] : -1;  // explicit sender, then any sender
      c.rc(cop_bcast(buf.data(), 200, PVM_DOUBLE, kGroup, btag, COP_RECV, from), 0, "cop_bcast recv");
      bool ok = true;
      for (int i = 0; i < 200; ++i) ok &= buf[size_t(i)] == src * 1000.0 + i;
      c.expect(ok, "cop_bcast data from instance " + std::to_string(src));
    }
  }
  c.rc(cop_barrier(kGroup, g_size, 13), 0, "cop_barrier after broadcasts");
  return tag;
}

// Multicast from instance 0 to the odd instances, on tag + 8.
void check_multicast(Checker& c, int tag) {
  std::vector<int> odd;
  for (int k = 1; k < g_size; k += 2) odd.push_back(g_tids[size_t(k)]);
  int ints[5];
  const int mtag = (tag += 8);
  if (g_inst == 0) {
    for (int i = 0; i < 5; ++i) ints[i] = 40 + i;
    c.rc(cop_mcast(ints, 5, PVM_INT, odd.data(), int(odd.size()), mtag, COP_SEND, -1), 0, "cop_mcast send");
  } else if (g_inst % 2 == 1) {
    c.rc(cop_mcast(ints, 5, PVM_INT, odd.data(), int(odd.size()), mtag, COP_RECV, g_tids[0]), 0, "cop_mcast recv");
    bool ok = true;
    for (int i = 0; i < 5; ++i) ok &= ints[i] == 40 + i;
    c.expect(ok, "cop_mcast data");
  }
  c.rc(cop_barrier(kGroup, g_size, 14), 0, "cop_barrier after multicast");
}

// Shared memory: write own TAS (urgent and normal), read a neighbour's,
// read-modify-write another's, protection of a foreign TAS.
void check_shared_memory(Checker& c) {
  std::vector<int> mine(20);
  for (int j = 0; j < 20; ++j) mine[size_t(j)] = g_inst * 100 + j;
  c.rc(cop_write(mine.data(), 20, PVM_INT, pvm_mytid(), 20, COP_URGENT), 0, "cop_write urgent");
  double dv[3] = {g_inst + 0.5, g_inst + 1.5, g_inst + 2.5};
  c.rc(cop_write(dv, 3, PVM_DOUBLE, pvm_mytid(), 40, COP_NORMAL), 0, "cop_write double");
  c.rc(cop_barrier(kGroup, g_size, 15), 0, "cop_barrier after writes");
  const int next = (g_inst + 1) % g_size;
  std::vector<int> theirs(20);
  c.rc(cop_read(theirs.data(), 20, PVM_INT, g_tids[size_t(next)], 20, COP_NORMAL), 0, "cop_read neighbour");
  bool same = true;
  for (int j = 0; j < 20; ++j) same &= theirs[size_t(j)] == next * 100 + j;
  c.expect(same, "cop_read gives the neighbour's data");
  double dr[3];
  c.rc(cop_read(dr, 3, PVM_DOUBLE, g_tids[size_t(next)], 40, COP_URGENT), 0, "cop_read double urgent");
  c.expect(dr[0] == next + 0.5 && dr[2] == next + 2.5, "cop_read doubles");
  int intruder = 5;
  c.rc(cop_write(&intruder, 1, PVM_INT, g_tids[size_t(next)], 20, COP_NORMAL), g_size > 1 ? CopErrProtection : 0,
       "cop_write into another task's address space");
  c.rc(cop_write(&intruder, 1, PVM_INT, pvm_mytid(), 250, COP_NORMAL) , 0, "cop_write at the last words");
  int too_far[10] = {};
  c.rc(cop_write(too_far, 10, PVM_INT, pvm_mytid(), 250, COP_NORMAL), CopErrAddressRange, "cop_write past the TAS");
  // The counters start at zero because task 0 says so (not because its space was fresh).
  if (g_inst == 0) {
    long long zero = 0;
    double dzero = 0;
    c.rc(cop_write(&zero, 1, PVM_LONG, pvm_mytid(), 60, COP_NORMAL), 0, "cop_write counter 0");
    c.rc(cop_write(&dzero, 1, PVM_DOUBLE, pvm_mytid(), 61, COP_NORMAL), 0, "cop_write double counter 0");
  }
  c.rc(cop_barrier(kGroup, g_size, 16), 0, "cop_barrier after reads");
  // Everyone adds its instance+1 to task 0's counter; RMW returns the old value.
  long long add = g_inst + 1;
  c.rc(cop_rmw(&add, 1, PVM_LONG, g_tids[0], 60, COP_NORMAL), 0, "cop_rmw long");
  double dadd = 0.25;
  c.rc(cop_rmw(&dadd, 1, PVM_DOUBLE, g_tids[0], 61, COP_URGENT), 0, "cop_rmw double (FP unit)");
  c.rc(cop_barrier(kGroup, g_size, 17), 0, "cop_barrier after rmw");
  long long total = 0;
  double dtotal = 0;
  c.rc(cop_read(&total, 1, PVM_LONG, g_tids[0], 60, COP_NORMAL), 0, "cop_read counter");
  c.rc(cop_read(&dtotal, 1, PVM_DOUBLE, g_tids[0], 61, COP_NORMAL), 0, "cop_read double counter");
  c.expect(total == (long long)g_size * (g_size + 1) / 2, "cop_rmw counter is the sum of all adds: " + std::to_string(total));
  c.expect(dtotal == 0.25 * g_size, "cop_rmw double counter: " + std::to_string(dtotal));
  c.rc(cop_barrier(kGroup, g_size, 18), 0, "cop_barrier before gather");
}

// Gather to instance 1, scatter from instance 2; a group this task is not in is refused.
void check_gather_scatter(Checker& c) {
  int part[3] = {g_inst, g_inst * 2, g_inst * 3};
  std::vector<int> all(size_t(3 * g_size), -1);
  const int groot = 1 % g_size, sroot = 2 % g_size;
  c.rc(cop_gather(all.data(), part, 3, PVM_INT, 100, kGroup, groot), 0, "cop_gather");
  if (g_inst == groot) {
    bool ok = true;
    for (int k = 0; k < g_size; ++k) ok &= all[size_t(3 * k)] == k && all[size_t(3 * k + 2)] == 3 * k;
    c.expect(ok, "cop_gather data");
  }
  std::vector<int> src(size_t(2 * g_size));
  for (int i = 0; i < 2 * g_size; ++i) src[size_t(i)] = 500 + i;
  int got[2] = {0, 0};
  c.rc(cop_scatter(got, src.data(), 2, PVM_INT, 150, kGroup, sroot), 0, "cop_scatter");
  c.expect(got[0] == 500 + 2 * g_inst && got[1] == 501 + 2 * g_inst, "cop_scatter slice");

  // Not a member: refused.
  char other[] = "copcheck-nobody";
  c.expect(cop_barrier(other, 1, 19) < 0, "cop_barrier on a group this task is not in fails");
}

void run_checks(Checker& c, int node) {
  const int tkno = check_options(c, node);
  check_fresh_space(c, tkno);
  // Before anything in the group: every refusal comes at once, so no task waits on another.
  check_arguments(c);
  check_barrier_rounds(c);
  // Static groups: the tids are asked once.
  c.rc(cop_setopt(CopStaticGroups, 1), 0, "cop_setopt static groups");
  c.rc(cop_barrier(kGroup, g_size, 11), 0, "cop_barrier, static group");
  const int tag = check_broadcasts(c, check_reductions(c, 1000));
  check_multicast(c, tag);
  check_tag_overlap(c);
  check_shared_memory(c);
  check_gather_scatter(c);
}

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
//           the killed one's place;
//   part 3: the last task to enter a barrier (doing the channel part for its host) is
//           killed; its waiting partner gets CopErrPartnerDied.
constexpr int kHelloTag = 4243, kGoTag = 4244, kEnterTag = 4245;
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
        for (int i = 0; i < kKillCount; ++i) ok &= buf[i] == 1000.0 + tag + i;
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
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const std::string w = wchan(pid);
    for (const char* what : where)
      if (w.find(what) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(seconds)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
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
    const auto t0 = std::chrono::steady_clock::now();
    while (pvm_gsize(group) != size) {
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20)) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  // The report of `tid`: its return code must be `want` (and its data right).
  void expect(int tid, int want, const std::string& what) {
    timeval t{40, 0};  // above the task's own bound (CopTimeout, 10 s)
    int rc = 1, ok = 0;
    if (pvm_trecv(tid, kReportTag, &t) <= 0) {
      failures += "  FAIL " + what + ": no report within 40 s (waits for ever)\n";
      return;
    }
    pvm_upkint(&rc, 1, 1);
    pvm_upkint(&ok, 1, 1);
    std::printf("%s: returned %d (%s)%s\n", what.c_str(), rc, cop_strerror(rc), ok ? "" : ", wrong data");
    if (rc != want || !ok)
      failures += "  FAIL " + what + ": returned " + std::to_string(rc) + (ok ? "" : " with wrong data") +
                  ", expected " + std::to_string(want) + "\n";
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
    int a_pid = -1, b_pid = -1;
  };
  bool start_trio(const std::string& part, char* g, int tag, const char* first_role, const char* node2_role,
                  bool node2_receive_from_first, Trio& t) {
    t.first = spawn(1, first_role, g, tag, 0);
    const int src = node2_receive_from_first ? t.first : 0;
    t.a = spawn(2, node2_role, g, tag, src);
    t.b = spawn(2, node2_role, g, tag, src);
    const int first_pid = hello(t.first);
    t.a_pid = hello(t.a);
    t.b_pid = hello(t.b);
    return step(first_pid > 0 && t.a_pid > 0 && t.b_pid > 0 && wait_size(g, 3), part + ": the tasks did not start");
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
    if (!step(hello(c) > 0, "part 1: the new receiver did not start")) return;
    tell(c, kEnterTag);
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
    expect(t.b, 0, "part 2: the receiver that waited beside the killed one");
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
};

int kill_parent(const std::string& access, const std::string& stack) {
  bool failed = false;
  {
    KillParent k{access, stack, "", {}};
    k.part1();
    k.part2();
    k.part3();
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
constexpr const char* kCopdMayBeKilled = "copd may be killed now";

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

int child(int argc, char** argv) {
  const int node = std::atoi(argv[1]);
  // "-": a cluster host, whose copdrv sits at the task's default driver directory.
  g_cluster = std::strcmp(argv[3], "-") == 0;
  if (!g_cluster) {
    const std::string driver = std::string(argv[3]) + "/node" + std::to_string(node);
    setenv("COP_DRIVER", driver.c_str(), 1);
  }
  setenv("COP_ACCESS", argv[2], 1);
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
      c.expect(chno == ((tid >> 18) & 0xfff), "direct mapping: channel = the tid's H field");
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
    } else {
      run_checks(c, node);
      pvm_barrier(kGroup, g_size);
    }
    pvm_lvgroup(kGroup);
  }
  pvm_initsend(PvmDataDefault);
  int n = c.checks, bad = c.failures.empty() ? 0 : 1;
  pvm_pkint(&n, 1, 1);
  pvm_pkint(&bad, 1, 1);
  return cop::testing::report_to_parent(kReportTag, cop::testing::task_heading(g_inst, node) + " " +
                                                        std::to_string(c.checks) + " checks\n" + c.failures);
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
      (sc != "checks" && sc != "kill" && sc != "collectives" && sc != "loops" && sc != "killrecv")) {
    std::fprintf(stderr,
                 "usage: cop_libcop_check --stack DIR | --hosts H1,H2,... [--nodes N] [--tasks T] [--access direct|normal]\n"
                 "       [--mapping table|direct|direct-setopt] [--scenario checks|kill|collectives|loops|killrecv] [--rounds R] [--static-groups 0|1]\n"
                 "       [--poll-us US]\n");
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
