// cop_libcop_check, scenario checks: every libcop call against a local computation,
// its arguments refused with the documented codes (cop.h), tags as GAS ranges.
#include "libcop_check.h"

namespace libcop_check {
namespace {

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
  c.expect(chno == (node - 1) % g_per_controller + 1, "cop_channel names this node's channel");
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

// Arrays of odd sizes (one element, one short of a burst of 128, a burst, one over, and
// more than a link frame's 2000 elements where the space allows), int and double, each
// call checked against a local computation: the compact runs a burst travels as (cop/link.h)
// end and start at every element count. cop_read/cop_write/cop_gather use a task address
// space (256 words: 256 elements at most), cop_scatter count x members of it.
template <typename T>
void check_sizes_of(Checker& c, int datatype, const char* tname) {
  constexpr int kTag = 1024, kBarrierTag = 4000;  // GAS words 1024 .. 3072 of the group's window
  auto named = [&](const char* call, int n) { return std::string(call) + " " + tname + "[" + std::to_string(n) + "]"; };
  auto at = [](int inst, int i) { return T(value(inst, i)); };
  for (int n : {1, 127, 128, 129, 2049}) {
    std::vector<T> data(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) data[size_t(i)] = at(g_inst, i);
    int roots[2] = {0, g_size - 1};
    const int rc = cop_reduce(COP_SUM, data.data(), datatype, n, kTag, kGroup, roots, 2);
    c.rc(rc, 0, named("cop_reduce", n));
    if (rc == 0 && (g_inst == 0 || g_inst == g_size - 1)) {
      bool ok = true;
      for (int i = 0; i < n && ok; ++i) {
        T want = 0;
        for (int k = 0; k < g_size; ++k) want = T(want + at(k, i));
        ok = data[size_t(i)] == want;
      }
      c.expect(ok, named("cop_reduce sum", n));
    }
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_reduce", n));
    const int src = n % g_size;
    for (int i = 0; i < n; ++i) data[size_t(i)] = g_inst == src ? at(src, i) + T(n) : T(-1);
    const int brc = g_inst == src ? cop_bcast(data.data(), n, datatype, kGroup, kTag, COP_SEND, -1)
                                  : cop_bcast(data.data(), n, datatype, kGroup, kTag, COP_RECV, g_tids[size_t(src)]);
    c.rc(brc, 0, named("cop_bcast", n));
    bool same = true;
    for (int i = 0; i < n && same; ++i) same = data[size_t(i)] == at(src, i) + T(n);
    c.expect(brc != 0 || same, named("cop_bcast data", n));
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_bcast", n));
  }
  const int next = (g_inst + 1) % g_size;
  for (int n : {1, 127, 128, 129, 256}) {
    std::vector<T> mine(static_cast<size_t>(n)), theirs(static_cast<size_t>(n), T(-1));
    for (int i = 0; i < n; ++i) mine[size_t(i)] = at(g_inst, i) + T(n);
    c.rc(cop_write(mine.data(), n, datatype, pvm_mytid(), 0, n % 2 ? COP_URGENT : COP_NORMAL), 0, named("cop_write", n));
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_write", n));
    c.rc(cop_read(theirs.data(), n, datatype, g_tids[size_t(next)], 0, n % 2 ? COP_NORMAL : COP_URGENT), 0,
         named("cop_read", n));
    bool same = true;
    for (int i = 0; i < n && same; ++i) same = theirs[size_t(i)] == at(next, i) + T(n);
    c.expect(same, named("cop_read data", n));
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_read", n));
    std::vector<T> all(size_t(n) * size_t(g_size), T(-1));
    const int groot = n % g_size;
    c.rc(cop_gather(all.data(), mine.data(), n, datatype, 0, kGroup, groot), 0, named("cop_gather", n));
    if (g_inst == groot) {
      bool ok = true;
      for (int k = 0; k < g_size && ok; ++k)
        for (int i = 0; i < n && ok; ++i) ok = all[size_t(k) * size_t(n) + size_t(i)] == at(k, i) + T(n);
      c.expect(ok, named("cop_gather data", n));
    }
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_gather", n));
  }
  for (int n : {1, 256 / g_size - 1, 256 / g_size}) {
    if (n < 1) continue;
    const int sroot = (n + 1) % g_size;
    std::vector<T> src(size_t(n) * size_t(g_size)), got(size_t(n), T(-1));
    for (size_t i = 0; i < src.size(); ++i) src[i] = at(sroot, int(i)) + T(n);
    c.rc(cop_scatter(got.data(), src.data(), n, datatype, 0, kGroup, sroot), 0, named("cop_scatter", n));
    bool ok = true;
    for (int i = 0; i < n && ok; ++i) ok = got[size_t(i)] == at(sroot, g_inst * n + i) + T(n);
    c.expect(ok, named("cop_scatter slice", n));
    c.rc(cop_barrier(kGroup, g_size, kBarrierTag), 0, named("cop_barrier after cop_scatter", n));
  }
}

}  // namespace

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
  check_sizes_of<int>(c, PVM_INT, "int");
  check_sizes_of<double>(c, PVM_DOUBLE, "double");
}

}  // namespace libcop_check
