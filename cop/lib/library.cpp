// libcop's state, tids to channels and errors (library.h); groups in groups.cpp.
#include "lib/library.h"

#include <pvm3.h>

#include <algorithm>
#include <cstdio>

#include "lib/elements.h"

namespace cop::lib {

using driver::Answer;
using wire::Error;
using wire::Message;

Library& lib() {
  static Library l;
  return l;
}

const driver::ChannelInfo& info() { return lib().port->info(); }

commands::Sender sender() { return commands::Sender{info().tkno, static_cast<uint8_t>(info().ppn), lib().op_id}; }

driver::LinkOptions link_options() {
  driver::LinkOptions o;
  o.wait_timeout_ms = lib().timeout_ms;
  o.poll_us = lib().poll_us;
  return o;
}

int code(Error e) { return e == Error::none ? 0 : -(100 + int(e)); }

uint64_t channel_bit(int chno) { return uint64_t{1} << (chno - 1); }

bool on_this_host(const Place& p) { return p.cntno == lib().cntno && p.chno == info().chno; }
uint64_t local_channel_bit(const Place& p) { return p.cntno == lib().cntno ? channel_bit(p.chno) : 0; }
uint64_t controller_bit(const Place& p) { return uint64_t{1} << (p.cntno & 63); }
uint64_t this_controller_bit() { return uint64_t{1} << (lib().cntno & 63); }
uint64_t level2(uint64_t controllers) { return (controllers & ~this_controller_bit()) ? controllers : 0; }
bool all_on_this_host(const Group& g) { return g.tc_mask == channel_bit(info().chno) && level2(g.l2_mask) == 0; }

commands::Burst two_level(const commands::Burst& b, uint64_t l2_tc, uint64_t l2_bm) {
  if (l2_tc == 0) return b;
  bool has_bm = false;
  for (const Message& m : b) has_bm |= m.ins.opcode == wire::Opcode::SETBM;
  commands::Burst out;
  auto twin = [&](const Message& m, wire::Opcode op, uint64_t mask) {
    Message x = m;
    x.ins.opcode = op;
    x.ins.x = true;
    x.set_data64(mask);
    out.push_back(x);
  };
  for (const Message& m : b) {
    const wire::Opcode op = m.ins.opcode;
    if (op == wire::Opcode::SETTC || op == wire::Opcode::SETBM) {
      if (m.data64() != 0) out.push_back(m);
      if (op == wire::Opcode::SETTC) twin(m, op, l2_tc);
      if (l2_bm != 0 && (op == wire::Opcode::SETBM || !has_bm)) twin(m, wire::Opcode::SETBM, l2_bm);
      continue;
    }
    out.push_back(m);
    if (op == wire::Opcode::BENTRY || op == wire::Opcode::BCAST32 || op == wire::Opcode::BCAST64 ||
        wire::is_reduction(op))
      out.back().ins.x = true;
  }
  return out;
}

CastPlan cast_plan(const std::vector<Member>& recipients) {
  CastPlan p;
  for (const Member& m : recipients) {
    p.here_hosts |= local_channel_bit(m.place);
    p.controllers |= controller_bit(m.place);
  }
  p.designated = p.here_hosts & (~p.here_hosts + 1);
  return p;
}

size_t mask_commands(const commands::Burst& b) {
  return size_t(std::count_if(b.begin(), b.end(), [](const Message& m) {
    return m.ins.opcode == wire::Opcode::SETTC || m.ins.opcode == wire::Opcode::SETBM;
  }));
}

void report(const char* call, const std::string& why) {
  std::fprintf(stderr, "libcop [t%x]: %s: %s\n", unsigned(lib().tid), call, why.c_str());
}

int fail_and_notify(int rc) {
  Library& l = lib();
  if ((rc == CopErrLinkDown || rc == CopErrRetryLimit) && l.notify_tag >= 0 && !l.notified) {
    l.notified = true;
    // The notify message goes to this task itself (cop_notify(CopChannelDown, tag)):
    // a PVM failure here is said on stderr, and the caller still gets rc.
    const int buf = pvm_mkbuf(PvmDataDefault);
    const int old = pvm_setsbuf(buf);
    int v = rc;
    int sent = pvm_pkint(&v, 1, 1);
    if (sent >= 0) sent = pvm_send(l.tid, l.notify_tag);
    if (sent < 0) report("cop_notify", "cannot send the channel-down notify message: PVM error " + std::to_string(sent));
    pvm_setsbuf(old);
    pvm_freebuf(buf);
  }
  return rc;
}

int ready() { return lib().enrolled ? 0 : CopErrNotEnrolled; }

bool known_type(int datatype) { return element_size(datatype) != 0; }

int place_of(int tid, Place& p) {
  Library& l = lib();
  if (tid <= 0) return PvmBadParam;
  if (tid == l.tid) {
    p = Place{info().chno, info().tkno, l.cntno, int(info().ppn)};
    return 0;
  }
  return l.mapping.lookup(tid, p, l.map_how, info().tasks_per_channel, l.timeout_ms);
}

const Member* by_inst(const Group& g, int inst) {
  for (const Member& m : g.members)
    if (m.inst == inst) return &m;
  return nullptr;
}

int take_tags(const char* call, int first, size_t count, Use use, int scope) {
  if (uint64_t(uint32_t(first)) + count > info().gas_words) {
    report(call, "tag " + std::to_string(first) + " + " + std::to_string(count) +
                     " words beyond the global address space (" + std::to_string(info().gas_words) + " words)");
    return CopErrAddressRange;
  }
  std::string why;
  if (int rc = lib().tags.take(uint32_t(first), uint32_t(count), use, scope, why); rc < 0) {
    report(call, why);
    return rc;
  }
  return 0;
}

void unsettle(int first, size_t count) {
  if (first < 0 || count == 0 || !lib().port) return;
  driver::Window& w = *lib().port->window();
  const driver::UnsettledRange r{uint32_t(first), uint32_t(std::min<size_t>(count, UINT32_MAX)), info().ppn};
  driver::lock_robust(&w.settle_lock);
  bool known = false;
  int same_job = -1;  // the last range of this partition
  for (uint32_t i = 0; i < w.unsettled_count; ++i) {
    const driver::UnsettledRange& u = w.unsettled[i];
    if (u.ppn != r.ppn) continue;
    known |= u.first == r.first && u.count == r.count;
    same_job = int(i);
  }
  if (!known && w.unsettled_count < uint32_t(driver::kUnsettledRanges)) {
    w.unsettled[w.unsettled_count++] = r;
  } else if (!known && same_job >= 0) {
    // The list is full: the job's last entry grows to cover this range too (voiding more
    // words than failed is safe for this channel's calls; the others on them get
    // CopErrVoided). Another job's entries are not ours to grow: their words are another
    // partition's. (Full of other jobs' ranges, this one is not kept: the operation
    // identity still keeps what is left of it from being taken as a later call's.)
    driver::UnsettledRange& last = w.unsettled[same_job];
    const uint64_t end = std::max(uint64_t(last.first) + last.count, uint64_t(r.first) + r.count);
    last.first = std::min(last.first, r.first);
    last.count = uint32_t(end - last.first);
  }
  pthread_mutex_unlock(&w.settle_lock);
}

int settle() {
  Library& l = lib();
  driver::Window& w = *l.port->window();
  if (__atomic_load_n(&w.unsettled_count, __ATOMIC_ACQUIRE) == 0) return 0;
  // Held while voiding: another local task's channel part waits until the words it may
  // be about to use are voided, and no range is voided twice (a second VOID could void
  // the next operation there, begun by the first).
  driver::lock_robust(&w.settle_lock);
  const uint32_t ppn = info().ppn;
  int rc = 0;
  // Only this job's ranges: a VOID goes to the sender's partition, so another job's range
  // voided here would void this job's operations on the same words and leave its own.
  for (uint32_t i = w.unsettled_count; i-- > 0 && rc == 0;) {
    const driver::UnsettledRange r = w.unsettled[i];
    if (r.ppn != ppn) continue;
    std::vector<Message> voids;
    commands::append_masks(voids, sender(), wire::Opcode::SETTC, r.first, 0, r.count);  // an empty mask: VOID
    // This call's identity: the controller spares this round's operation (another local
    // or remote channel of the call may have set it up already) while it voids older ones.
    for (Message& v : voids) v.op_id = l.op_id;
    const size_t most = l.port->max_commands();
    for (size_t at = 0; at < voids.size() && rc == 0; at += most) {
      std::vector<Answer> a;  // a NACK (words outside the space) leaves nothing to void
      const size_t n = std::min(most, voids.size() - at);
      if (Error e = l.port->exchange(std::span<const Message>(voids.data() + at, n), a); e != Error::none)
        rc = fail_and_notify(code(e));
    }
    if (rc != 0) break;
    // The VOID's ACK came after anything the voided operation sent this channel.
    driver::forget_results(w, uint8_t(ppn), r.first, r.count, true, l.op_id);  // not this call's round or a later one's
    std::copy(w.unsettled + i + 1, w.unsettled + w.unsettled_count, w.unsettled + i);
    w.unsettled_count--;
  }
  pthread_mutex_unlock(&w.settle_lock);
  return rc;
}

void expect_local_members(const Group& g) {
  std::vector<std::pair<int, int>> here;
  for (const Member& m : g.members)
    if (on_this_host(m.place)) here.emplace_back(int(m.place.tkno), m.tid);
  lib().host->expect_members(std::move(here));
}

int void_for_ended_member(int rc, int first, size_t count) {
  if (rc != CopErrTaskEnded) return rc;
  unsettle(first, count);
  settle();  // a link error here leaves the range unsettled: the channel's next collective voids it
  return rc;
}

int exchange_all(const std::vector<Message>& cmds, std::vector<Answer>* answers_out) {
  std::vector<Answer> answers;
  if (answers_out) answers_out->clear();
  int first = 0;
  const size_t most = lib().port->max_commands();
  for (size_t at = 0; at < cmds.size(); at += most) {
    const size_t n = std::min(most, cmds.size() - at);
    if (Error e = lib().port->exchange(std::span<const Message>(cmds.data() + at, n), answers); e != Error::none)
      return fail_and_notify(code(e));
    for (const Answer& a : answers)
      if (a.error != Error::none && first == 0) first = code(a.error);
    if (answers_out) answers_out->insert(answers_out->end(), answers.begin(), answers.end());
  }
  return first;
}

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

}  // namespace cop::lib
