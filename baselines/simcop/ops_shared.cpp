// sim-cop's shared words and lock (simcop_backend.h), as the live cop backend has them
// (baselines/cop/shared.cpp): rank r's words are words 0..63 of its task address space
// (task TKNO 1 on its channel); cop_read is RSRAM64, cop_rmw RMW64 (the old value back),
// COP_NORMAL (no LOCK), one command per word (cop/lib/tas.cpp, commands::tas_access). A
// space on another level-1 goes through the level 2: X, with the owner's CNTNO in the
// address (seed 000 ch. V; Z names the channel).
//
// lock: the live backend's ticket lock (cop_rmw on rank 0's "next ticket" word, cop_read
// of its "now serving" word until it shows the ticket, cop_rmw on "now serving" to
// release), with one difference: a waiter sends its first read one controller cycle
// after the release that hands it the lock is sent, and reads back to back from there
// until the word shows its ticket, where the live backend reads back to back from the
// start. That is the ideal backoff (proportional backoff, Mellor-Crummey and Scott, ACM
// TOCS 9(1), 1991, with its wait exactly the waiter's turn): every read sent earlier
// would find the lock held by another, and the simulation knows when the release is
// sent (System::LockTurns). A hand-over is the holder's release reaching the word and
// the next one's read bringing it back, priced by the controller core and the links as
// every command; the others send nothing meanwhile. A lock is a few commands per
// acquire: 4096 nodes on `thesis` simulate in seconds (issue 36).
//
// Before (to 2026-11-28) a waiter k places back waited (k - 1) x its fastest read yet,
// then read again. As the what-if runs it (one acquire a rank after a warm-up one) the
// results at 2 to 64 nodes on `present` are this rule's (there that estimate was exact:
// a hand-over is one read's round trip); with 3 acquires a rank back to back, 8 nodes
// 9.42 -> 8.77 us and 64 nodes 65.96 -> 65.50 us. From 128 nodes on `present` lower (the
// estimate fell short and waiters read through the level 2 while the lock was held:
// 388 -> 263 us at 128 nodes, 1826 -> 1431 us at 512). On `thesis` every figure changed:
// at 2 nodes the next in line read back to back, out of step with the release
// (1.66 -> 1.59 us); from 4 nodes each waiter's first read queued behind the other
// n - 1 at the controller (at 64 nodes 64 reads of 20 cycles each, 12.8 us), so its
// estimate of a hand-over was far too long and the lock stood idle between holders
// (820 us at 64 nodes, now 46.9 us); from 128 nodes the reads of those who woke early
// kept the level 2's link to level-1 0 busy (56.8 ms at 512 nodes and 14 s of CPU, now
// 0.83 ms and 0.4 s; 4096 nodes did not finish in 400 s, now 7.07 ms in 7 s of CPU).
// The old rule with only its failing reads skipped (tried) is neither the same nor
// fast: each skipped read had loaded the controller and the links (779.6 -> 851.9 us at
// 256 nodes on `present`), and on `thesis` the idle lock stays (56.2 ms at 512 nodes).
#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cop/tas_layout.h"
#include "lib/elements.h"
#include "simcop/simcop_backend.h"

namespace copbench::simcop {

using cop::wire::Message;
using cop::wire::Opcode;
namespace commands = cop::commands;

namespace {
constexpr commands::Sender kTask{1, 0};  // as simcop_backend.cpp: TKNO 1, partition 0
constexpr uint32_t kTaskNo = 1;
int next_ticket_word(int lock_id) { return cop_tas::kLockWords + 2 * (lock_id % Backend::kLocks); }
int now_serving_word(int lock_id) { return next_ticket_word(lock_id) + 1; }
}  // namespace

std::vector<uint64_t> SimCopBackend::tas(Opcode op, int owner, uint32_t offset, std::span<const uint64_t> words) {
  const Network& n = sys_.net;
  if (owner < 0 || owner >= ranks()) throw std::invalid_argument(fmt::format("sim-cop: no rank {} to access", owner));
  // cop_read/write/rmw: a burst per kChunk elements (tas_run), sent together.
  Burst all;
  for (size_t at = 0; at < words.size(); at += cop::lib::kChunk) {
    const size_t k = std::min(cop::lib::kChunk, words.size() - at);
    const commands::TasTarget target{uint8_t(n.channel_of(owner)), kTaskNo, offset + uint32_t(at)};
    const Burst b = commands::tas_access(kTask, op, false, target, words.subspan(at, k));
    all.insert(all.end(), b.begin(), b.end());
  }
  if (n.level1_of(owner) != level1())
    for (Message& m : all) {
      m.ins.x = true;
      m.addr.cntno = uint8_t(n.level1_of(owner));
    }
  send(all);
  // Each RSRAM/RMW sends its word back (the command with the old value) beside its ACK,
  // not necessarily before the burst's answers: the answers first (a NACKed command
  // sends no word; check_answers throws on it), then the words.
  await_answers();
  const bool answers_words = op == Opcode::RSRAM64 || op == Opcode::RMW64;
  std::vector<uint64_t> got;
  while (answers_words && got.size() < words.size()) {
    for (auto it = inbox_.begin(); it != inbox_.end() && got.size() < words.size();) {
      if (it->ins.space == cop::wire::Space::TAS && it->ins.opcode == op) {
        got.push_back(cop::wire::payload(*it));
        it = inbox_.erase(it);
      } else {
        ++it;
      }
    }
    if (got.size() < words.size()) take_one(words.size() - got.size());
  }
  settle();
  return got;
}

std::int64_t SimCopBackend::shared_read(int owner, int index) {
  const uint64_t none[1] = {0};
  return std::int64_t(tas(Opcode::RSRAM64, owner, uint32_t(index), none)[0]);
}

std::int64_t SimCopBackend::shared_fetch_add(int owner, int index, std::int64_t add) {
  const uint64_t value[1] = {uint64_t(add)};
  return std::int64_t(tas(Opcode::RMW64, owner, uint32_t(index), value)[0]);
}

void SimCopBackend::lock(int lock_id) {
  System::LockTurns& turns = sys_.locks[size_t(lock_id % kLocks)];
  const std::int64_t ticket = shared_fetch_add(0, next_ticket_word(lock_id), 1);
  // Not its turn yet: it waits, without reading, for the release that hands it the lock
  // to be sent, and reads a cycle later (its read reaches the word after the release;
  // sent with it, the two arrive in one cycle and the read may be served first).
  if (turns.released < ticket) {
    await_release(turns, ticket);
    simgrid::s4u::this_actor::sleep_for(sys_.timing.p_clk_ns * 1e-9);
  }
  while (shared_read(0, now_serving_word(lock_id)) != ticket) continue;  // back to back
}

void SimCopBackend::await_release(System::LockTurns& turns, std::int64_t count) {
  auto [at, fresh] = turns.waiting.emplace(count, simgrid::s4u::Semaphore::create(0));
  if (!fresh) throw std::logic_error(fmt::format("sim-cop: two waiters for release {} of a lock", count));
  const simgrid::s4u::SemaphorePtr bell = at->second;
  bell->acquire();
}

void SimCopBackend::unlock(int lock_id) {
  System::LockTurns& turns = sys_.locks[size_t(lock_id % kLocks)];
  ++turns.released;
  if (auto it = turns.waiting.find(turns.released); it != turns.waiting.end()) {
    it->second->release();
    turns.waiting.erase(it);
  }
  shared_fetch_add(0, now_serving_word(lock_id), 1);
}

}  // namespace copbench::simcop
