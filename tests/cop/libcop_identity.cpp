// cop_libcop_check's scenario identity (issue 34, cop.h "Operation identity"): every
// answer belongs to its call. One task a node (no host area between a sender and its
// receivers): a broadcast of PVM_LONG received as PVM_DOUBLE, a receive asking fewer
// elements than were sent, a receiver that timed out once, and a task one call ahead
// of the others on a tag, which gets errors until every member calls cop_resync, and a
// broadcast after a member left (view_checks: not the earlier view's round). A value
// that is not the call's own, with rc 0, is a failure.
#include "libcop_check.h"

#ifndef CopErrMismatch
#define CopErrMismatch -137
#endif

namespace libcop_check {
namespace {

constexpr int kSender = 0;

int sender_tid() { return g_tids[size_t(kSender)]; }

// Instance 0 sends `n` LONGs of round `r`; the others receive `want` elements as `type`.
// Returns the receiver's rc (the sender's is checked here).
int cast_round(Checker& c, int tag, int r, int n, int want, int type) {
  std::vector<long> lv(size_t(std::max(n, want)));
  std::vector<double> dv(lv.size());
  if (g_inst == kSender) {
    for (int i = 0; i < n; ++i) lv[size_t(i)] = 1000L * r + i;
    c.rc(cop_bcast(lv.data(), n, PVM_LONG, kGroup, tag, COP_SEND, -1), 0,
         "identity: cop_bcast send, round " + std::to_string(r));
    return 0;
  }
  void* buf = type == PVM_LONG ? static_cast<void*>(lv.data()) : static_cast<void*>(dv.data());
  const int rc = cop_bcast(buf, want, type, kGroup, tag, COP_RECV, sender_tid());
  if (rc == 0) {
    bool own = type == PVM_LONG && want == n;
    for (int i = 0; i < want && own; ++i) own = lv[size_t(i)] == 1000L * r + i;
    c.expect(own, "identity: round " + std::to_string(r) + " received with rc 0 must be its own " +
                      std::to_string(n) + " LONGs");
  }
  return rc;
}

void cast_checks(Checker& c) {
  const bool receiver = g_inst != kSender;
  // PVM_LONG sent, PVM_DOUBLE received on another host: an error, not the bits as doubles.
  int rc = cast_round(c, 500, 1, 4, 4, PVM_DOUBLE);
  if (receiver) c.rc(rc, CopErrMismatch, "identity: 4 LONGs received as DOUBLE");
  rc = cast_round(c, 500, 2, 4, 4, PVM_LONG);
  if (receiver) c.rc(rc, 0, "identity: the next round as LONG gets its own values");
  // A short receive (2 of the 4 sent) consumes the operation: the next receive of 2 gets
  // its own round, not the 2 words left over.
  rc = cast_round(c, 520, 1, 4, 2, PVM_LONG);
  if (receiver) c.rc(rc, CopErrMismatch, "identity: 2 LONGs received of the 4 sent");
  rc = cast_round(c, 520, 2, 2, 2, PVM_LONG);
  if (receiver) c.rc(rc, 0, "identity: the receive after a short one gets its own round");
  // A receiver that timed out once (its sender came late) is not a round behind after it.
  const int old = cop_setopt(CopTimeout, 300);
  long none[2];
  if (receiver) c.rc(cop_bcast(none, 2, PVM_LONG, kGroup, 540, COP_RECV, sender_tid()), CopErrTimeout,
                     "identity: a receive before its sender sends");
  cop_setopt(CopTimeout, old);
  pvm_barrier(kGroup, g_size);  // every receiver has given up on round 1
  if (!receiver) cast_round(c, 540, 1, 2, 2, PVM_LONG);
  rc = cast_round(c, 540, 2, 2, 2, PVM_LONG);
  if (receiver) c.rc(rc, 0, "identity: the receive after a timed-out one gets round 2, not the late round 1");
}

// A sum to every member (all roots) at `tag`. Each task adds 1000 x its own count of calls
// made here to its value: a sum returned with rc 0 must be of every member's call of the
// same index (one round), never a mix.
int g_calls = 0;
int all_reduce(Checker& c, int tag, const std::string& what) {
  const int call = g_calls++;
  long v[2] = {value(g_inst, 0) + 1000L * call, value(g_inst, 1) + 1000L * call};
  std::vector<int> roots;
  for (int k = 0; k < g_size; ++k) roots.push_back(k);
  const int rc = cop_reduce(COP_SUM, v, PVM_LONG, 2, tag, kGroup, roots.data(), g_size);
  if (rc == 0) {
    bool right = true;
    for (int i = 0; i < 2; ++i) {
      long want = 1000L * call * g_size;
      for (int k = 0; k < g_size; ++k) want += value(k, i);
      right &= v[i] == want;
    }
    c.expect(right, "identity: " + what + ": rc 0 with a sum that is not of one round");
  }
  return rc;
}

void resync_checks(Checker& c) {
  const int old = cop_setopt(CopTimeout, 2000);
  c.rc(all_reduce(c, 560, "in step"), 0, "identity: a sum in step");
  // Instance `ahead` makes one call on the tag more than the others (a sum they do not
  // join: it times out), as a loop that goes on after errors may: it is a call ahead.
  const int ahead = 1 % g_size;
  if (g_inst == ahead) {
    cop_setopt(CopTimeout, 300);
    long extra[2] = {-1, -1};
    std::vector<int> roots;
    for (int k = 0; k < g_size; ++k) roots.push_back(k);
    c.rc(cop_reduce(COP_SUM, extra, PVM_LONG, 2, 560, kGroup, roots.data(), g_size), CopErrTimeout,
         "identity: an extra sum on the tag");
    cop_setopt(CopTimeout, 2000);
  }
  // The next channel call (a barrier on another tag, in step there) settles what the failed
  // calls left, before anyone's next call on the tag. Every member's failed call has returned
  // before anyone's barrier begins (the PVM barrier first): a failed call may take a whole
  // CopTimeout (an out-of-step member whose sum came after the others' had failed and been
  // voided waits alone until it times out, cop.h "Operation identity"), and partners already
  // in the barrier wait CopTimeout too, so without it the barrier raced that timeout
  // (CopErrTimeout at whichever timer ran out first, about 1 run in 15).
  auto settle_all = [&] {
    pvm_barrier(kGroup, g_size);
    c.rc(cop_barrier(kGroup, g_size, 580), 0, "identity: a barrier on another tag (in step there)");
    pvm_barrier(kGroup, g_size);
  };
  settle_all();
  // Every member calls, but `ahead` is a call ahead: errors at every member, never a value:
  // a refused contribution (CopErrMismatch), an operation voided by a member's settling
  // (CopErrVoided), or a call that came after the others' had ended (CopErrTimeout).
  for (int r = 0; r < 3; ++r) {
    const int rc = all_reduce(c, 560, "out of step, round " + std::to_string(r));
    c.expect(rc == CopErrMismatch || rc == CopErrVoided || rc == CopErrTimeout,
             "identity: out of step, round " + std::to_string(r) + ": got rc " + std::to_string(rc));
    settle_all();
  }
  c.rc(cop_resync(kGroup, 560), 0, "identity: cop_resync");
  c.rc(all_reduce(c, 560, "after cop_resync"), 0, "identity: a sum after cop_resync");
  c.rc(all_reduce(c, 560, "after cop_resync, again"), 0, "identity: a second sum after cop_resync");
  cop_setopt(CopTimeout, old);
}

// A broadcast after a member left is not the earlier view's round of the same number.
// Generations restart at 0 with each view of a group's members (cop.h "Operation
// identity"), so the identity must name the view: when it named the group only, round 0
// after the leave had round 0 before it's identity, and a receiver whose own receive of
// that earlier round had timed out took its late words, with rc 0 (cop_difftest seed 1:
// a member killed, then a receive on the tag got the broadcast of 19 steps before).
// Views asked of the group server on every call (CopGroupCache 0): each call sees the
// leave at once. Instance 2 leaves; instance 3 is the receiver that timed out.
void view_checks(Checker& c) {
  if (g_size < 4) return;
  char group[sizeof kGroup + 8];
  std::snprintf(group, sizeof group, "%s-view", kGroup);
  const int old_cache = cop_setopt(CopGroupCache, 0), old_timeout = cop_setopt(CopTimeout, 2000);
  const int inst = pvm_joingroup(group);
  pvm_barrier(group, g_size);
  const int sender = pvm_gettid(group, 0);
  constexpr int kTag = 600;
  auto round = [&](long base, const std::string& what) {
    long v[2] = {base, base + 1};
    if (inst == 0) return c.rc(cop_bcast(v, 2, PVM_LONG, group, kTag, COP_SEND, -1), 0, what + ": send");
    v[0] = v[1] = -1;
    const int rc = cop_bcast(v, 2, PVM_LONG, group, kTag, COP_RECV, sender);
    c.rc(rc, 0, what + ": receive");
    if (rc == 0) c.expect(v[0] == base && v[1] == base + 1, what + ": received with rc 0 must be its own round's (" +
                                                                std::to_string(base) + "), got " + std::to_string(v[0]));
  };
  if (inst == 3) {  // round 0 of the first view: this receiver gives up before the sender sends
    cop_setopt(CopTimeout, 300);
    long none[2];
    c.rc(cop_bcast(none, 2, PVM_LONG, group, kTag, COP_RECV, sender), CopErrTimeout,
         "views: a receive before its sender sends");
    cop_setopt(CopTimeout, 2000);
  }
  pvm_barrier(group, g_size);
  if (inst != 3) round(100, "views: round 0 of the first view");
  pvm_barrier(group, g_size);  // round 0's words are on their way to instance 3's node
  if (inst == 2) pvm_lvgroup(group);
  if (inst != 2) {
    pvm_barrier(group, g_size - 1);
    round(200, "views: round 0 after a member left");
    // Every receive done before anyone leaves: a receiver asks the group server for the
    // view on its call (CopGroupCache 0), and a sender that had left already would not be
    // in it (-21), or would make it another view than the one it sent in (a timeout).
    pvm_barrier(group, g_size - 1);
    pvm_lvgroup(group);
  }
  cop_setopt(CopGroupCache, old_cache);
  cop_setopt(CopTimeout, old_timeout);
}

}  // namespace

void run_identity(Checker& c) {
  cast_checks(c);
  pvm_barrier(kGroup, g_size);
  resync_checks(c);
  pvm_barrier(kGroup, g_size);
  view_checks(c);
}

}  // namespace libcop_check
