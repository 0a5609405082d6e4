// tid -> (channel, task number), both mappings (mapping.h).
#include "lib/mapping.h"

#include <pvm3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <cop/cop.h>
#include <cop/layout.h>
#include <fmt/format.h>

namespace cop::lib {

namespace {

// The mailbox entry where task `tid` publishes its (CHNO, TKNO).
std::string entry_name(int tid) { return fmt::format("copbench.cop.{:x}", tid); }

// A PVM tid: bits 29..18 the host's number in the virtual machine (H field),
// bits 17..0 the task on that host (L field).
constexpr int kHostShift = 18;
constexpr uint32_t kHostMask = 0xFFF;
constexpr uint32_t kLocalMask = 0x3FFFF;

}  // namespace

int per_controller() {
  const char* k = std::getenv("COP_PER_CONTROLLER");
  const int n = k && *k ? std::atoi(k) : 64;
  return n >= 1 && n <= layout::kMaxChannels ? n : layout::kMaxChannels;
}

Place direct_place(int tid, uint32_t tasks_per_channel) {
  const uint32_t host = (uint32_t(tid) >> kHostShift) & kHostMask, local = uint32_t(tid) & kLocalMask;
  const int k = per_controller(), tkno = int(local) % int(tasks_per_channel ? tasks_per_channel : 1);
  if (host == 0) return Place{0, tkno, 0};  // no host number: names no channel (the caller refuses it)
  const layout::Seat seat = layout::seat_of(int(host), k);  // the one layout (cop/layout.h)
  return Place{seat.chno, tkno, seat.cntno};
}

int Mapping::publish(int tid, Place p) {
  const int buf = pvm_mkbuf(PvmDataDefault);
  if (buf < 0) return buf;
  const int old = pvm_setsbuf(buf);
  int place[4] = {p.chno, p.tkno, p.cntno, p.ppn};
  int rc = pvm_pkint(place, 4, 1);
  const std::string name = entry_name(tid);
  if (rc >= 0) rc = pvm_putinfo(const_cast<char*>(name.c_str()), buf, PvmMboxDefault);
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
      int place[4] = {0, 0, 0, -1};
      const int rc = pvm_upkint(place, 4, 1);
      pvm_setrbuf(old);
      pvm_freebuf(buf);
      if (rc < 0) return rc;
      out = Place{place[0], place[1], place[2], place[3]};
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
