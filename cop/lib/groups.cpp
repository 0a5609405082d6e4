// libcop's group views (CopGroupCache) and PVM's group calls as libcop's: the members
// of a group, asked from pvmgs or kept, and the change notices that drop a kept view.
#include "lib/library.h"

#include <dlfcn.h>
#include <poll.h>
#include <pvm3.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace cop::lib {

namespace {

// Group views (CopGroupCache, the default). Asking the group server pvmgs for a group on
// every call (pvm_gsize, then pvm_gettid per instance: 1 + N round trips through the
// pvmd, about 0.9 ms at 4 members and 3 ms at 8 on one host) made libcop's default 7-20x
// slower than CopStaticGroups, whose group is asked once (seed 000 ch. V: "the libcop
// library will contact the PVM group server only in the first call"). A group changes
// only by pvm_joingroup, pvm_lvgroup or a member's exit, so a task keeps the view of each
// group it is a member of and drops it when one of these reaches it, with no pvmgs round
// trip on the common path:
//   - pvm_joingroup and pvm_lvgroup are libcop's (the end of this file: libcop is linked
//     into the program, so its definitions take the place of libgpvm3.so's, and
//     dlsym(RTLD_NEXT) finds the real ones). After the real call returns, the task sends
//     a change notice naming the group to the group's members as pvmgs lists them then
//     (pvm_bcast). pvmgs orders joins, leaves and lists, so a member whose view was asked
//     before the change is on that list (it had joined before the change), and one whose
//     view was asked after it has the change in its view;
//   - a member's exit: a PvmTaskExit notify (pvm_notify) on every member of a kept view;
//     the exited tid is left out of views asked again (pvmgs may list it a while longer);
//   - a PVM message handler (pvm_addmhf) applies each notice in whichever PVM call reads
//     it; every group call first reads PVM's sockets if anything waits there (one poll(),
//     no round trip), so every notice that has arrived has dropped the views it names.
// The notices travel in a PVM context of libcop's own, so a program's pvm_recv(-1, -1)
// never takes them. PVM delivers the messages of one sender to one receiver in order: a
// member that learns of a change from the changed task, or through the group server
// (pvm_barrier), finds the notice there first. What this cannot
// see (cop.h, "Porting"): a join or leave by a program not linked with libcop, and a
// notice overtaken by a message relayed through a third task on another host.
// A view asked with a count (cop_barrier) that is larger than the view is asked again
// (waiting, as pvm_barrier does, until that many have joined). A task that is not a
// member (a cop_bcast sender) gets no notices: it asks pvmgs each call, as before.
// SYSCTX_RS9 of pvmproto.h: a system context PVM 3.4 reserves and never uses.
constexpr int kNoticeContext = 0x0007ffff - 9;
constexpr int kChangedTag = 1, kExitedTag = 2;  // in kNoticeContext only
constexpr int kMaxGroupName = 4096;

// PVM calls in libcop's notice context, the program's context back afterwards.
struct NoticeContext {
  int old;
  NoticeContext() : old(pvm_setcontext(kNoticeContext)) {}
  ~NoticeContext() { pvm_setcontext(old); }
  NoticeContext(const NoticeContext&) = delete;
  NoticeContext& operator=(const NoticeContext&) = delete;
};

// The masks of `g`'s members.
void set_masks(Group& g) {
  g.tc_mask = g.l2_mask = 0;
  for (const Member& m : g.members) {
    g.tc_mask |= local_channel_bit(m.place);
    g.l2_mask |= controller_bit(m.place);
  }
}

// The first `count` members of `kept` (count < 0: all).
void first_members(const Group& kept, int count, Group& g) {
  g = kept;
  g.total = int(kept.members.size());
  if (count >= 0 && int(g.members.size()) > count) {
    g.members.resize(size_t(count));
    set_masks(g);
  }
}

// The frozen copy of a static group, when it has the members asked for.
bool frozen_members(const char* name, int count, Group& g) {
  const Library& l = lib();
  auto it = l.frozen.find(name);
  if (it == l.frozen.end() || (count >= 0 && int(it->second.members.size()) < count)) return false;
  first_members(it->second, count, g);
  return true;
}

// `tid` has exited: views with it are asked again, without it.
void member_exited(int tid) {
  Library& l = lib();
  l.exited.insert(tid);
  for (auto it = l.views.begin(); it != l.views.end();) {
    const auto& ms = it->second.members;
    const bool had = std::any_of(ms.begin(), ms.end(), [&](const Member& m) { return m.tid == tid; });
    it = had ? l.views.erase(it) : std::next(it);
  }
}

// One notice (the receive buffer holds it, `tag` its tag): the views it names are dropped.
void apply_notice(int tag) {
  Library& l = lib();
  l.notices++;
  int value = 0;
  std::string name;
  bool read = pvm_upkint(&value, 1, 1) >= 0;
  if (read && tag == kChangedTag) {
    read = value >= 0 && value <= kMaxGroupName;
    if (read && value > 0) {
      name.resize(size_t(value));
      read = pvm_upkbyte(name.data(), value, 1) >= 0;
    }
  }
  if (read && tag == kChangedTag) l.views.erase(name);
  else if (read && tag == kExitedTag) member_exited(value);
  else l.views.clear();  // a notice that cannot be read: every group is asked again
}

// PVM's message handler for libcop's context (pvm_addmhf): a notice is applied in
// whichever PVM call reads it, the program's own included, and never waits in a queue.
int notice_handler(int mid) {
  int bytes = 0, tag = -1, src = 0;
  if (pvm_bufinfo(mid, &bytes, &tag, &src) < 0) tag = -1;
  apply_notice(tag);
  return 0;
}

// The handler, once; the notices that came before it are taken from the queue.
bool handle_notices() {
  Library& l = lib();
  if (l.notice_handler) return true;
  if (pvm_addmhf(-1, -1, kNoticeContext, notice_handler) < 0) return false;
  l.notice_handler = true;
  NoticeContext ctx;
  while (pvm_probe(-1, -1) > 0) {
    const int old = pvm_setrbuf(0);
    const int buf = pvm_nrecv(-1, -1);
    int bytes = 0, tag = -1, src = 0;
    if (buf <= 0 || pvm_bufinfo(buf, &bytes, &tag, &src) < 0) tag = -1;
    apply_notice(tag);
    pvm_setrbuf(old);
    if (buf > 0) pvm_freebuf(buf);
    if (buf <= 0) break;
  }
  return true;
}

// Applies the notices that have arrived. Those PVM has read already were applied by the
// handler; a socket of PVM's with anything waiting (poll, no wait: a third of a
// microsecond where pvm_probe's select takes 1.6) is read now, which applies the rest.
void take_notices() {
  Library& l = lib();
  if (!handle_notices()) {
    l.views.clear();  // PVM cannot tell libcop of changes: every group is asked again
    return;
  }
  constexpr int kMaxPolled = 64;
  int* fds = nullptr;
  const int n = pvm_getfds(&fds);
  bool waiting = n <= 0 || n > kMaxPolled || !fds;
  if (!waiting) {
    pollfd p[kMaxPolled];
    for (int i = 0; i < n; ++i) p[i] = pollfd{fds[i], POLLIN, 0};
    waiting = ::poll(p, nfds_t(n), 0) != 0;  // readable, or poll failed: read
  }
  if (!waiting) return;
  NoticeContext ctx;  // nothing of the program's matches: pvm_probe reads the sockets
  if (pvm_probe(-1, -1) < 0) l.views.clear();
}

// A PvmTaskExit notify on every member of `g` not watched yet (this task's own exit
// needs none); false when PVM refused it (the view is not kept then).
bool watch_exits(const Group& g) {
  Library& l = lib();
  std::vector<int> tids;
  for (const Member& m : g.members)
    if (m.tid != l.tid && !l.watched.count(m.tid)) tids.push_back(m.tid);
  if (tids.empty()) return true;
  NoticeContext ctx;
  if (pvm_notify(PvmTaskExit, kExitedTag, int(tids.size()), tids.data()) < 0) return false;
  l.watched.insert(tids.begin(), tids.end());
  return true;
}

// The group's size once it has at least `count` members (pvm_gsize), or an error.
int wait_for_size(const char* name, int count) {
  const int timeout_ms = lib().timeout_ms;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms ? timeout_ms : 1 << 30);
  int size = pvm_gsize(const_cast<char*>(name));
  while (size >= 0 && count > size) {
    if (std::chrono::steady_clock::now() > deadline) return CopErrTimeout;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    size = pvm_gsize(const_cast<char*>(name));
  }
  return size;
}

// The group's first `n` living members as pvmgs lists them now (`sized`: n is the
// group's size, which may still count a member that ended).
int ask_members(const char* name, int n, int size, bool sized, Group& g) {
  const Library& l = lib();
  g = Group{};
  g.total = size;
  // Instance numbers of members that left stay unused (PvmNoInst): skip them.
  constexpr int kMaxGap = 1024;
  for (int inst = 0, gap = 0; int(g.members.size()) < n; ++inst) {
    const int tid = pvm_gettid(const_cast<char*>(name), inst);
    if (tid == PvmNoInst && ++gap <= kMaxGap) continue;
    if (tid < 0) return tid;
    gap = 0;
    // A member that ended may stay listed for a while (the group server learns of the
    // exit from the pvmd, as libcop's exit notify does): it takes no part. Listed now,
    // it was a member when the size was asked, so the size counts it.
    Member m{tid, {}, inst};
    int rc = l.exited.count(tid) ? PvmNoTask : place_of(tid, m.place);
    // A task of another job (another partition) in a PVM group of this name (one virtual
    // machine, two jobs): not a member of this job's collectives (cop.h "Jobs").
    // (On this controller: a partition is a controller's.)
    if (rc == 0 && m.place.ppn >= 0 && m.place.cntno == l.cntno && m.place.ppn != int(info().ppn)) rc = PvmNoTask;
    if (rc == PvmNoTask) {
      if (sized) n--, g.total--;
      continue;
    }
    if (rc < 0) return rc;
    g.members.push_back(m);
  }
  set_masks(g);
  return 0;
}

}  // namespace

int group_members(const char* name, int count, Group& g) {
  Library& l = lib();
  if (!name) return PvmBadParam;
  if (l.static_groups && frozen_members(name, count, g)) return 0;
  const bool keep = l.group_cache && !l.static_groups;
  if (keep) {
    take_notices();
    if (auto it = l.views.find(name);
        it != l.views.end() && (count < 0 || count <= int(it->second.members.size()))) {
      first_members(it->second, count, g);
      return 0;
    }
  }
  const uint64_t seen = l.notices;
  const int size = wait_for_size(name, count);
  if (size < 0) return size;
  // A kept view has every member; the others the first `count`.
  const int n = count < 0 || keep ? size : count;
  if (int rc = ask_members(name, n, size, n == size, g); rc < 0) return rc;
  if (l.static_groups) l.frozen[name] = g;
  if (keep) {
    const bool member =
        std::any_of(g.members.begin(), g.members.end(), [&](const Member& m) { return m.tid == l.tid; });
    // Only a member hears of joins and leaves. A notice applied while pvmgs was asked
    // may name a change the view does not have: it is asked again at the next call.
    if (member && watch_exits(g) && l.notices == seen) l.views[name] = g;
    if (count >= 0 && int(g.members.size()) < count) return PvmNoInst;  // members ended while asked
    const Group all = g;
    first_members(all, count, g);
    g.total = all.total;
  }
  return 0;
}

namespace {

// This task joined or left `group` (pvm_joingroup, pvm_lvgroup below): its own view goes,
// and every member pvmgs lists now is told (Group views). A member alone in the group,
// or a group gone with its last member, has no one to tell.
void group_changed(const char* call, const char* group) {
  lib().views.erase(group);
  const size_t len = strnlen(group, kMaxGroupName + 1);
  if (len > size_t(kMaxGroupName)) {
    report(call, "group name longer than " + std::to_string(kMaxGroupName) + " bytes: no change notice sent");
    return;
  }
  NoticeContext ctx;
  const int buf = pvm_mkbuf(PvmDataDefault);
  const int old = pvm_setsbuf(buf);
  int n = int(len);
  int rc = pvm_pkint(&n, 1, 1);
  if (rc >= 0 && n > 0) rc = pvm_pkbyte(const_cast<char*>(group), n, 1);
  if (rc >= 0) rc = pvm_bcast(const_cast<char*>(group), kChangedTag);
  pvm_setsbuf(old);
  pvm_freebuf(buf);
  if (rc < 0 && rc != PvmNoInst && rc != PvmNoGroup)
    report(call, std::string("cannot send the change notice of group '") + group + "' to its members: PVM error " +
                     std::to_string(rc));
}

// libgpvm3's own pvm_joingroup or pvm_lvgroup (the next definition after the program's).
template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace
}  // namespace cop::lib

// PVM's group calls as libcop's (Group views above): the real call, then the change
// notice. A program linked with libgpvm3's static archive instead of libgpvm3.so gets
// a duplicate definition at link time rather than unnoticed changes.
extern "C" {

int pvm_joingroup(char* group) {
  using Fn = int (*)(char*);
  static const Fn join = cop::lib::real<Fn>("pvm_joingroup");
  if (!join) return PvmSysErr;
  const int inst = join(group);
  if (inst >= 0) cop::lib::group_changed("pvm_joingroup", group);
  return inst;
}

int pvm_lvgroup(char* group) {
  using Fn = int (*)(char*);
  static const Fn leave = cop::lib::real<Fn>("pvm_lvgroup");
  if (!leave) return PvmSysErr;
  const int rc = leave(group);
  if (rc >= 0) cop::lib::group_changed("pvm_lvgroup", group);
  return rc;
}

}  // extern "C"
