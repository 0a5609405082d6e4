// sim-cop's shared words and lock (simcop_backend.h), as the live cop backend has them
// (baselines/cop/shared.cpp): rank r's words are words 0..63 of its task address space
// (task TKNO 1 on its channel); cop_read is RSRAM64, cop_rmw RMW64 (the old value back),
// COP_NORMAL (no LOCK), one command per word (cop/lib/tas.cpp, commands::tas_access). A
// space on another level-1 goes through the level 2: X, with the owner's CNTNO in the
// address (seed 000 ch. V; Z names the channel).
//
// lock: the live backend's ticket lock (cop_rmw on rank 0's "next ticket" word, cop_read
// of its "now serving" word until it shows the ticket, cop_rmw on "now serving" to
// release), with one difference: a waiter k places back in the queue waits (k - 1) x its
// fastest read of the word yet before it reads again (proportional backoff,
// Mellor-Crummey and Scott, ACM TOCS 9(1), 1991), where the live backend reads back to
// back: a hand-over takes at least that round trip (the holder's release reaches the
// word, the next one's read brings it back), so the wait never outlasts the waiter's
// turn and the next in line reads back to back; the reads of the others fall from
// n x n a round to a few per hand-over. An estimate of the hand-over itself (the rate
// at which "now serving" advances) was tried and dropped: a waiter that sleeps past its
// turn holds up all, which slows the rate every waiter sees (unstable above 64 nodes).
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
  const std::int64_t ticket = shared_fetch_add(0, next_ticket_word(lock_id), 1);
  for (;;) {
    const double asked = simgrid::s4u::Engine::get_clock();
    const std::int64_t serving = shared_read(0, now_serving_word(lock_id));
    if (serving == ticket) return;
    const double round_trip = simgrid::s4u::Engine::get_clock() - asked;
    lock_round_trip_ = lock_round_trip_ > 0 ? std::min(lock_round_trip_, round_trip) : round_trip;
    if (ticket - serving > 1) simgrid::s4u::this_actor::sleep_for(double(ticket - serving - 1) * lock_round_trip_);
  }
}

void SimCopBackend::unlock(int lock_id) { shared_fetch_add(0, now_serving_word(lock_id), 1); }

}  // namespace copbench::simcop
