// cop_bcast and cop_mcast (seed 000 ch. V): the sender publishes its data to
// the receivers on its own host (host area) and broadcasts it through the
// controller to the other channels; on each receiving host one receiver takes
// it from the channel for all.
#include <pvm3.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>

#include "driver/protocol.h"
#include "lib/elements.h"
#include "lib/library.h"

namespace cop::lib {

using driver::ResultKind;
using driver::Wanted;
using wire::Error;
using wire::Message;

namespace {
// The host-area name of a broadcast's chunk: with the datatype and the chunk's length, so
// a receiver that disagrees with the sender on them does not take its words (it times out).
std::string chunk_key(const char* key_name, int datatype, size_t n) {
  return std::string(key_name) + "/" + std::to_string(datatype) + "/" + std::to_string(n);
}
}  // namespace

int send_to(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
            int msgtag) {
  Library& l = lib();
  uint64_t foreign = 0, l2 = 0;
  uint32_t local = 0;
  for (const Member& m : recipients) {
    if (m.tid == l.tid) continue;  // a broadcast is not sent back to its sender
    if (on_this_host(m.place))
      local++;
    else
      foreign |= local_channel_bit(m.place);
  }
  // Recipients on other level-1 controllers: SETBM X and BCAST X through the
  // level 2; each controller's broadcast mask is set by its designated host
  // (cast_plan): by this sender when that is its own host.
  const CastPlan plan = cast_plan(recipients);
  if (level2(plan.controllers | this_controller_bit())) {
    const uint64_t me = channel_bit(info().chno);
    l2 = plan.controllers;
    if (plan.here_hosts == me && local == 0) l2 &= ~this_controller_bit();  // nobody here needs it
    foreign = plan.designated == me && (l2 & this_controller_bit()) ? plan.here_hosts : 0;
  }
  std::vector<uint64_t> words(static_cast<size_t>(count));
  to_words(data, 0, datatype, words);
  // The local receivers take each chunk from the host area; the other hosts get
  // the whole array from the channel, its bursts in as few frames as fit.
  for (size_t at = 0; local && at < words.size(); at += kChunk) {
    const size_t n = std::min(kChunk, words.size() - at);
    const uint64_t key =
        l.host->next_key(chunk_key(key_name, datatype, n).c_str(), "", uint32_t(msgtag), uint32_t(at), l.op_id);
    if (int rc = l.host->publish(key, local, std::span<const uint64_t>(words).subspan(at, n)); rc < 0)
      return fail_and_notify(rc);
  }
  if (foreign || l2) return channel_bcast(bcast_opcode(datatype), uint32_t(msgtag), words, foreign, l2);
  return 0;
}

namespace {

using Filled = std::function<bool()>;

// The sender is on this host: it fills the slot; nothing comes from the channel.
int wait_for_local_sender(const Filled& filled) {
  const int timeout_ms = lib().timeout_ms;
  const auto start = std::chrono::steady_clock::now();
  while (!filled()) {
    if (timeout_ms && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(timeout_ms))
      return CopErrTimeout;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return 0;
}

// Any sender: it may be local (fills the slot) or remote (the channel), so the
// channel is awaited in short steps between looks at the slot.
int fetch_from_any_sender(std::span<uint64_t> out, const Filled& filled, const Wanted& w) {
  Library& l = lib();
  std::vector<Message> got(out.size());
  auto opts = link_options();
  const int total = opts.wait_timeout_ms;
  opts.wait_timeout_ms = 5;
  l.port->set_link_options(opts);
  const auto start = std::chrono::steady_clock::now();
  Error e = Error::timeout;
  while (e == Error::timeout && !filled() &&
         (total == 0 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(total)))
    e = l.port->await(w, got, nullptr);
  l.port->set_link_options(link_options());
  if (e == Error::timeout && filled()) return 0;  // the local sender came first: the slot has the words
  if (e != Error::none) return fail_and_notify(code(e));
  copy_payloads(got, out);
  return 0;
}

// What the host's fetching receiver does for a chunk: the words from the local
// sender's slot, or from the controller's broadcast on the channel.
int fetch_chunk(std::span<uint64_t> out, const Filled& filled, uint32_t tag, int src_chno, bool src_here,
                bool any_sender) {
  if (src_here) return wait_for_local_sender(filled);
  const Wanted w{ResultKind::bcast, tag, uint32_t(out.size()), uint8_t(src_chno), lib().op_id};
  if (any_sender) return fetch_from_any_sender(out, filled, w);
  std::vector<Message> got(out.size());
  if (Error e = lib().port->await(w, got, nullptr); e != Error::none) return fail_and_notify(code(e));
  copy_payloads(got, out);
  return 0;
}

// The only receiver on this host, from a sender on another: no host area, the
// whole array straight from the channel (the sender's bursts come in few frames).
int receive_alone(void* data, int count, int datatype, int msgtag, int src_chno) {
  if (int rc = settle(); rc < 0) return rc;
  std::vector<Message>& got = lib().results;
  got.resize(static_cast<size_t>(count));  // every one written by the waits when they succeed
  // Direct access waits for the whole array at once: in steps of copdrv's limit (normal
  // access, kMaxAwait) the words of a frame beyond the first step were filed in the
  // window's buffer one by one and taken back from it by the next wait (issue 36).
  const size_t step = lib().port->direct() ? got.size() : size_t(driver::kMaxAwait);
  for (size_t at = 0; at < got.size(); at += step) {
    const size_t n = std::min(step, got.size() - at);
    const Wanted w{ResultKind::bcast, uint32_t(msgtag) + uint32_t(at), uint32_t(n), uint8_t(src_chno), lib().op_id};
    if (Error e = lib().port->await(w, std::span<Message>(got).subspan(at, n), nullptr); e != Error::none)
      return fail_and_notify(code(e));
  }
  std::vector<uint64_t> words(got.size());
  copy_payloads(got, words);
  from_words(data, 0, datatype, words);
  return 0;
}

}  // namespace

bool valid_cast_mode(int mode, int srctid) {
  if (mode == COP_SEND) return true;
  // A receiver names its sender (a tid, not itself) or any sender (-1).
  return mode == COP_RECV && srctid != lib().tid && srctid >= -1 && srctid != 0;
}

int receive_from(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
                 int msgtag, int srctid) {
  Library& l = lib();
  int src_chno = 0;
  bool src_here = false, src_remote = false;
  if (srctid != -1) {
    Place p;
    if (int rc = place_of(srctid, p); rc < 0) return rc;
    src_chno = p.chno;
    src_here = on_this_host(p);
    src_remote = p.cntno != l.cntno;
  }
  uint32_t local_receivers = 0;
  for (const Member& m : recipients)
    if (on_this_host(m.place) && m.tid != srctid) local_receivers++;
  // Recipients over several level-1 controllers: the data comes down through
  // the level 2, and this controller's designated host (cast_plan) sets its
  // broadcast mask for it (seed 000 ch. IV, Figure 5).
  const CastPlan plan = cast_plan(recipients);
  // A receiver naming no sender cannot tell where it is: when the partition extends
  // beyond this controller (X), the sender may be on another, so the mask is set here.
  const bool spans = src_remote || level2(plan.controllers) != 0 || (srctid == -1 && l.extends);
  // Not when the sender is on this host: it sets the mask itself.
  const bool sets_mask = spans && !src_here && plan.designated == channel_bit(info().chno);
  const uint64_t here_mask = plan.here_hosts;
  // One level: the only receiver here takes the whole array from the channel at once.
  if (srctid != -1 && !src_here && !spans && local_receivers == 1)
    return receive_alone(data, count, datatype, msgtag, src_chno);
  if (local_receivers == 0) local_receivers = 1;
  for (size_t at = 0; at < size_t(count); at += kChunk) {
    const size_t n = std::min(kChunk, size_t(count) - at);
    std::vector<uint64_t> words(n);
    const uint32_t tag = uint32_t(msgtag) + uint32_t(at);
    const uint64_t key =
        l.host->next_key(chunk_key(key_name, datatype, n).c_str(), "", uint32_t(msgtag), uint32_t(at), l.op_id);
    auto fetch = [&](std::span<uint64_t> out, const Filled& filled) {
      if (int rc = settle(); rc < 0) return rc;
      // Any sender: one on this host has filled the slot before its burst (and set the mask).
      if (sets_mask && !(srctid == -1 && filled())) {
        commands::Burst masks;
        commands::append_masks(masks, sender(), wire::Opcode::SETBM, tag, here_mask, n);
        std::vector<driver::Answer> a;
        if (int rc = exchange_all(masks, &a); rc < 0 && !refused_only_as_initialised(a, 0, masks.size())) return rc;
      }
      return fetch_chunk(out, filled, tag, src_chno, src_here, srctid == -1);
    };
    if (int rc = l.host->receive(key, local_receivers, words, fetch); rc < 0) return fail_and_notify(rc);
    from_words(data, at, datatype, words);
  }
  return 0;
}

}  // namespace cop::lib

using namespace cop::lib;

extern "C" {

int cop_bcast(void* data, int count, int datatype, char* group, int msgtag, int mode, int srctid) {
  if (int rc = ready(); rc < 0) return rc;
  Library& l = lib();
  if (!group || msgtag < 0 || count < 0 || (count > 0 && !data) || !known_type(datatype) ||
      !valid_cast_mode(mode, srctid))
    return PvmBadParam;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  if (mode == COP_RECV) {
    // The receiver must be a member (a broadcast goes to the members). The sender need
    // not be one (seed 000 ch. V; cop.h, "Porting"): a receiver naming it gets its data
    // as one with srctid -1 does; a named tid must be a task (PvmNoTask otherwise).
    bool member = false;
    for (const Member& m : g.members) member |= m.tid == l.tid;
    if (!member) {
      report("cop_bcast", "this task is not a member of group '" + std::string(group) + "' (" +
                              std::to_string(g.members.size()) + " members)");
      return PvmNotInGroup;
    }
    if (srctid != -1) {
      Place p;
      if (int rc = place_of(srctid, p); rc < 0) return rc;
    }
  }
  uint32_t addr = 0;  // the tag's word in the group's window (cop.h "Tags")
  if (int rc = group_address("cop_bcast", group, msgtag, size_t(count), Use::cast, l.tags.scope(group), addr); rc < 0)
    return rc;
  // The check names the members as this call sees them, as every collective's does: the
  // generations restart at 0 with each view (a join, a leave, a death), so a check of the
  // group name alone gave an earlier view's round the identity of a later view's round of
  // the same number, and a receiver took its leftover words (issue 34, difftest seed 1).
  const CallIdentity identity(member_scope(group, g), addr, 'c', 0, datatype, size_t(count));
  if (count == 0) return 0;
  const std::string key = std::string("bcast:") + group;
  const int rc = mode == COP_SEND ? send_to(key.c_str(), data, count, datatype, g.members, int(addr))
                                  : receive_from(key.c_str(), data, count, datatype, g.members, int(addr), srctid);
  if (rc < 0) unsettle(int(addr), size_t(count));
  return rc;
}

int cop_mcast(void* data, int count, int datatype, int* tids, int numtasks, int msgtag, int mode, int srctid) {
  if (int rc = ready(); rc < 0) return rc;
  Library& l = lib();
  if (msgtag < 0 || numtasks < 1 || !tids || count < 0 || (count > 0 && !data) || !known_type(datatype) ||
      !valid_cast_mode(mode, srctid))
    return PvmBadParam;
  std::vector<Member> recipients;
  std::vector<int> sorted(tids, tids + numtasks);
  std::sort(sorted.begin(), sorted.end());
  if (mode == COP_RECV && !std::binary_search(sorted.begin(), sorted.end(), l.tid)) {
    report("cop_mcast", "this task is not among the recipients");
    return PvmNotInGroup;
  }
  // The host area keys a multicast by its recipients too: tasks of one host
  // that are not all recipients of every multicast still pair up.
  std::string key = "mcast:";
  for (int t : sorted) key += std::to_string(t) + ",";
  for (int i = 0; i < numtasks; ++i) {
    Member m{tids[i], {}};
    if (int rc = place_of(tids[i], m.place); rc < 0) return rc;
    recipients.push_back(m);
  }
  if (mode == COP_RECV && srctid != -1) {
    Place p;
    if (int rc = place_of(srctid, p); rc < 0) return rc;
  }
  std::vector<int> scope_tids(sorted);
  if (mode == COP_SEND) scope_tids.push_back(l.tid);
  else if (srctid != -1) scope_tids.push_back(srctid);
  // Multicasts name no group: they use window 0 (cop.h "Tags").
  uint32_t addr = 0;
  if (int rc = group_address("cop_mcast", nullptr, msgtag, size_t(count), Use::cast, l.tags.scope("", scope_tids), addr);
      rc < 0)
    return rc;
  const CallIdentity identity(key, addr, 'c', 0, datatype, size_t(count));
  if (count == 0) return 0;
  const int rc = mode == COP_SEND ? send_to(key.c_str(), data, count, datatype, recipients, int(addr))
                                  : receive_from(key.c_str(), data, count, datatype, recipients, int(addr), srctid);
  if (rc < 0) unsettle(int(addr), size_t(count));
  return rc;
}

}  // extern "C"
