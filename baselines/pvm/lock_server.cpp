// The lock and shared-variable server: PVM has no shared memory and no lock, and its
// users build both as a task that owns the state and answers messages. Requests come in
// on kServerRequestTag as (op, a, b, value); lock grants and read / write / rmw answers go
// back on kServerReplyTag. Requests are served in arrival order, one at a time, which is
// what makes them atomic; waiting lockers queue FIFO.
#include <pvm3.h>
#include <unistd.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "pvm/lock_server.h"
#include "pvm/pvm_backend.h"

namespace copbench::pvm {

int run_server(int nodes, int timeout_s) {
  if (timeout_s > 0) ::alarm(static_cast<unsigned>(timeout_s));  // never outlive the run
  if (pvm_mytid() < 0) return 1;
  std::vector<std::int64_t> words(static_cast<std::size_t>(nodes) * Backend::kSharedWords, 0);
  std::vector<int> holder(Backend::kLocks, 0);
  std::vector<std::deque<int>> waiting(Backend::kLocks);

  auto reply = [](int tid, std::int64_t value) {
    pvm_initsend(PvmDataDefault);
    long v = static_cast<long>(value);
    pvm_pklong(&v, 1, 1);
    pvm_send(tid, kServerReplyTag);
  };

  for (;;) {
    int buf = pvm_recv(-1, kServerRequestTag);
    if (buf < 0) return 1;
    int bytes = 0, tag = 0, from = 0;
    pvm_bufinfo(buf, &bytes, &tag, &from);
    int header[3] = {0, 0, 0};
    long values[2] = {0, 0};
    pvm_upkint(header, 3, 1);
    pvm_upklong(values, 2, 1);
    const long value = values[0];
    const int op = header[0], a = header[1], b = header[2];
    const std::size_t word = static_cast<std::size_t>(a) * Backend::kSharedWords + static_cast<std::size_t>(b);
    switch (op) {
      case kServerStop:
        pvm_exit();
        return 0;
      case kServerLock: {
        const auto id = static_cast<std::size_t>(a);
        if (holder[id] == 0) {
          holder[id] = from;
          reply(from, 0);
        } else {
          waiting[id].push_back(from);
        }
        break;
      }
      case kServerUnlock: {
        const auto id = static_cast<std::size_t>(a);
        if (waiting[id].empty()) {
          holder[id] = 0;
        } else {
          holder[id] = waiting[id].front();
          waiting[id].pop_front();
          reply(holder[id], 0);
        }
        break;
      }
      case kServerRead:
        reply(from, words[word]);
        break;
      case kServerWrite:
        words[word] = value;
        reply(from, 0);  // acknowledged, so a write is complete when it returns
        break;
      case kServerFetchAdd:
        reply(from, words[word]);
        words[word] += value;
        break;
      case kServerCompareSwap:
        reply(from, words[word]);
        if (words[word] == value) words[word] = values[1];
        break;
      default:
        break;
    }
  }
}

}  // namespace copbench::pvm
