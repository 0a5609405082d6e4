// lock and shared variables: requests to the server task (lock_server.cpp). PVM has no
// fence: every request that changes state is acknowledged, so nothing is outstanding.
#include <pvm3.h>

#include "pvm/lock_server.h"
#include "pvm/pvm_backend.h"

namespace copbench::pvm {

std::int64_t PvmBackend::server_call(int op, int a, int b, std::int64_t value, bool wants_reply,
                                     std::int64_t value2) {
  int header[3] = {op, a, b};
  long values[2] = {static_cast<long>(value), static_cast<long>(value2)};
  long v = 0;
  pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
  pvm_check(pvm_pkint(header, 3, 1), "pvm_pkint");
  pvm_check(pvm_pklong(values, 2, 1), "pvm_pklong");
  pvm_check(pvm_send(server_tid_, kServerRequestTag), "pvm_send");
  if (!wants_reply) return 0;
  pvm_check(pvm_recv(server_tid_, kServerReplyTag), "pvm_recv");
  pvm_check(pvm_upklong(&v, 1, 1), "pvm_upklong");
  return v;
}

void PvmBackend::lock(int lock_id) { server_call(kServerLock, lock_id % kLocks, 0, 0, true); }

void PvmBackend::unlock(int lock_id) { server_call(kServerUnlock, lock_id % kLocks, 0, 0, false); }

std::int64_t PvmBackend::shared_read(int owner, int index) {
  return server_call(kServerRead, owner, index, 0, true);
}

void PvmBackend::shared_write(int owner, int index, std::int64_t value) {
  server_call(kServerWrite, owner, index, value, true);
}

std::int64_t PvmBackend::shared_compare_swap(int owner, int index, std::int64_t expected, std::int64_t desired) {
  return server_call(kServerCompareSwap, owner, index, expected, true, desired);
}

std::int64_t PvmBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  return server_call(kServerFetchAdd, owner, index, add, true);
}

}  // namespace copbench::pvm
