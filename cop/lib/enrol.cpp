// Enrolment and the calls around it (seed 000 ch. V): cop_mytid opens the
// task's channel (a driver::Port, direct or normal access), options,
// notification of a channel that went down, cop_exit, cop_strerror.
#include <pvm3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lib/library.h"
#include "link/auth.h"

namespace cop::lib {

using driver::Answer;
using wire::Error;
using wire::Message;
using wire::Opcode;

namespace {

// This PVM virtual machine's job nonce: a random number the machine's first task puts
// in PVM's mailbox, persistent (for the machine's life), which every later task reads.
// The first put wins (a put of a name held fails PvmExists: a test-and-set); a task
// that loses the race reads the winner's. Empty when the mailbox cannot say.
std::string machine_nonce() {
  char name[] = "copbench.cop.job";
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (const int got = pvm_recvinfo(name, 0, PvmMboxDefault); got >= 0) {
      char text[64] = {};
      const int old = pvm_setrbuf(got);
      const int rc = pvm_upkstr(text);
      pvm_setrbuf(old);
      pvm_freebuf(got);
      return rc < 0 ? std::string() : std::string(text);
    } else if (got != PvmNotFound) {
      return {};
    }
    char mine[24];
    std::snprintf(mine, sizeof mine, "%016llx", static_cast<unsigned long long>(link::random_nonce()));
    const int buf = pvm_mkbuf(PvmDataDefault);
    if (buf < 0) return {};
    const int old = pvm_setsbuf(buf);
    int rc = pvm_pkstr(mine);
    if (rc >= 0) rc = pvm_putinfo(name, buf, PvmMboxPersistent);
    pvm_setsbuf(old);
    pvm_freebuf(buf);
    if (rc >= 0) return mine;
    if (rc != PvmExists && rc != PvmDenied) return {};
  }
  return {};
}

// The task's job (cop.h "Jobs"): COP_JOB or the Slurm job, else this PVM virtual
// machine: its nonce in the mailbox (two virtual machines of one user on one host,
// two private pvmds, never share one), the user and the master host (the first of
// pvm_config). Without a nonce, the master host and the user only (one virtual machine
// per user and master host); empty when PVM cannot say (copdrv then names the job
// after the user).
std::string job_id() {
  if (std::string j = driver::default_job_id(); !j.empty()) return j;
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  if (pvm_config(&nhost, &narch, &hosts) < 0 || nhost < 1 || !hosts || !hosts[0].hi_name) return {};
  const std::string nonce = machine_nonce();
  std::string id = "pvm:" + (nonce.empty() ? std::string() : nonce + ":") + "uid" + std::to_string(::getuid()) + ":" +
                   std::string(hosts[0].hi_name);
  return id.size() <= link::kMaxJobId ? id : id.substr(0, link::kMaxJobId);
}

// Registers with the node's driver (asking for TKNO `wanted_tkno`), checks the
// channel with the controller, clears the task address space and publishes this
// task's (CHNO, TKNO) for the table mapping.
int open_channel(int wanted_tkno) {
  Library& l = lib();
  l.host.reset();
  l.port.reset();
  l.job = job_id();  // also in every operation identity (identity.cpp)
  auto r = driver::open_port(driver::default_driver_dir(), l.access == CopAccessDirect, l.tid, wanted_tkno,
                             link_options(), l.job);
  if (r.status < 0) {
    report("cop_mytid", r.error);
    return r.status;
  }
  l.port = std::move(r.port);
  l.host = std::make_unique<HostArea>(l.port->window(), int(l.port->info().tkno));
  l.host->set_timeout(l.timeout_ms);
  l.host->set_link_check([] { return lib().port && lib().port->driver_gone(); });
  l.host->set_partition(uint8_t(l.port->info().ppn));
  // ch. V: verify the channel is healthy and learn its number from the controller.
  std::vector<Answer> a;
  const std::vector<Message> probe = {commands::command(sender(), Opcode::PROBE)};
  if (Error e = l.port->exchange(probe, a); e != Error::none) return code(e);
  if (a[0].error != Error::none) return code(a[0].error);
  if (!a[0].has_data || a[0].data.addr.chno != info().chno) {
    report("cop_mytid", "the controller names another channel than the driver");
    return CopErrMapping;
  }
  // Its controller's number (SAS word 0, ch. V): masks are built per controller.
  l.cntno = a[0].data.addr.cntno;
  l.extends = a[0].data.ins.x;
  if (l.map_how == CopMapDirect) {
    const Place d = direct_place(l.tid, info().tasks_per_channel);
    if (d.chno != info().chno || d.tkno != info().tkno || d.cntno != l.cntno) {
      report("cop_mytid", "direct mapping does not hold here: the tid's H field is not this host's channel");
      return CopErrMapping;
    }
  }
  // The task's address space starts cleared, whatever an earlier task with this TKNO
  // left there (ch. V: the controller clears it when a task ends; libcop does not rely
  // on that). Before the mapping is published, so no other task addresses it yet.
  std::vector<uint64_t> zeros(info().tas_words, 0);
  const TasAccess clear{.op = Opcode::WSRAM64, .data = zeros.data(), .count = int(zeros.size()),
                        .datatype = PVM_LONG, .mode = COP_NORMAL};
  if (int rc = tas_run(clear, Place{info().chno, info().tkno, l.cntno}); rc < 0) {
    report("cop_mytid", "clearing the task address space failed");
    return rc;
  }
  return l.mapping.publish(l.tid, Place{info().chno, info().tkno, l.cntno, int(info().ppn)});
}

// The channel under the selected mapping: the direct mapping has the driver give
// the TKNO the tid's L field names (-2); the table takes any free one (-1).
int open_mapped_channel() { return open_channel(lib().map_how == CopMapDirect ? -2 : -1); }

}  // namespace
}  // namespace cop::lib

using namespace cop::lib;

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
  if (const char* w = std::getenv("COP_GROUP_WINDOWS"); w && *w) {
    const int n = std::atoi(w);
    if (n < 1 || n > 64 || (n & (n - 1)) != 0) {
      report("cop_mytid", std::string("COP_GROUP_WINDOWS=") + w + " is not a power of two from 1 to 64");
      return PvmBadParam;
    }
    l.group_windows = uint32_t(n);
  }
  const int rc = open_mapped_channel();
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
    case CopGroupCache: {
      if (val != 0 && val != 1) return PvmBadParam;
      const int old = l.group_cache;
      l.group_cache = val;
      if (!val) l.views.clear();
      return old;
    }
    case CopGroupWindows: {
      if (val < 1 || val > 64 || (val & (val - 1)) != 0) return PvmBadParam;
      const int old = int(l.group_windows);
      // Windows already looked up were under the old count: looked up (and checked) again.
      if (val != old) {
        l.group_windows = uint32_t(val);
        l.windows.clear();
        l.windows_agreed = false;
      }
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
        const Place d = direct_place(l.tid, info().tasks_per_channel);
        if (d.chno != info().chno || d.cntno != l.cntno) {
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
        l.views.clear();
        if (int rc = open_mapped_channel(); rc < 0) {
          field = old;
          l.mapping.forget();
          if (open_mapped_channel() < 0) l.enrolled = false;
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
    case CopGroupWindows: return int(l.group_windows);
    case CopGroupCache: return l.group_cache;
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

const char* cop_strerror(int rc) {
  if (rc >= 0) return "ok";
  if ((rc <= -101 && rc >= -119) || rc == CopErrLockTimeout || rc == CopErrVoided || rc == CopErrEpochLost)
    return cop::wire::error_name(static_cast<Error>(-rc - 100)).data();
  switch (rc) {
    case CopErrNoDriver: return "no channel driver (copdrv) at COP_DRIVER";
    case CopErrNotEnrolled: return "cop_mytid has not succeeded";
    case CopErrBadType: return "datatype and function the hardware does not have";
    case CopErrMapping: return "the tid mapping does not hold for a task";
    case CopErrTagOverlap: return "the tag's address range overlaps another operation's that may be in progress";
    case CopErrNoWindow: return "every group window of the global address space is taken by other groups";
    case CopErrMismatch: return "the tasks of the collective disagree on its count, datatype or root";
    case CopErrPartnerDied: return "a local task taking part in the operation died";
    case CopErrNotPermitted: return "copdrv admits only its job's user, or the job is another user's";
    case CopErrNoPartition: return "every partition of the controller belongs to another job";
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
  l.views.clear();  // this task's place may change when it enrols again
  // pvm_exit drops PVM's message handlers and notifies: set up again at the next group call.
  l.notice_handler = false;
  l.watched.clear();
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
