// The lock and shared-variable server: PVM has no shared memory and no lock, and its
// users build both as a task that owns the state and answers messages. Requests come in
// on kServerRequestTag as (op, a, b, value); lock grants and read / write / rmw answers go
// back on kServerReplyTag. Requests are served in arrival order, one at a time, which is
// what makes them atomic; waiting lockers queue FIFO.
#include <pvm3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <deque>
#include <vector>

#include "pvm/lock_server.h"
#include "pvm/pvm_backend.h"

namespace copbench::pvm {

namespace {

void reply(int tid, std::int64_t value) {
  pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend (server reply)");
  long v = static_cast<long>(value);
  pvm_check(pvm_pklong(&v, 1, 1), "pvm_pklong (server reply)");
  pvm_check(pvm_send(tid, kServerReplyTag), "pvm_send (server reply)");
}

// The server's state: every rank's shared words, each lock's holder and FIFO of waiters.
struct ServerState {
  explicit ServerState(int nodes) : words(static_cast<std::size_t>(nodes) * Backend::kSharedWords, 0) {}
  std::vector<std::int64_t> words;
  std::vector<int> holder = std::vector<int>(Backend::kLocks, 0);
  std::vector<std::deque<int>> waiting = std::vector<std::deque<int>>(Backend::kLocks);
};

// Receives and answers one request; false on kServerStop.
bool serve_one(ServerState& st) {
  const int buf = pvm_check(pvm_recv(-1, kServerRequestTag), "pvm_recv (server request)");
  int bytes = 0, tag = 0, from = 0;
  pvm_check(pvm_bufinfo(buf, &bytes, &tag, &from), "pvm_bufinfo");
  int header[3] = {0, 0, 0};
  long values[2] = {0, 0};
  pvm_check(pvm_upkint(header, 3, 1), "pvm_upkint (server request)");
  pvm_check(pvm_upklong(values, 2, 1), "pvm_upklong (server request)");
  const long value = values[0];
  const int op = header[0], a = header[1], b = header[2];
  const std::size_t word = static_cast<std::size_t>(a) * Backend::kSharedWords + static_cast<std::size_t>(b);
  const auto id = static_cast<std::size_t>(a);
  switch (op) {
    case kServerStop:
      return false;
    case kServerLock:
      if (st.holder[id] == 0) {
        st.holder[id] = from;
        reply(from, 0);
      } else {
        st.waiting[id].push_back(from);
      }
      break;
    case kServerUnlock:
      if (st.waiting[id].empty()) {
        st.holder[id] = 0;
      } else {
        st.holder[id] = st.waiting[id].front();
        st.waiting[id].pop_front();
        reply(st.holder[id], 0);
      }
      break;
    case kServerRead:
      reply(from, st.words[word]);
      break;
    case kServerWrite:
      st.words[word] = value;
      reply(from, 0);  // acknowledged, so a write is complete when it returns
      break;
    case kServerFetchAdd:
      reply(from, st.words[word]);
      st.words[word] += value;
      break;
    case kServerCompareSwap:
      reply(from, st.words[word]);
      if (st.words[word] == value) st.words[word] = values[1];
      break;
    default:
      break;
  }
  return true;
}

}  // namespace

int run_server(int nodes, int timeout_s) {
  if (timeout_s > 0) ::alarm(static_cast<unsigned>(timeout_s));  // never outlive the run
  try {
    pvm_setopt(PvmAutoErr, 0);  // errors are reported here, in one line
    pvm_check(pvm_mytid(), "pvm_mytid (lock server)");
    ServerState state(nodes);
    while (serve_one(state)) {
    }
  } catch (const std::exception& e) {
    // The ranks waiting on a reply end by their watchdog; this says why.
    std::fprintf(stderr, "copbench pvm lock server: %s\n", e.what());
    pvm_exit();
    return 1;
  }
  pvm_exit();
  return 0;
}

}  // namespace copbench::pvm
