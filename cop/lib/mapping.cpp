#include "lib/mapping.h"

#include <pvm3.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <cop/cop.h>
#include <fmt/format.h>

namespace cop::lib {

namespace {

std::string entry_name(int tid) { return fmt::format("copbench.cop.{:x}", tid); }

}  // namespace

Place direct_place(int tid, uint32_t tasks_per_channel) {
  return Place{(tid >> 18) & 0xFFF, int(uint32_t(tid) & 0x3FFFF) % int(tasks_per_channel ? tasks_per_channel : 1)};
}

int Mapping::publish(int tid, Place p) {
  const int buf = pvm_mkbuf(PvmDataDefault);
  if (buf < 0) return buf;
  const int old = pvm_setsbuf(buf);
  int v[2] = {p.chno, p.tkno};
  pvm_pkint(v, 2, 1);
  const std::string name = entry_name(tid);
  int rc = pvm_putinfo(const_cast<char*>(name.c_str()), buf, PvmMboxDefault);
  pvm_setsbuf(old);
  pvm_freebuf(buf);
  if (rc >= 0) {
    table_[tid] = p;
    rc = 0;
  }
  return rc;
}

int Mapping::lookup(int tid, Place& out, int how, uint32_t tasks_per_channel, int timeout_ms) {
  if (auto it = table_.find(tid); it != table_.end()) {
    out = it->second;
    return 0;
  }
  // A tid that names no task fails at once (PvmNoTask from the pvmd), rather than after
  // waiting for a mailbox entry that never comes, or (direct mapping) naming some other
  // task's address space.
  if (const int st = pvm_pstat(tid); st < 0) return st == PvmSysErr ? st : PvmNoTask;
  if (how == CopMapDirect) {
    out = direct_place(tid, tasks_per_channel);
    table_[tid] = out;
    return 0;
  }
  const std::string name = entry_name(tid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms > 0 ? timeout_ms : 10000);
  for (int polls = 0;;) {
    const int buf = pvm_recvinfo(const_cast<char*>(name.c_str()), 0, PvmMboxDefault);
    if (buf > 0) {
      const int old = pvm_setrbuf(buf);
      int v[2] = {0, 0};
      const int rc = pvm_upkint(v, 2, 1);
      pvm_setrbuf(old);
      pvm_freebuf(buf);
      if (rc < 0) return rc;
      out = Place{v[0], v[1]};
      table_[tid] = out;
      return 0;
    }
    // Not enrolled in libcop yet: it publishes at cop_mytid (unless it exits first).
    if (std::chrono::steady_clock::now() > deadline) return CopErrMapping;
    if (++polls % 50 == 0)
      if (pvm_pstat(tid) < 0) return PvmNoTask;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace cop::lib
