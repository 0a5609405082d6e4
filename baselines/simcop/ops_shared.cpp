// sim-cop's shared words and lock (simcop_backend.h), as the live cop backend has them
// (baselines/cop/shared.cpp): rank r's words are words 0..63 of its task address space
// (task TKNO 1 on its channel); cop_read is RSRAM64, cop_rmw RMW64 (the old value back),
// COP_NORMAL (no LOCK), one command per word (cop/lib/tas.cpp, commands::tas_access). A
// space on another level-1 goes through the level 2: X, with the owner's CNTNO in the
// address (seed 000 ch. V; Z names the channel).
//
// lock: the live backend's ticket lock (cop_rmw on rank 0's "next ticket" word, cop_read
// of its "now serving" word until it shows the ticket, cop_rmw on "now serving" to
// release), with one difference: a waiter whose read shows it k places back waits
// (k - 1) x H before it reads again, and reads back to back once it is next
// (proportional backoff, Mellor-Crummey and Scott, ACM TOCS 9(1), 1991), where the live
// backend reads back to back from the start. H is what a node can know: the fastest
// hand-over it has seen itself (the time between two of its reads over the releases
// between them), kept between the machine's hand-over with no other traffic
// (lock_hand_over_cycles, platform.h: from the platform's cycle timings, through the
// level 2 above 64 nodes) and 1.5 times that. Why both bounds (tried, 2026-11-28): on
// `thesis` a read holds the controller (t_OP + t_COP-CN) over a quarter of a hand-over and the
// level 2's link to level-1 0 carries every remote read, so waiters that read early
// slow the hand-over they wait for; with the machine's figure alone the reads fed on
// themselves (65 ms at 4096 nodes on `thesis`, 91 s of wall time). With no ceiling (and a
// lower floor) the other way: a waiter that sleeps past its turn holds everyone up, which lengthens the
// hand-over they all see (762 us at 64 nodes on `thesis`). A ceiling of 2 was slower on
// both platforms (4096 nodes: 23.8 ms on `present`, 13.9 ms on `thesis`).
//
// Before: a waiter took its fastest read as H (main to 2026-11-28: at 64 nodes on
// `thesis` its first read queued behind 63 others, 12.8 us, so the lock stood idle:
// 820 us; 4096 nodes did not finish in 400 s); then (branch h-simlock, not merged) it
// slept until the holder sent the release that handed it the lock, which no node can
// know: that oracle is a lower bound (46.9 us at 64 nodes on `thesis`, 7.07 ms at 4096).
#include <simgrid/s4u.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cop/tas_layout.h"
#include "lib/elements.h"
#include "simcop/platform.h"
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
  const cop::model::Timing& t = sys_.timing;
  const double machine = double(lock_hand_over_cycles(t, sys_.net.link, ranks())) * t.p_clk_ns * 1e-9;
  double fastest = HUGE_VAL, last_at = -1;  // the fastest hand-over seen; the last read's answer
  std::int64_t last_seen = 0;
  for (;;) {
    const std::int64_t serving = shared_read(0, now_serving_word(lock_id));
    if (serving == ticket) return;
    const double now = simgrid::s4u::Engine::get_clock();
    if (last_at >= 0 && serving > last_seen) fastest = std::min(fastest, (now - last_at) / double(serving - last_seen));
    last_at = now, last_seen = serving;
    const double hand_over = fastest < HUGE_VAL ? std::clamp(fastest, machine, 1.5 * machine) : machine;
    if (ticket - serving > 1) simgrid::s4u::this_actor::sleep_for(double(ticket - serving - 1) * hand_over);
  }
}

void SimCopBackend::unlock(int lock_id) { shared_fetch_add(0, now_serving_word(lock_id), 1); }

}  // namespace copbench::simcop
