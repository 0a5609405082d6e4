// libcop's state and the helpers every part of it shares (seed 000 ch. V,
// "Libcop Library"). The cop_* calls are split by what they do:
//   enrol.cpp        cop_mytid, options, notification, cop_exit, cop_strerror
//   tas.cpp          cop_read/cop_write/cop_rmw on task address spaces
//   collectives.cpp  cop_barrier, cop_reduce, cop_gather, cop_scatter
//   casts.cpp        cop_bcast, cop_mcast
//   channel.cpp      the channel part of each collective (the bursts sent to copd)
//   library.cpp      this state, tids to channels, errors
//   groups.cpp       groups: members asked of pvmgs or kept (CopGroupCache), change notices
// Internal to libcop: not installed, not part of cop.h.
#pragma once
#include <cop/cop.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "driver/port.h"
#include "lib/commands.h"
#include "lib/host.h"
#include "lib/mapping.h"
#include "lib/tag_ranges.h"

namespace cop::lib {

struct Member {
  int tid;
  Place place;
  int inst = -1;  // group instance number (PVM keeps them when a member leaves: they may have gaps)
};

struct Group {
  std::vector<Member> members;  // in instance-number order
  uint64_t tc_mask = 0;         // the members' channels on this task's controller: the terminal-count mask
  uint64_t l2_mask = 0;         // the members' level-1 controllers (bit CNTNO): the level 2's mask
  int total = 0;  // members in the group, of which `members` may be the first few (cop_barrier's count)
};

struct Library {
  bool enrolled = false;
  int tid = 0;
  int cntno = 0;  // this task's level-1 controller (its PROBE answer names it)
  // The PROBE answer's X bit (seed 000 ch. IV): the partition extends beyond this level-1
  // controller (it has a level 2), so a broadcast may come from a sender on another.
  bool extends = false;
  std::unique_ptr<driver::Port> port;
  std::unique_ptr<HostArea> host;
  Mapping mapping;
  int static_groups = 0;
  int group_cache = 1;  // CopGroupCache: keep each group's view (below) instead of asking pvmgs each call
  int map_how = CopMapTable;
  int access = CopAccessDirect;
  int timeout_ms = 10000;
  int poll_us = 0;  // COP_POLL_US: poll the channel this long before sleeping (the Data Ready strobe)
  std::map<std::string, Group> frozen;  // CopStaticGroups: members asked once
  // CopGroupCache (groups.cpp, "Group views"): every member of a group this task is in,
  // kept until a change notice names the group; the members with a PvmTaskExit notify,
  // and those whose exit was notified (left out of any view asked again).
  std::map<std::string, Group> views;
  std::set<int> watched, exited;
  bool notice_handler = false;  // the PVM message handler that applies change notices
  uint64_t notices = 0;         // notices applied so far
  TagRanges tags;
  // Group windows (windows.cpp): the GAS cut into this many windows (CopGroupWindows),
  // whether the virtual machine's count was checked, and each group name's window.
  uint32_t group_windows = 16;
  bool windows_agreed = false;
  std::map<std::string, uint32_t> windows;
  int notify_tag = -1;  // CopChannelDown
  bool notified = false;
  // Operation identity (identity.cpp; cop.h "Operation identity"): the job this task
  // registered in, each (group, GAS word)'s generation (this task's calls on it so
  // far), the identity of the call in progress (its commands and waits carry it), and
  // cop_resync's own, used instead of a new one while it runs.
  std::string job;
  std::map<std::string, uint32_t> generations;
  uint64_t op_id = 0;
  uint64_t forced_op_id = 0;
  // Storage the frames of an array call reuse (channel.cpp, casts.cpp), held between
  // calls: a frame of a 16 KB burst has some 2100 answers of 64 bytes and 2048 results of
  // 40; vectors made per frame were page faults on every frame, as the allocator gave
  // their pages back in between (issue 36). Each is used by one function at a time and
  // read only after the port filled it.
  std::vector<driver::Answer> answers;
  std::vector<wire::Message> results;
  // An array call's frames of bursts (channel.cpp, frames_of: 82 KB of commands for a 16 KB
  // broadcast), kept likewise.
  std::vector<commands::FramedBursts> frames;
};

Library& lib();
const driver::ChannelInfo& info();
// This task as the sender of COP commands (its Pid register and partition).
commands::Sender sender();
driver::LinkOptions link_options();

// 0 for none, else the cop.h code (CopErr...) of a wire error.
int code(wire::Error e);
uint64_t channel_bit(int chno);
// Two levels (seed 000 ch. IV, Figure 5; ch. V, the X bit): masks are built per
// controller. A place's channel bit counts only on this task's controller; the
// level 2's masks name controllers (bit CNTNO).
bool on_this_host(const Place& p);
uint64_t local_channel_bit(const Place& p);  // 0 for a place on another controller
uint64_t controller_bit(const Place& p);
uint64_t this_controller_bit();
// The level-2 mask of an operation over `controllers`: 0 when they are only this
// task's controller (nothing changes then), else `controllers`.
uint64_t level2(uint64_t controllers);
bool all_on_this_host(const Group& g);
// A burst of a call whose members span controllers (l2_tc != 0): each SETTC and
// SETBM followed by its level-2 twin (X, masks l2_tc and l2_bm), a SETBM X after
// the SETTC X when the call has a level-2 broadcast mask but no local one, the
// contributions and broadcasts with X, mask commands with an empty local mask
// left out. Unchanged when l2_tc is 0.
commands::Burst two_level(const commands::Burst& b, uint64_t l2_tc, uint64_t l2_bm);
// A broadcast or multicast to `recipients` over several controllers: the hosts
// with a recipient on this task's controller (the level-1's broadcast mask for
// it; the core leaves out the sender's own channel), the lowest of them (the
// designated host, which sets that mask), and the controllers with recipients.
struct CastPlan {
  uint64_t here_hosts = 0, designated = 0, controllers = 0;
};
CastPlan cast_plan(const std::vector<Member>& recipients);
// How many SETTC/SETBM the burst has (they follow its LOCK).
size_t mask_commands(const commands::Burst& b);
// The identity of a collective call (cop/wire.h, cop.h "Operation identity"): while
// it lives, lib().op_id is the call's, and its commands (sender()), waits (Wanted) and
// host-area keys carry it. Making one advances the generation of (scope, addr): every
// call a member makes on a group's tag does, failed ones included, so all members
// compute the same identity for the same call without a round trip. `scope` names the
// group (a multicast: its recipients), `addr` the tag's GAS word, `kind` the call
// ('b' barrier, 'r' reduction, 'c' a broadcast or multicast), `variant` a reduction's
// opcode (with the datatype and count, the shape the members must agree on).
// The check names `scope` whole (for a group: its members as the call sees them, so that
// an identity is never made twice by one task: each view's generations start at 0, and a
// check naming only the group gave two views' rounds of one number the same identity).
class CallIdentity {
 public:
  CallIdentity(const std::string& scope, uint32_t addr, uint32_t kind, uint32_t variant, int datatype, size_t count);
  ~CallIdentity();
  CallIdentity(const CallIdentity&) = delete;
  CallIdentity& operator=(const CallIdentity&) = delete;
  uint64_t id() const { return id_; }

 private:
  uint64_t id_ = 0, saved_ = 0;
};
// A group's scope for CallIdentity: its name and its members as this call sees them
// (every member must see the same for the call to work at all). A join or a leave
// makes a new scope whose generations start at 0 at every member, the newcomer's too;
// a set of members seen again resumes its own counts, which its members kept alike.
std::string member_scope(const char* group, const Group& g);
// The generation counter of (scope, addr), and cop_resync's identity for them.
uint32_t& generation(const std::string& scope, uint32_t addr);
uint64_t resync_identity(const std::string& scope, uint32_t addr);

// One line on stderr naming the call and why it failed.
void report(const char* call, const std::string& why);
// A link failure is the channel down: tell the task once if it asked (cop_notify). Returns rc.
int fail_and_notify(int rc);
// CopErrNotEnrolled until cop_mytid has succeeded.
int ready();
bool known_type(int datatype);

// The channel and task number of `tid` (this task's own, or by the mapping).
int place_of(int tid, Place& p);
// The group's first `count` members (count < 0: all now), waiting until that many
// have joined, as pvm_barrier does.
int group_members(const char* name, int count, Group& g);
// The member with group instance number `inst`, or nullptr.
const Member* by_inst(const Group& g, int inst);
// Reserves the GAS words [first, first+count) for a group operation: within the global
// address space, and not overlapping another operation that may still be in progress.
int take_tags(const char* call, int first, size_t count, Use use, int scope);

// Group windows (windows.cpp; cop.h "Tags"): the GAS is cut into group_windows windows
// of window_words() words; each group name gets one (window 0: the multicasts', and
// with a single window also the one group's) from the virtual machine's mailbox when
// first used. A group operation's tag is a word offset in its group's window.
uint32_t window_words();
int group_window(const char* call, const std::string& group, uint32_t& window);
// The GAS address of `msgtag` in `group`'s window (nullptr: the multicasts'), its
// range within the window checked (CopErrAddressRange) and reserved (take_tags).
int group_address(const char* call, const char* group, int msgtag, size_t count, Use use, int scope, uint32_t& addr);
// A collective on the GAS words [first, first+count) failed for this task after it took
// them: whatever of its operation is left on the controller (older contributions, a
// result or NACK on its way) must not meet this channel's next operation there. The
// range goes on the channel's list with the task's partition (the window: whichever
// local task of the same job uses the channel next settles it; another job's tasks
// leave it, their VOIDs go to their own partition).
void unsettle(int first, size_t count);
// Before the channel part of a collective (channel.cpp, casts.cpp), by the task doing
// it: for every unsettled range of the channel, the controller voids what this channel
// takes part in on those words (a SETTC with an empty mask, controller.h "Voiding"; the
// others still waiting get CopErrVoided) and the node drops what it holds for them out
// of context. 0, or the link error (the ranges stay unsettled). It runs inside the
// host area's flow, never before it: a task that returned early would skip its host
// key and leave its local partners' keys out of step.
int settle();
// The group's members on this host, for the host area's next gather (HostArea::expect_members).
void expect_local_members(const Group& g);
// A local member of a collective on [first, first+count) ended before it added its part
// (CopErrTaskEnded from the host area): the operation is voided on the controller at
// once, so the other channels' tasks waiting on it get an error (CopErrVoided) within
// about a lease, not at their CopTimeout (issue 34, liveness). Returns rc.
int void_for_ended_member(int rc, int first, size_t count);

// Sends the commands in frames of as many as the port carries; the first error wins.
int exchange_all(const std::vector<wire::Message>& cmds, std::vector<driver::Answer>* answers_out = nullptr);
int first_error(const std::vector<driver::Answer>& a);
// SETTC/SETBM answered "in use" only: a peer channel initialised the masks (SPMD).
bool refused_only_as_initialised(const std::vector<driver::Answer>& a, size_t first_mask, size_t masks);

// The channel part of each collective (channel.cpp).
// l2_*: the level 2's masks of a call spanning controllers (0: one controller).
int channel_barrier(uint32_t tag, uint64_t mask, uint64_t l2 = 0);
int channel_reduce(wire::Opcode op, uint32_t tag, std::span<uint64_t> words, uint64_t tc, uint64_t bm, bool here_root,
                   uint64_t l2_tc = 0, uint64_t l2_bm = 0);
int channel_bcast(wire::Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask, uint64_t l2 = 0);

// COP_SEND, or COP_RECV from a valid sender (casts.cpp).
bool valid_cast_mode(int mode, int srctid);
// Broadcast and multicast share everything but how recipients are named (casts.cpp).
int send_to(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
            int msgtag);
int receive_from(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
                 int msgtag, int srctid);

// An array access to a task address space: one opcode per element (cop_read,
// cop_write, cop_rmw), starting at word `msgtag` of the space.
struct TasAccess {
  wire::Opcode op;
  bool floating = false;  // the FP unit's RMW (M bit) rather than the ALU's
  void* data = nullptr;
  int count = 0;
  int datatype = 0;
  int msgtag = 0;
  int mode = 0;                // COP_NORMAL, or COP_URGENT: the channel locked over the whole array
  bool keep_answers = false;   // the answers (read values, RMW old values) go back into data
};

// Runs `a` on the task address space of `p` (tas.cpp).
int tas_run(const TasAccess& a, Place p);

}  // namespace cop::lib
