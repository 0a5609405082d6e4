// cop_barrier, cop_reduce, cop_gather, cop_scatter (seed 000 ch. V): the tasks
// of one host meet in the host area (host.h); the last to arrive does the
// channel part (channel.cpp) for all of them.
#include <pvm3.h>

#include <algorithm>

#include "lib/elements.h"
#include "lib/library.h"

namespace cop::lib {
namespace {

// How this task and its host take part in a reduction with roots `roots`.
struct ReduceRoles {
  uint32_t local = 0;        // members on this channel
  uint32_t local_roots = 0;  // roots on this channel
  bool member = false, me_root = false;
  uint64_t bm = 0;  // the roots' channels (on this controller): the broadcast mask of the result
  uint64_t l2_bm = 0;  // the roots' controllers
};

int reduce_roles(const Group& g, const int* roots, int rootcount, ReduceRoles& r) {
  for (int i = 0; i < rootcount; ++i) {
    const Member* root = by_inst(g, roots[i]);
    if (!root) return PvmNoInst;
    for (int j = 0; j < i; ++j)
      if (roots[j] == roots[i]) return PvmBadParam;  // a root named twice
    r.bm |= local_channel_bit(root->place);
    r.l2_bm |= controller_bit(root->place);
    if (on_this_host(root->place)) r.local_roots++;
    r.me_root |= root->tid == lib().tid;
  }
  for (const Member& m : g.members) {
    if (on_this_host(m.place)) r.local++;
    r.member |= m.tid == lib().tid;
  }
  return r.member ? 0 : PvmNotInGroup;
}

// One chunk of a reduction: folded with the host's other members, the host's
// partial result to the controller, the result back to the roots.
int reduce_chunk(wire::Opcode op, void* data, int datatype, size_t at, size_t n, int msgtag, const char* group,
                 const Group& g, const ReduceRoles& r) {
  Library& l = lib();
  std::vector<uint64_t> words(n);
  to_words(data, at, datatype, words);
  // The key names the opcode (function and datatype) and the chunk's length: local tasks
  // that disagree on them never meet in one slot (they time out rather than fold a short
  // array into a long one and hand the root a result with rc 0).
  const std::string what = "reduce/" + std::to_string(int(op)) + "/" + std::to_string(n);
  const uint64_t key = l.host->next_key(what.c_str(), group, uint32_t(msgtag), uint32_t(at), l.op_id);
  const uint32_t tag = uint32_t(msgtag) + uint32_t(at);
  // Readers: the local roots, except the last to arrive if it is one (it has the result itself).
  const uint32_t readers = r.local_roots - (r.me_root ? 1 : 0);
  expect_local_members(g);
  const int rc = l.host->gather(
      key, r.local, readers, r.me_root, words,
      [&](std::span<uint64_t> slot, bool first) {
        for (size_t i = 0; i < n; ++i) slot[i] = first ? words[i] : wire::combine(op, slot[i], words[i]);
      },
      [&](std::span<uint64_t> folded) {
        if (all_on_this_host(g)) return 0;  // every member is local: the partial result is the result
        const uint64_t l2 = level2(g.l2_mask);
        return channel_reduce(op, tag, folded, g.tc_mask, r.bm, r.local_roots > 0, l2, l2 ? r.l2_bm : 0);
      });
  if (rc == CopErrTaskEnded && !all_on_this_host(g)) return void_for_ended_member(rc, int(tag), n);
  if (rc < 0) return fail_and_notify(rc);
  if (r.me_root)
    from_words(data, at, datatype, words);
  return 0;
}

// A member alone on its host: no host area to meet in, the whole array goes to
// the channel as bursts packed into frames (channel.cpp).
int reduce_alone(wire::Opcode op, void* data, int datatype, int count, int msgtag, const Group& g,
                 const ReduceRoles& r) {
  std::vector<uint64_t> words(static_cast<size_t>(count));
  to_words(data, 0, datatype, words);
  if (count > 0 && !all_on_this_host(g)) {
    const uint64_t l2 = level2(g.l2_mask);
    if (int rc = channel_reduce(op, uint32_t(msgtag), words, g.tc_mask, r.bm, r.local_roots > 0, l2, l2 ? r.l2_bm : 0);
        rc < 0)
      return rc;
  }
  if (r.me_root)
    from_words(data, 0, datatype, words);
  return 0;
}

// cop_gather's and cop_scatter's arguments checked (`slice`: this member's part, sent
// or received), then their group and root (instance `rootginst`).
int rooted_group(const char* group, const void* slice, int count, int datatype, int msgtag, int rootginst, Group& g,
                 const Member*& root) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || count < 0 || (count > 0 && !slice) || msgtag < 0 || !known_type(datatype)) return PvmBadParam;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  root = by_inst(g, rootginst);
  return root ? 0 : PvmNoInst;
}

// cop_gather's and cop_scatter's first synchronisation, which also checks that every
// member names the same count, datatype and root: a 2-word MAX reduction of (d, -d)
// to every member on the GAS words msgtag+1 and msgtag+2 of the group's window, d this
// task's descriptor of its arguments (-1 when it failed on its own: `local`, its code).
// Every member gets max(d) and -min(d): they differ when any two members disagree, and
// then every member returns CopErrMismatch (a member that failed on its own returns its
// own code), before anything is read. The result comes only after every member has
// contributed, so it is the call's barrier too.
int agree(const char* call, char* group, const Group& g, int msgtag, int count, int datatype, int rootginst,
          int local) {
  const long long d = local < 0 ? -1
                                : (static_cast<long long>(count) << 32) | (static_cast<long long>(datatype & 0xFF) << 24) |
                                      (rootginst & 0xFFFFFF);
  long long v[2] = {d, -d};
  std::vector<int> roots;
  for (const Member& m : g.members) roots.push_back(m.inst);
  if (int rc = cop_reduce(COP_MAX, v, PVM_LONG, 2, msgtag + 1, group, roots.data(), int(roots.size())); rc < 0)
    return rc;
  if (local < 0) return local;
  if (v[0] != d || -v[1] != d) {
    report(call, "the members disagree on count, datatype or root (this task: count " + std::to_string(count) +
                     ", datatype " + std::to_string(datatype) + ", root " + std::to_string(rootginst) + ")");
    return CopErrMismatch;
  }
  return 0;
}

}  // namespace
}  // namespace cop::lib

using namespace cop::lib;

extern "C" {

int cop_barrier(char* group, int count, int msgtag) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || msgtag < 0 || count == 0 || count < -1) return PvmBadParam;
  Library& l = lib();
  Group g;
  if (int rc = group_members(group, count, g); rc < 0) return rc;
  uint32_t local = 0;
  bool member = false;
  for (const Member& m : g.members) {
    if (on_this_host(m.place)) local++;
    member |= m.tid == l.tid;
  }
  if (!member) return PvmNotInGroup;
  uint32_t addr = 0;  // the tag's word in the group's window (cop.h "Tags")
  if (int rc = group_address("cop_barrier", group, msgtag, 1, Use::barrier, l.tags.scope(group), addr); rc < 0)
    return rc;
  const CallIdentity identity(member_scope(group, g), addr, 'b', 0, 0, g.members.size());
  // The key names the members taking part: tasks counting different members never meet.
  const std::string what = "barrier/" + std::to_string(g.members.size());
  const uint64_t key = l.host->next_key(what.c_str(), group, uint32_t(msgtag), 0, identity.id());
  std::vector<uint64_t> none;
  const bool all_local = all_on_this_host(g);
  expect_local_members(g);
  // fail_and_notify(): a task that waited in the host area learns of a link failure here.
  const int rc = fail_and_notify(l.host->gather(
      key, local, local - 1, true, none, [](std::span<uint64_t>, bool) {},
      [&](std::span<uint64_t>) { return all_local ? 0 : channel_barrier(addr, g.tc_mask, level2(g.l2_mask)); }));
  if (rc < 0) unsettle(int(addr), 1);
  if (rc == CopErrTaskEnded && !all_local) void_for_ended_member(rc, int(addr), 1);
  if (rc == 0 && int(g.members.size()) >= g.total) {
    // Every member has made all its earlier calls: their GAS ranges are free again.
    std::vector<int> tids;
    for (const Member& m : g.members) tids.push_back(m.tid);
    l.tags.fence(group, tids);
  }
  return rc;
}

int cop_reduce(int func, void* data, int datatype, int count, int msgtag, char* group, int* roots, int rootcount) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || count < 0 || (count > 0 && !data) || msgtag < 0 || rootcount < 1 || !roots || func < COP_SUM ||
      func > COP_EXOR || !known_type(datatype))
    return PvmBadParam;
  const auto op = reduce_opcode(func, datatype);
  if (!op) return CopErrBadType;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  ReduceRoles roles;
  if (int rc = reduce_roles(g, roots, rootcount, roles); rc < 0) return rc;
  uint32_t addr = 0;  // the tag's word in the group's window (cop.h "Tags")
  if (int rc = group_address("cop_reduce", group, msgtag, size_t(count), Use::reduce, lib().tags.scope(group), addr);
      rc < 0)
    return rc;
  const CallIdentity identity(member_scope(group, g), addr, 'r', uint32_t(*op), datatype, size_t(count));
  int rc = 0;
  if (roles.local <= 1) {
    rc = reduce_alone(*op, data, datatype, count, int(addr), g, roles);
  } else {
    for (size_t at = 0; at < size_t(count) && rc == 0; at += kChunk)
      rc = reduce_chunk(*op, data, datatype, at, std::min(kChunk, size_t(count) - at), int(addr), group, g, roles);
  }
  if (rc < 0) unsettle(int(addr), size_t(count));
  return rc < 0 ? rc : 0;
}

int cop_gather(void* result, void* data, int count, int datatype, int msgtag, char* group, int rootginst) {
  Group g;
  const Member* root = nullptr;
  // A root outside the group is this task's own error: it still takes part in the check,
  // so the others fail with it instead of waiting for it.
  int local = rooted_group(group, data, count, datatype, msgtag, rootginst, g, root);
  if (local < 0 && local != PvmNoInst) return local;
  const int size = int(g.members.size());
  const bool me_root = root && root->tid == lib().tid;
  if (local == 0 && me_root && !result && count > 0) local = PvmBadParam;
  // Each member's slice into its own task address space; the root reads them all once
  // every member has written its own and all agree on the arguments (the check's result).
  if (local == 0) local = cop_write(data, count, datatype, lib().tid, msgtag, COP_NORMAL);
  if (int rc = agree("cop_gather", group, g, msgtag, count, datatype, rootginst, local); rc < 0) return rc;
  if (me_root) {
    const size_t slice_bytes = size_t(count) * element_size(datatype);
    for (int i = 0; i < size; ++i)
      if (int rc = cop_read(static_cast<uint8_t*>(result) + size_t(i) * slice_bytes, count, datatype,
                            g.members[size_t(i)].tid, msgtag, COP_NORMAL);
          rc < 0)
        return rc;
  }
  // Nobody writes the slices again before the root has them.
  return cop_barrier(group, size, msgtag);
}

int cop_scatter(void* result, void* data, int count, int datatype, int msgtag, char* group, int rootginst) {
  Group g;
  const Member* root_member = nullptr;
  int local = rooted_group(group, result, count, datatype, msgtag, rootginst, g, root_member);
  if (local < 0 && local != PvmNoInst) return local;
  const int size = int(g.members.size());
  int me = -1;
  for (int i = 0; i < size; ++i)
    if (g.members[size_t(i)].tid == lib().tid) me = i;
  if (me < 0) return PvmNotInGroup;
  if (local == 0 && uint64_t(msgtag) + uint64_t(count) * uint64_t(size) > info().tas_words) {
    report("cop_scatter", "tag + count x group size beyond the root's task address space");
    local = CopErrAddressRange;
  }
  // The root writes every slice into its own task address space; each member reads its
  // own once the root has written and all agree on the arguments (the check's result).
  if (local == 0 && root_member->tid == lib().tid)
    local = !data && count > 0 ? PvmBadParam : cop_write(data, count * size, datatype, lib().tid, msgtag, COP_NORMAL);
  if (int rc = agree("cop_scatter", group, g, msgtag, count, datatype, rootginst, local); rc < 0) return rc;
  if (int rc = cop_read(result, count, datatype, root_member->tid, msgtag + me * count, COP_NORMAL); rc < 0) return rc;
  return cop_barrier(group, size, msgtag);
}

int cop_resync(char* group, int msgtag) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || msgtag < 0) return PvmBadParam;
  Library& l = lib();
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  uint32_t window = 0;
  if (int rc = group_window("cop_resync", group, window); rc < 0) return rc;
  if (uint32_t(msgtag) >= window_words()) return CopErrAddressRange;
  const uint32_t addr = window * window_words() + uint32_t(msgtag);
  // A MAX reduction to every member of the members' generations, under an identity
  // that does not depend on them; then all continue one past the largest.
  const std::string scope = member_scope(group, g);
  long long v = generation(scope, addr);
  std::vector<int> roots;
  for (const Member& m : g.members) roots.push_back(m.inst);
  l.forced_op_id = resync_identity(scope, addr);
  const int rc = cop_reduce(COP_MAX, &v, PVM_LONG, 1, msgtag, group, roots.data(), int(roots.size()));
  l.forced_op_id = 0;
  if (rc < 0) return rc;
  generation(scope, addr) = uint32_t(v) + 1;
  return 0;
}

}  // extern "C"
