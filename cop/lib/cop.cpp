// libcop (seed 000 ch. V, "Libcop Library"): every cop_* call of cop.h.
// Channel access goes through a driver::Port (direct or normal mode); tids
// and groups come from PVM; tasks of one host meet in the host area first.
#include <cop/cop.h>
#include <pvm3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "driver/port.h"
#include "lib/elements.h"
#include "lib/host.h"
#include "lib/mapping.h"

namespace {

using cop::driver::Answer;
using cop::driver::ResultKind;
using cop::driver::Wanted;
using cop::lib::Place;
using cop::wire::Error;
using cop::wire::Message;
using cop::wire::Opcode;
using cop::wire::Space;

struct Member {
  int tid;
  Place place;
  int inst = -1;  // group instance number (PVM keeps them when a member leaves: they may have gaps)
};

struct Group {
  std::vector<Member> members;  // in instance-number order
  uint64_t tc_mask = 0;
  int total = 0;  // members in the group, of which `members` may be the first few (cop_barrier's count)
};

// The GAS words each group operation uses (seed 000 ch. V: a tag is the first word of a
// range of controller addresses; a reduction or broadcast of n elements uses the n words
// tag .. tag+n-1, each with its own terminal-count and broadcast mask entries; a barrier
// uses the one word tag). Two operations whose ranges overlap meet in the same mask
// entries, and the controller cannot tell them apart: the second is refused
// (CopErrMaskInUse), waits for the first, or mixes its data with it. So libcop keeps the
// ranges this task's group operations used since the last full barrier of their group
// (after which every member has made all its earlier calls, so the controller has
// completed them), and refuses at the call a range that overlaps one of them unless it
// is the same variable again (same first word, same kind of operation: successive
// operations on one tag are kept in order by the controller).
enum class Use : uint8_t { barrier, reduce, cast };

const char* use_name(Use u) {
  switch (u) {
    case Use::barrier: return "cop_barrier";
    case Use::reduce: return "cop_reduce";
    case Use::cast: return "cop_bcast/cop_mcast";
  }
  return "?";
}

class TagRanges {
 public:
  // An id for a group name, or for a multicast's recipients ("" and their tids).
  int scope(const std::string& name, std::vector<int> tids = {}) {
    std::sort(tids.begin(), tids.end());
    std::string k = name;
    for (int t : tids) k.append(1, ',').append(std::to_string(t));
    auto [it, fresh] = ids_.try_emplace(k, int(scopes_.size()));
    if (fresh) scopes_.push_back(Scope{name, std::move(tids)});
    return it->second;
  }

  // 0, or CopErrTagOverlap with `why` saying which range is in the way.
  int take(uint32_t first, uint32_t count, Use use, int scope, std::string& why) {
    if (count == 0) return 0;
    const uint64_t end = uint64_t(first) + count;
    auto it = ranges_.upper_bound(first);
    if (it != ranges_.begin()) --it;
    for (; it != ranges_.end() && it->first < end; ++it) {
      const Range& r = it->second;
      if (r.end <= first) continue;
      if (it->first == first && r.use == use) continue;  // the same variable again
      why = fmt_range(first, end, use) + " overlaps " + fmt_range(it->first, r.end, r.use) + " of " +
            describe(r.scope) + ", which may still be in progress (no full cop_barrier of that group since)";
      return CopErrTagOverlap;
    }
    // Only the same variable may overlap: merge into it (a longer array extends it).
    if (auto same = ranges_.find(first); same != ranges_.end()) {
      same->second.end = std::max<uint64_t>(same->second.end, end);
      if (same->second.scope != scope) same->second.scope = scope;
      return 0;
    }
    ranges_.emplace(first, Range{end, use, scope});
    return 0;
  }

  // A full barrier of `group` (whose members are `tids`): the operations of the group,
  // and multicasts among its members, are complete on the controller.
  void fence(const std::string& group, const std::vector<int>& tids) {
    std::vector<int> members(tids);
    std::sort(members.begin(), members.end());
    for (auto it = ranges_.begin(); it != ranges_.end();) {
      const Scope& sc = scopes_[size_t(it->second.scope)];
      const bool covered =
          sc.name == group || (sc.name.empty() && std::includes(members.begin(), members.end(), sc.tids.begin(),
                                                                sc.tids.end()));
      it = covered ? ranges_.erase(it) : std::next(it);
    }
  }

  void clear() { ranges_.clear(); }

 private:
  struct Range {
    uint64_t end;
    Use use;
    int scope;
  };
  struct Scope {
    std::string name;  // "" for a multicast
    std::vector<int> tids;
  };
  static std::string fmt_range(uint64_t first, uint64_t end, Use use) {
    return std::string(use_name(use)) + " words " + std::to_string(first) + ".." + std::to_string(end - 1);
  }
  std::string describe(int scope) const {
    const Scope& sc = scopes_[size_t(scope)];
    return sc.name.empty() ? "a multicast to " + std::to_string(sc.tids.size()) + " tasks" : "group '" + sc.name + "'";
  }
  std::map<uint32_t, Range> ranges_;  // by first word; disjoint
  std::map<std::string, int> ids_;
  std::vector<Scope> scopes_;
};

struct Library {
  bool enrolled = false;
  int tid = 0;
  std::unique_ptr<cop::driver::Port> port;
  std::unique_ptr<cop::lib::HostArea> host;
  cop::lib::Mapping mapping;
  int static_groups = 0;
  int map_how = CopMapTable;
  int access = CopAccessDirect;
  int timeout_ms = 10000;
  int poll_us = 0;  // COP_POLL_US: poll the channel this long before sleeping (the Data Ready strobe)
  std::map<std::string, Group> frozen;
  TagRanges tags;
  int notify_tag = -1;  // CopChannelDown
  bool notified = false;
};

Library& lib() {
  static Library l;
  return l;
}

int code(Error e) { return e == Error::none ? 0 : -(100 + int(e)); }

uint64_t bit(int chno) { return uint64_t{1} << (chno - 1); }

void report(const char* call, const std::string& why) {
  std::fprintf(stderr, "libcop [t%x]: %s: %s\n", unsigned(lib().tid), call, why.c_str());
}

// A link failure is the channel down: tell the task once if it asked (cop_notify).
int fail(int rc) {
  Library& l = lib();
  if ((rc == CopErrLinkDown || rc == CopErrRetryLimit) && l.notify_tag >= 0 && !l.notified) {
    l.notified = true;
    const int buf = pvm_mkbuf(PvmDataDefault);
    const int old = pvm_setsbuf(buf);
    int v = rc;
    pvm_pkint(&v, 1, 1);
    pvm_send(l.tid, l.notify_tag);
    pvm_setsbuf(old);
    pvm_freebuf(buf);
  }
  return rc;
}

cop::driver::LinkOptions link_options() {
  cop::driver::LinkOptions o;
  o.wait_timeout_ms = lib().timeout_ms;
  o.poll_us = lib().poll_us;
  return o;
}

const cop::driver::ChannelInfo& info() { return lib().port->info(); }

Message command(Opcode op, Space space = Space::GAS, uint32_t tag = 0) {
  Message m = cop::wire::make(op, info().tkno, space, tag);
  m.ins.ppn = static_cast<uint8_t>(info().ppn);
  return m;
}

Message mask_command(Opcode op, uint32_t tag, uint64_t mask, size_t count) {
  Message m = command(op, Space::GAS, tag);
  m.set_data64(mask);
  m.set_count(int(count));
  return m;
}

int tas_run(Opcode op, bool floating, void* data, int count, int datatype, Place p, int msgtag, int mode,
            bool keep_answers);

int open_channel(int wanted_tkno) {
  Library& l = lib();
  l.host.reset();
  l.port.reset();
  auto r = cop::driver::open_port(cop::driver::default_driver_dir(), l.access == CopAccessDirect, l.tid, wanted_tkno,
                                  link_options());
  if (r.status < 0) {
    report("cop_mytid", r.error);
    return r.status;
  }
  l.port = std::move(r.port);
  l.host = std::make_unique<cop::lib::HostArea>(l.port->window(), int(l.port->info().tkno));
  l.host->set_timeout(l.timeout_ms);
  // ch. V: verify the channel is healthy and learn its number from the controller.
  std::vector<Answer> a;
  std::vector<Message> probe = {command(Opcode::PROBE)};
  if (Error e = l.port->exchange(probe, a); e != Error::none) return code(e);
  if (a[0].error != Error::none) return code(a[0].error);
  if (!a[0].has_data || a[0].data.addr.chno != info().chno) {
    report("cop_mytid", "the controller names another channel than the driver");
    return CopErrMapping;
  }
  if (l.map_how == CopMapDirect) {
    const Place d = cop::lib::direct_place(l.tid, info().tasks_per_channel);
    if (d.chno != info().chno || d.tkno != info().tkno) {
      report("cop_mytid", "direct mapping does not hold here: the tid's H field is not this host's channel");
      return CopErrMapping;
    }
  }
  // The task's address space starts cleared, whatever an earlier task with this TKNO
  // left there (ch. V: the controller clears it when a task ends; libcop does not rely
  // on that). Before the mapping is published, so no other task addresses it yet.
  std::vector<uint64_t> zeros(info().tas_words, 0);
  if (int rc = tas_run(Opcode::WSRAM64, false, zeros.data(), int(zeros.size()), PVM_LONG,
                       Place{info().chno, info().tkno}, 0, COP_NORMAL, false);
      rc < 0) {
    report("cop_mytid", "clearing the task address space failed");
    return rc;
  }
  return l.mapping.publish(l.tid, Place{info().chno, info().tkno});
}

int ready() { return lib().enrolled ? 0 : CopErrNotEnrolled; }

// The GAS words [first, first+count) for a group operation: within the global address
// space, and not overlapping another operation that may still be in progress.
// The member with group instance number `inst`, or nullptr.
const Member* by_inst(const Group& g, int inst) {
  for (const Member& m : g.members)
    if (m.inst == inst) return &m;
  return nullptr;
}

int take_tags(const char* call, int first, size_t count, Use use, int scope) {
  Library& l = lib();
  if (uint64_t(uint32_t(first)) + count > info().gas_words) {
    report(call, "tag " + std::to_string(first) + " + " + std::to_string(count) +
                     " words beyond the global address space (" + std::to_string(info().gas_words) + " words)");
    return CopErrAddressRange;
  }
  std::string why;
  if (int rc = l.tags.take(uint32_t(first), uint32_t(count), use, scope, why); rc < 0) {
    report(call, why);
    return rc;
  }
  return 0;
}

bool known_type(int datatype) { return cop::lib::element_size(datatype) != 0; }

int place_of(int tid, Place& p) {
  Library& l = lib();
  if (tid <= 0) return PvmBadParam;
  if (tid == l.tid) {
    p = Place{info().chno, info().tkno};
    return 0;
  }
  return l.mapping.lookup(tid, p, l.map_how, info().tasks_per_channel, l.timeout_ms);
}

// The group's first `count` members (count < 0: all now), waiting until
// that many have joined, as pvm_barrier does.
int group_members(const char* name, int count, Group& g) {
  Library& l = lib();
  if (!name) return PvmBadParam;
  if (auto it = l.frozen.find(name); it != l.frozen.end() && (count < 0 || int(it->second.members.size()) >= count)) {
    g = it->second;
    g.total = int(g.members.size());
    if (count >= 0 && int(g.members.size()) > count) g.members.resize(size_t(count));
    return 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(l.timeout_ms ? l.timeout_ms : 1 << 30);
  int size = pvm_gsize(const_cast<char*>(name));
  if (size < 0) return size;
  while (count > size) {
    if (std::chrono::steady_clock::now() > deadline) return CopErrTimeout;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    size = pvm_gsize(const_cast<char*>(name));
    if (size < 0) return size;
  }
  const int n = count < 0 ? size : count;
  g = Group{};
  g.total = size;
  // Instance numbers of members that left stay unused (PvmNoInst): skip them.
  constexpr int kMaxGap = 1024;
  for (int inst = 0, gap = 0; int(g.members.size()) < n; ++inst) {
    const int tid = pvm_gettid(const_cast<char*>(name), inst);
    if (tid == PvmNoInst && ++gap <= kMaxGap) continue;
    if (tid < 0) return tid;
    gap = 0;
    Member m{tid, {}, inst};
    if (int rc = place_of(tid, m.place); rc < 0) {
      // A member that died may stay listed for a while after pvm_gsize no longer counts
      // it (the group server learns of the exit from the pvmd): it takes no part.
      if (rc == PvmNoTask) continue;
      return rc;
    }
    g.members.push_back(m);
    g.tc_mask |= bit(m.place.chno);
  }
  if (l.static_groups) l.frozen[name] = g;
  return 0;
}

// Sends frames of at most kMaxEntries commands; the first error wins.
int exchange_all(const std::vector<Message>& cmds, std::vector<Answer>* answers_out = nullptr) {
  std::vector<Answer> answers;
  if (answers_out) answers_out->clear();
  int first = 0;
  for (size_t at = 0; at < cmds.size(); at += cop::link::kMaxEntries) {
    const size_t n = std::min<size_t>(cop::link::kMaxEntries, cmds.size() - at);
    if (Error e = lib().port->exchange(std::span<const Message>(cmds.data() + at, n), answers); e != Error::none)
      return fail(code(e));
    for (const Answer& a : answers)
      if (a.error != Error::none && first == 0) first = code(a.error);
    if (answers_out) answers_out->insert(answers_out->end(), answers.begin(), answers.end());
  }
  return first;
}

// SETTC/SETBM answered "in use": a peer channel initialised the masks (SPMD).
bool refused_only_as_initialised(const std::vector<Answer>& a, size_t first_mask, size_t masks) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].error == Error::none) continue;
    if (i >= first_mask && i < first_mask + masks && a[i].error == Error::mask_in_use) continue;
    return false;
  }
  return true;
}

int first_error(const std::vector<Answer>& a) {
  for (const Answer& x : a)
    if (x.error != Error::none) return code(x.error);
  return 0;
}

// ---- the channel part of each collective ----

int channel_barrier(uint32_t tag, uint64_t mask) {
  std::vector<Message> f = {command(Opcode::LOCK), mask_command(Opcode::SETTC, tag, mask, 1),
                            mask_command(Opcode::SETBM, tag, mask, 1), command(Opcode::BENTRY, Space::GAS, tag),
                            command(Opcode::UNLOCK)};
  // One datagram in; the answers come back with the exit (copd holds them for it).
  auto& port = *lib().port;
  if (Error e = port.send_only(f); e != Error::none) return fail(code(e));
  Message exit;
  const Error waited = port.await(Wanted{ResultKind::barrier, tag, 1, 0}, std::span<Message>(&exit, 1), nullptr);
  std::vector<Answer> a;
  if (Error e = port.finish(a); e != Error::none) return fail(code(e));
  if (!refused_only_as_initialised(a, 1, 2)) return first_error(a);
  return fail(code(waited));
}

int channel_reduce(Opcode op, uint32_t tag, std::span<uint64_t> words, uint64_t tc, uint64_t bm, bool here_root) {
  std::vector<Message> f = {command(Opcode::LOCK), mask_command(Opcode::SETTC, tag, tc, words.size())};
  if (bm) f.push_back(mask_command(Opcode::SETBM, tag, bm, words.size()));
  for (size_t i = 0; i < words.size(); ++i) {
    Message m = command(op, Space::GAS, tag + uint32_t(i));
    cop::wire::set_payload(m, words[i]);
    f.push_back(m);
  }
  f.push_back(command(Opcode::UNLOCK));
  auto& port = *lib().port;
  std::vector<Answer> a;
  if (!here_root) {
    if (Error e = port.exchange(f, a); e != Error::none) return fail(code(e));
    return refused_only_as_initialised(a, 1, bm ? 2 : 1) ? 0 : first_error(a);
  }
  if (Error e = port.send_only(f); e != Error::none) return fail(code(e));
  std::vector<Message> results(words.size());
  const Error waited = port.await(Wanted{ResultKind::reduction, tag, uint32_t(words.size()), 0}, results, nullptr);
  if (Error e = port.finish(a); e != Error::none) return fail(code(e));
  if (!refused_only_as_initialised(a, 1, bm ? 2 : 1)) return first_error(a);
  if (waited != Error::none) return fail(code(waited));
  for (size_t i = 0; i < words.size(); ++i) words[i] = cop::wire::payload(results[i]);
  return 0;
}

int channel_bcast(Opcode op, uint32_t tag, std::span<const uint64_t> words, uint64_t mask) {
  std::vector<Message> f = {command(Opcode::LOCK), mask_command(Opcode::SETBM, tag, mask, words.size())};
  for (size_t i = 0; i < words.size(); ++i) {
    Message m = command(op, Space::GAS, tag + uint32_t(i));
    cop::wire::set_payload(m, words[i]);
    f.push_back(m);
  }
  f.push_back(command(Opcode::UNLOCK));
  std::vector<Answer> a;
  if (Error e = lib().port->exchange(f, a); e != Error::none) return fail(code(e));
  return first_error(a);
}

// ---- broadcast and multicast share everything but how recipients are named ----

int send_to(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
            int msgtag) {
  Library& l = lib();
  uint64_t foreign = 0;
  uint32_t local = 0;
  for (const Member& m : recipients) {
    if (m.tid == l.tid) continue;  // a broadcast is not sent back to its sender
    if (m.place.chno == info().chno)
      local++;
    else
      foreign |= bit(m.place.chno);
  }
  for (size_t at = 0; at < size_t(count); at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, size_t(count) - at);
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) words[i] = cop::lib::to_word(data, at + i, datatype);
    const uint32_t tag = uint32_t(msgtag) + uint32_t(at);
    if (local) {
      const uint64_t key = l.host->next_key(key_name, "", uint32_t(msgtag), uint32_t(at));
      if (int rc = l.host->publish(key, local, words); rc < 0) return fail(rc);
    }
    if (foreign)
      if (int rc = channel_bcast(cop::lib::bcast_opcode(datatype), tag, words, foreign); rc < 0) return rc;
  }
  return 0;
}

int receive_from(const char* key_name, void* data, int count, int datatype, const std::vector<Member>& recipients,
                 int msgtag, int srctid) {
  Library& l = lib();
  int src_chno = 0;
  if (srctid != -1) {
    Place p;
    if (int rc = place_of(srctid, p); rc < 0) return rc;
    src_chno = p.chno;
  }
  const bool src_local = src_chno == info().chno;
  uint32_t local_receivers = 0;
  for (const Member& m : recipients)
    if (m.place.chno == info().chno && m.tid != srctid) local_receivers++;
  if (local_receivers == 0) local_receivers = 1;
  for (size_t at = 0; at < size_t(count); at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, size_t(count) - at);
    std::vector<uint64_t> words(n);
    const uint32_t tag = uint32_t(msgtag) + uint32_t(at);
    const uint64_t key = l.host->next_key(key_name, "", uint32_t(msgtag), uint32_t(at));
    auto fetch = [&](std::span<uint64_t> out, const std::function<bool()>& filled) -> int {
      if (src_local) {
        // The sender is on this host: it fills the slot; nothing comes from the channel.
        const auto start = std::chrono::steady_clock::now();
        while (!filled()) {
          if (l.timeout_ms && std::chrono::steady_clock::now() - start > std::chrono::milliseconds(l.timeout_ms))
            return CopErrTimeout;
          std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return 0;
      }
      std::vector<Message> got(n);
      const Wanted w{ResultKind::bcast, tag, uint32_t(n), uint8_t(src_chno)};
      if (srctid != -1) {
        if (Error e = l.port->await(w, got, nullptr); e != Error::none) return fail(code(e));
      } else {
        // Any sender: it may be local (fills the slot) or remote (the channel).
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
        if (e == Error::timeout && filled()) return 0;
        if (e != Error::none) return fail(code(e));
      }
      for (size_t i = 0; i < n; ++i) out[i] = cop::wire::payload(got[i]);
      return 0;
    };
    if (int rc = l.host->receive(key, local_receivers, words, fetch); rc < 0) return fail(rc);
    for (size_t i = 0; i < n; ++i) cop::lib::from_word(data, at + i, datatype, words[i]);
  }
  return 0;
}

// cop_read/cop_write/cop_rmw: one opcode per element on a task address space.
int tas_access(const char* call, Opcode op, bool floating, void* data, int count, int datatype, int tid, int msgtag,
               int mode, bool keep_answers) {
  if (int rc = ready(); rc < 0) return rc;
  if (!known_type(datatype) || count < 0 || (count > 0 && !data) || msgtag < 0 ||
      (mode != COP_NORMAL && mode != COP_URGENT))
    return PvmBadParam;
  Place p;
  if (int rc = place_of(tid, p); rc < 0) return rc;
  if (uint64_t(msgtag) + uint64_t(count) > info().tas_words) {
    report(call, "tag + count beyond the task address space");
    return CopErrAddressRange;
  }
  return tas_run(op, floating, data, count, datatype, p, msgtag, mode, keep_answers);
}

int tas_run(Opcode op, bool floating, void* data, int count, int datatype, Place p, int msgtag, int mode,
            bool keep_answers) {
  if (count == 0) return 0;
  const bool urgent = mode == COP_URGENT;
  for (size_t at = 0; at < size_t(count); at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, size_t(count) - at);
    std::vector<Message> f;
    if (urgent && at == 0) f.push_back(command(Opcode::LOCK));
    const size_t first = f.size();
    for (size_t i = 0; i < n; ++i) {
      Message m = command(op, Space::TAS, cop::wire::Address::tas_tag(uint32_t(p.tkno), uint32_t(msgtag) + uint32_t(at + i)));
      m.ins.z = true;  // the address word's CHNO names the channel whose space is accessed
      m.ins.m = floating;
      m.addr.chno = uint8_t(p.chno);
      if (op != Opcode::RSRAM32 && op != Opcode::RSRAM64) cop::wire::set_payload(m, cop::lib::to_word(data, at + i, datatype));
      f.push_back(m);
    }
    if (urgent && at + n >= size_t(count)) f.push_back(command(Opcode::UNLOCK));
    std::vector<Answer> a;
    const int rc = exchange_all(f, &a);
    if (rc < 0) {
      if (urgent && at + n < size_t(count)) {  // do not leave the channel locked
        std::vector<Message> unlock = {command(Opcode::UNLOCK)};
        exchange_all(unlock);
      }
      return rc;
    }
    if (keep_answers)
      for (size_t i = 0; i < n; ++i) cop::lib::from_word(data, at + i, datatype, cop::wire::payload(a[first + i].data));
  }
  return 0;
}

}  // namespace

extern "C" {

int cop_mytid(void) {
  Library& l = lib();
  if (l.enrolled) return l.tid;
  const int tid = pvm_mytid();
  if (tid < 0) return tid;
  l.tid = tid;
  if (const char* a = std::getenv("COP_ACCESS"); a && std::strcmp(a, "normal") == 0) l.access = CopAccessNormal;
  if (const char* m = std::getenv("COP_MAPPING"); m && std::strcmp(m, "direct") == 0) l.map_how = CopMapDirect;
  if (const char* p = std::getenv("COP_POLL_US")) l.poll_us = std::clamp(std::atoi(p), 0, 100000);
  const int rc = open_channel(l.map_how == CopMapDirect ? -2 : -1);
  if (rc < 0) {
    l.host.reset();
    l.port.reset();
    return rc;
  }
  l.enrolled = true;
  return tid;
}

int cop_setopt(int what, int val) {
  Library& l = lib();
  switch (what) {
    case CopStaticGroups: {
      const int old = l.static_groups;
      if (val != 0 && val != 1) return PvmBadParam;
      l.static_groups = val;
      if (!val) l.frozen.clear();
      return old;
    }
    case CopTimeout: {
      if (val < 0) return PvmBadParam;
      const int old = l.timeout_ms;
      l.timeout_ms = val;
      if (l.port) l.port->set_link_options(link_options());
      if (l.host) l.host->set_timeout(val);
      return old;
    }
    case CopMapping:
    case CopAccess: {
      if (val != 0 && val != 1) return PvmBadParam;
      int& field = what == CopMapping ? l.map_how : l.access;
      const int old = field;
      if (old == val) return old;
      // Refused before anything changes: a re-enrolment would give this task a
      // new TKNO that tasks which already looked it up do not know.
      if (what == CopMapping && val == CopMapDirect && l.enrolled) {
        const Place d = cop::lib::direct_place(l.tid, info().tasks_per_channel);
        if (d.chno != info().chno) {
          report("cop_setopt", "direct mapping does not hold here: the tid's H field is not this host's channel");
          return CopErrMapping;
        }
        if (d.tkno == info().tkno) {  // the driver gave us the L field already: nothing to re-enrol
          field = val;
          return old;
        }
      }
      field = val;
      if (l.enrolled) {
        // Enrol again on the channel under the new rule (the driver's Pid table changes).
        l.mapping.forget();
        l.frozen.clear();
        if (int rc = open_channel(l.map_how == CopMapDirect ? -2 : -1); rc < 0) {
          field = old;
          l.mapping.forget();
          if (open_channel(l.map_how == CopMapDirect ? -2 : -1) < 0) l.enrolled = false;
          return rc;
        }
      }
      return old;
    }
  }
  return PvmBadParam;
}

int cop_getopt(int what) {
  const Library& l = lib();
  switch (what) {
    case CopStaticGroups: return l.static_groups;
    case CopMapping: return l.map_how;
    case CopAccess: return l.access;
    case CopTimeout: return l.timeout_ms;
  }
  return PvmBadParam;
}

int cop_notify(int what, int msgtag, int cnt, int* tids) {
  if (what == CopChannelDown) {
    if (msgtag < 0) return PvmBadParam;
    lib().notify_tag = msgtag;
    lib().notified = false;
    return 0;
  }
  return pvm_notify(what, msgtag, cnt, tids);
}

int cop_write(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_write", cop::lib::write_opcode(datatype), false, data, count, datatype, tid, msgtag, mode,
                    false);
}

int cop_read(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  return tas_access("cop_read", cop::lib::read_opcode(datatype), false, data, count, datatype, tid, msgtag, mode, true);
}

int cop_rmw(void* data, int count, int datatype, int tid, int msgtag, int mode) {
  // RMW adds in the 64-bit ALU (ch. IV, Table I), or in the FP unit for 64-bit doubles;
  // a PVM_FLOAT would be added as a double and rounded back: not float arithmetic.
  if (datatype == PVM_FLOAT) {
    if (int rc = ready(); rc < 0) return rc;
    report("cop_rmw", "PVM_FLOAT has no read-modify-write (use PVM_DOUBLE)");
    return CopErrBadType;
  }
  return tas_access("cop_rmw", cop::lib::rmw_opcode(datatype), cop::lib::rmw_floating(datatype), data, count, datatype,
                    tid, msgtag, mode, true);
}

int cop_barrier(char* group, int count, int msgtag) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || msgtag < 0 || count == 0 || count < -1) return PvmBadParam;
  Library& l = lib();
  Group g;
  if (int rc = group_members(group, count, g); rc < 0) return rc;
  uint32_t local = 0;
  bool member = false;
  for (const Member& m : g.members) {
    if (m.place.chno == info().chno) local++;
    member |= m.tid == l.tid;
  }
  if (!member) return PvmNotInGroup;
  if (int rc = take_tags("cop_barrier", msgtag, 1, Use::barrier, l.tags.scope(group)); rc < 0) return rc;
  const uint64_t key = l.host->next_key("barrier", group, uint32_t(msgtag), 0);
  std::vector<uint64_t> none;
  // fail(): a task that waited in the host area learns of a link failure here.
  const int rc = fail(l.host->gather(
      key, local, local - 1, true, none, [](std::span<uint64_t>, bool) {},
      [&](std::span<uint64_t>) { return g.tc_mask == bit(info().chno) ? 0 : channel_barrier(uint32_t(msgtag), g.tc_mask); }));
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
  Library& l = lib();
  if (!group || count < 0 || (count > 0 && !data) || msgtag < 0 || rootcount < 1 || !roots || func < COP_SUM ||
      func > COP_EXOR || !known_type(datatype))
    return PvmBadParam;
  const auto op = cop::lib::reduce_opcode(func, datatype);
  if (!op) return CopErrBadType;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  uint32_t local = 0, local_roots = 0;
  bool member = false, me_root = false;
  uint64_t bm = 0;
  for (int i = 0; i < rootcount; ++i) {
    const Member* root = by_inst(g, roots[i]);
    if (!root) return PvmNoInst;
    for (int j = 0; j < i; ++j)
      if (roots[j] == roots[i]) return PvmBadParam;  // a root named twice
    const Member& r = *root;
    bm |= bit(r.place.chno);
    if (r.place.chno == info().chno) local_roots++;
    me_root |= r.tid == l.tid;
  }
  for (const Member& m : g.members) {
    if (m.place.chno == info().chno) local++;
    member |= m.tid == l.tid;
  }
  if (!member) return PvmNotInGroup;
  if (int rc = take_tags("cop_reduce", msgtag, size_t(count), Use::reduce, l.tags.scope(group)); rc < 0) return rc;
  const bool here_root = local_roots > 0;
  for (size_t at = 0; at < size_t(count); at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, size_t(count) - at);
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) words[i] = cop::lib::to_word(data, at + i, datatype);
    const uint64_t key = l.host->next_key("reduce", group, uint32_t(msgtag), uint32_t(at));
    const uint32_t tag = uint32_t(msgtag) + uint32_t(at);
    // Readers: the local roots, except the last to arrive if it is one (it has the result itself).
    const uint32_t readers = local_roots - (me_root ? 1 : 0);
    const int rc = l.host->gather(
        key, local, readers, me_root, words,
        [&](std::span<uint64_t> slot, bool first) {
          for (size_t i = 0; i < n; ++i) slot[i] = first ? words[i] : cop::wire::combine(*op, slot[i], words[i]);
        },
        [&](std::span<uint64_t> folded) {
          if (g.tc_mask == bit(info().chno)) return 0;  // every member is local: the partial result is the result
          return channel_reduce(*op, tag, folded, g.tc_mask, bm, here_root);
        });
    if (rc < 0) return fail(rc);
    if (me_root)
      for (size_t i = 0; i < n; ++i) cop::lib::from_word(data, at + i, datatype, words[i]);
  }
  return 0;
}

int cop_bcast(void* data, int count, int datatype, char* group, int msgtag, int mode, int srctid) {
  if (int rc = ready(); rc < 0) return rc;
  Library& l = lib();
  if (!group || msgtag < 0 || count < 0 || (count > 0 && !data) || !known_type(datatype) ||
      (mode != COP_SEND && mode != COP_RECV) || (mode == COP_RECV && (srctid == l.tid || srctid < -1 || srctid == 0)))
    return PvmBadParam;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  if (mode == COP_RECV) {
    // The receiver must be a member (a broadcast goes to the members), and so must a named sender.
    bool member = false, src_member = srctid == -1;
    for (const Member& m : g.members) {
      member |= m.tid == l.tid;
      src_member |= m.tid == srctid;
    }
    if (!member) {
      report("cop_bcast", "this task is not a member of group '" + std::string(group) + "' (" +
                              std::to_string(g.members.size()) + " members)");
      return PvmNotInGroup;
    }
    if (!src_member) {
      Place p;
      if (int rc = place_of(srctid, p); rc < 0) return rc;  // an unknown tid: PvmNoTask
      report("cop_bcast", "the sender is not a member of group '" + std::string(group) + "'");
      return PvmNotInGroup;
    }
  }
  if (int rc = take_tags("cop_bcast", msgtag, size_t(count), Use::cast, l.tags.scope(group)); rc < 0) return rc;
  if (count == 0) return 0;
  const std::string key = std::string("bcast:") + group;
  if (mode == COP_SEND) return send_to(key.c_str(), data, count, datatype, g.members, msgtag);
  return receive_from(key.c_str(), data, count, datatype, g.members, msgtag, srctid);
}

int cop_mcast(void* data, int count, int datatype, int* tids, int numtasks, int msgtag, int mode, int srctid) {
  if (int rc = ready(); rc < 0) return rc;
  Library& l = lib();
  if (msgtag < 0 || numtasks < 1 || !tids || count < 0 || (count > 0 && !data) || !known_type(datatype) ||
      (mode != COP_SEND && mode != COP_RECV) || (mode == COP_RECV && (srctid == l.tid || srctid < -1 || srctid == 0)))
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
  if (int rc = take_tags("cop_mcast", msgtag, size_t(count), Use::cast, l.tags.scope("", scope_tids)); rc < 0)
    return rc;
  if (count == 0) return 0;
  if (mode == COP_SEND) return send_to(key.c_str(), data, count, datatype, recipients, msgtag);
  return receive_from(key.c_str(), data, count, datatype, recipients, msgtag, srctid);
}

int cop_gather(void* result, void* data, int count, int datatype, int msgtag, char* group, int rootginst) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || count < 0 || (count > 0 && !data) || msgtag < 0 || !known_type(datatype)) return PvmBadParam;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  const Member* root = by_inst(g, rootginst);
  if (!root) return PvmNoInst;
  const int size = int(g.members.size());
  if (root->tid == lib().tid && !result && count > 0) return PvmBadParam;
  // Each member's slice into its own task address space; the root reads them all.
  if (int rc = cop_write(data, count, datatype, lib().tid, msgtag, COP_NORMAL); rc < 0) return rc;
  if (int rc = cop_barrier(group, size, msgtag); rc < 0) return rc;
  if (root->tid == lib().tid) {
    const size_t esize = cop::lib::element_size(datatype);
    for (int i = 0; i < size; ++i)
      if (int rc = cop_read(static_cast<uint8_t*>(result) + size_t(i) * size_t(count) * esize, count, datatype,
                            g.members[size_t(i)].tid, msgtag, COP_NORMAL);
          rc < 0)
        return rc;
  }
  // Nobody writes the slices again before the root has them.
  return cop_barrier(group, size, msgtag);
}

int cop_scatter(void* result, void* data, int count, int datatype, int msgtag, char* group, int rootginst) {
  if (int rc = ready(); rc < 0) return rc;
  if (!group || count < 0 || (count > 0 && !result) || msgtag < 0 || !known_type(datatype)) return PvmBadParam;
  Group g;
  if (int rc = group_members(group, -1, g); rc < 0) return rc;
  const Member* root_member = by_inst(g, rootginst);
  if (!root_member) return PvmNoInst;
  const int size = int(g.members.size());
  const int root = root_member->tid;
  int me = -1;
  for (int i = 0; i < size; ++i)
    if (g.members[size_t(i)].tid == lib().tid) me = i;
  if (me < 0) return PvmNotInGroup;
  if (uint64_t(msgtag) + uint64_t(count) * uint64_t(size) > info().tas_words) {
    report("cop_scatter", "tag + count x group size beyond the root's task address space");
    return CopErrAddressRange;
  }
  if (root == lib().tid) {
    if (!data && count > 0) return PvmBadParam;
    if (int rc = cop_write(data, count * size, datatype, root, msgtag, COP_NORMAL); rc < 0) return rc;
  }
  if (int rc = cop_barrier(group, size, msgtag); rc < 0) return rc;
  if (int rc = cop_read(result, count, datatype, root, msgtag + me * count, COP_NORMAL); rc < 0) return rc;
  return cop_barrier(group, size, msgtag);
}

const char* cop_strerror(int rc) {
  if (rc >= 0) return "ok";
  if (rc <= -101 && rc >= -119) return cop::wire::error_name(static_cast<Error>(-rc - 100)).data();
  switch (rc) {
    case CopErrNoDriver: return "no channel driver (copdrv) at COP_DRIVER";
    case CopErrNotEnrolled: return "cop_mytid has not succeeded";
    case CopErrBadType: return "datatype and function the hardware does not have";
    case CopErrMapping: return "the tid mapping does not hold for a task";
    case CopErrTagOverlap: return "the tag's address range overlaps another operation's that may be in progress";
    case CopErrPartnerDied: return "a local task taking part in the operation died";
    case PvmNoTask: return "no such task";
    case PvmBadParam: return "bad parameter";
    case PvmNoInst: return "no such instance in the group";
    case PvmNotInGroup: return "not in the group";
    case PvmNoGroup: return "no such group";
    case PvmOutOfRes: return "out of resources (host area full)";
    default: return "PVM error (see pvm_perror)";
  }
}

int cop_exit(void) {
  Library& l = lib();
  l.host.reset();
  l.port.reset();
  l.enrolled = false;
  l.tags.clear();
  return 0;
}

int cop_modelled_cycles(unsigned long long* cycles) {
  if (int rc = ready(); rc < 0) return rc;
  if (!cycles) return PvmBadParam;
  *cycles = lib().port->window()->modelled_cycles.load();
  return 0;
}

int cop_channel(int* chno, int* tkno) {
  if (int rc = ready(); rc < 0) return rc;
  if (chno) *chno = info().chno;
  if (tkno) *tkno = info().tkno;
  return 0;
}

}  // extern "C"
