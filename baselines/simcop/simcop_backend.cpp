// sim-cop's node (simcop_backend.h): libcop's commands on a simulated channel.
#include "simcop/simcop_backend.h"

#include <cop/cop.h>
#include <fmt/format.h>
#include <pvm3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "lib/elements.h"

namespace copbench::simcop {

using cop::wire::Message;
using cop::wire::Opcode;
namespace commands = cop::commands;

namespace {

constexpr commands::Sender kTask{1, 0};  // every node's task: TKNO 1, partition 0

uint64_t bit(int channel) { return channel < 1 ? 0 : uint64_t{1} << (channel - 1); }

// libcop's check of a burst's answers (cop/lib/channel.cpp): a SETTC or SETBM refused
// with mask_in_use was set by a peer first (SPMD); any other NACK is an error.
void check_answers(const std::vector<Message>& answers, int rank) {
  for (const Message& a : answers) {
    if (a.ins.opcode != Opcode::NACK) continue;
    const auto e = cop::wire::nack_error(a.data1);
    const auto op = static_cast<Opcode>(cop::wire::nack_opcode(a.data1));
    if (e == cop::wire::Error::mask_in_use && (op == Opcode::SETTC || op == Opcode::SETBM)) continue;
    throw std::runtime_error(fmt::format("sim-cop node {}: the controller refused {}: {}", rank,
                                         cop::wire::opcode_name(op), cop::wire::error_name(e)));
  }
}

}  // namespace

void SimCopBackend::sync() { sys_.meeting->wait(); }

void SimCopBackend::max_over_ranks(std::span<double> values) {
  sys_.meeting->wait();
  if (rank_ == 0) sys_.maxima.assign(values.size(), -std::numeric_limits<double>::infinity());
  sys_.meeting->wait();
  for (size_t i = 0; i < values.size(); ++i) sys_.maxima[i] = std::max(sys_.maxima[i], values[i]);
  sys_.meeting->wait();
  std::copy(sys_.maxima.begin(), sys_.maxima.end(), values.begin());
  sys_.meeting->wait();
}

void SimCopBackend::for_two_levels(Burst& b, Opcode global_op, uint32_t tag, uint64_t tc2, uint64_t bm2, size_t count,
                                   bool sets_level2) const {
  if (!sys_.net.two_levels()) return;
  for (Message& m : b)
    if (m.ins.opcode == global_op) m.ins.x = true;
  if (!sets_level2) return;
  Burst masks;
  if (tc2) commands::append_masks(masks, kTask, Opcode::SETTC, tag, tc2, count);
  if (bm2) commands::append_masks(masks, kTask, Opcode::SETBM, tag, bm2, count);
  for (Message& m : masks) m.ins.x = true;
  b.insert(b.begin() + 1, masks.begin(), masks.end());  // after the LOCK
}

void SimCopBackend::send(const Burst& b) {
  auto p = std::make_unique<Packet>();
  p->kind = Packet::burst;
  p->channel = channel();
  p->messages = b;
  sent_ += b.size();
  // The packet arrives with the burst's first message; the controller takes the
  // others one wire time apart as the link delivers them (controller_actor.h).
  const double now = simgrid::s4u::Engine::get_clock() * 1e9 / sys_.timing.p_clk_ns;
  send_up(sys_.mail, sys_.net, sys_.timing, rank_, std::move(p), uint64_t(std::llround(now)));
}

bool SimCopBackend::take_one(size_t need) {
  const DownLink::Arrival a = sys_.mail.nodes[size_t(rank_)]->take(need);
  heard_until_ = a.cycle;
  if (a.answer) {
    answers_.push_back(a.msg);
    return false;
  }
  inbox_.push_back(a.msg);
  return true;
}

// What a wait took is in its down link's order, so the last one taken came last: the
// node has all it waited for at that one's cycle (links.h).
void SimCopBackend::settle() const {
  const double at = double(heard_until_) * sys_.timing.p_clk_ns * 1e-9;
  if (at > simgrid::s4u::Engine::get_clock()) simgrid::s4u::this_actor::sleep_until(at);
}

std::vector<uint64_t> SimCopBackend::await_words(uint32_t tag, size_t n) {
  std::vector<uint64_t> words(n);
  std::vector<bool> got(n, false);
  size_t have = 0;
  auto claim = [&](const Message& m) {
    const uint32_t t = m.addr.msgtag;
    if (t < tag || t - tag >= n || got[t - tag]) return false;
    words[t - tag] = cop::wire::payload(m);
    got[t - tag] = true;
    ++have;
    return true;
  };
  std::erase_if(inbox_, claim);  // words that came before this wait
  while (have < n)
    if (take_one(n - have) && claim(inbox_.back())) inbox_.pop_back();
  settle();
  return words;
}

void SimCopBackend::await_answers() {
  while (answers_.size() < sent_) take_one(sent_ - answers_.size());
  settle();
  std::vector<Message> answers = std::move(answers_);
  answers_.clear();
  sent_ = 0;
  check_answers(answers, rank_);
}

uint32_t SimCopBackend::take_tags(uint32_t& cursor, uint32_t first, uint32_t end, size_t n) {
  if (cursor + n > end) cursor = first;  // every node takes the same: the cursors stay in step
  const uint32_t tag = cursor;
  cursor += uint32_t(n);
  return tag;
}

// cop_barrier: the burst of channel_barrier (cop/lib/channel.cpp), then the exit.
void SimCopBackend::barrier() {
  const Network& n = sys_.net;
  Burst b = commands::barrier(kTask, kBarrierTag, n.local_all(level1()));
  for_two_levels(b, Opcode::BENTRY, kBarrierTag, n.level2_all(), 0, 1, first_of_level1());
  send(b);
  await_words(kBarrierTag, 1);
  await_answers();
}

void SimCopBackend::barrier_of(std::span<const int> members, uint32_t tag) {
  const Network& n = sys_.net;
  uint64_t tc = 0, tc2 = 0;
  bool sets_level2 = false;  // this rank is its level-1's lowest member
  for (int k = 0; k < n.level1s; ++k) {
    const auto first = std::lower_bound(members.begin(), members.end(), n.first_node(k));
    const auto end = std::lower_bound(first, members.end(), n.first_node(k) + n.channels_of(k));
    if (first == end) continue;
    tc2 |= bit(k + 1);
    if (k != level1()) continue;
    sets_level2 = *first == rank_;
    for (auto r = first; r != end; ++r) tc |= bit(n.channel_of(*r));
  }
  Burst b = commands::barrier(kTask, tag, tc);
  for_two_levels(b, Opcode::BENTRY, tag, tc2, 0, 1, sets_level2);
  send(b);
  await_words(tag, 1);
  await_answers();
}

// cop_reduce (channel_reduce): every node contributes; the roots' channels are the
// broadcast mask of the result (on each root's level-1; at the level 2, those level-1s).
void SimCopBackend::reduce_chunk(Opcode op, std::span<uint64_t> words, uint32_t tag, std::span<const int> roots) {
  const Network& n = sys_.net;
  // The masks from the sorted roots: a level-1's roots are a range of them (every rank a
  // root, as cop_gather's check has it, made a walk over all roots from every rank cost n^2).
  uint64_t bm = 0, bm2 = 0;
  for (int k = 0; k < n.level1s; ++k) {
    const auto first = std::lower_bound(roots.begin(), roots.end(), n.first_node(k));
    const auto end = std::lower_bound(first, roots.end(), n.first_node(k) + n.channels_of(k));
    if (first == end) continue;
    bm2 |= bit(k + 1);
    if (k == level1())
      for (auto r = first; r != end; ++r) bm |= bit(n.channel_of(*r));
  }
  Burst b = commands::reduction(kTask, op, tag, words, n.local_all(level1()), bm);
  for_two_levels(b, op, tag, n.level2_all(), bm2, words.size(), first_of_level1());
  send(b);
  if (std::binary_search(roots.begin(), roots.end(), rank_)) {
    const std::vector<uint64_t> result = await_words(tag, words.size());
    std::copy(result.begin(), result.end(), words.begin());
  }
  await_answers();
}

void SimCopBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) {
  const int roots[1] = {root};
  reduce_roots(in, out, count, elem, op, roots);
}

// cop_bcast / cop_mcast (send_to, receive_from): the root sets the broadcast mask of the
// members on its level-1 and sends the words; a member sends nothing, except that when the
// members span level-1s the lowest member channel of every other level-1 (libcop's
// designated host, cast_plan) sets its controller's mask (the words come down from the
// level 2 to it). A rank that is neither returns at once.
void SimCopBackend::cast_chunk(std::span<uint64_t> words, uint32_t tag, int root, const std::vector<uint64_t>& members) {
  const Network& n = sys_.net;
  const int root_level1 = n.level1_of(root);
  bool spans = false;
  for (int k = 0; k < n.level1s; ++k) spans |= k != root_level1 && members[size_t(k)] != 0;
  if (rank_ == root) {
    const uint64_t local = members[size_t(root_level1)] & ~bit(n.channel_of(root));
    Burst b = commands::broadcast(kTask, Opcode::BCAST64, tag, words, local);
    if (local == 0)  // no member on the root's level-1: its words go only up
      std::erase_if(b, [](const Message& m) { return m.ins.opcode == Opcode::SETBM; });
    if (spans) {
      uint64_t bm2 = 0;
      for (int k = 0; k < n.level1s; ++k)
        if (k == root_level1 ? local != 0 : members[size_t(k)] != 0) bm2 |= bit(k + 1);
      for_two_levels(b, Opcode::BCAST64, tag, 0, bm2, words.size(), true);
    }
    send(b);
    await_answers();
    return;
  }
  const uint64_t here = members[size_t(level1())];
  if (!(here & bit(channel()))) return;
  if (spans && level1() != root_level1 && (here & (~here + 1)) == bit(channel())) {
    Burst b{commands::command(kTask, Opcode::LOCK)};
    commands::append_masks(b, kTask, Opcode::SETBM, tag, here, words.size());
    b.push_back(commands::command(kTask, Opcode::UNLOCK));
    send(b);
  }
  const std::vector<uint64_t> got = await_words(tag, words.size());
  std::copy(got.begin(), got.end(), words.begin());
  await_answers();
}

void SimCopBackend::cast(std::span<std::byte> buffer, int root, const std::vector<uint64_t>& members) {
  const size_t words = (buffer.size() + 7) / 8;
  std::vector<uint64_t> w(words, 0);
  if (rank_ == root && !buffer.empty()) std::memcpy(w.data(), buffer.data(), buffer.size());
  for (size_t at = 0; at < words; at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, words - at);
    cast_chunk(std::span<uint64_t>(w.data() + at, n), take_tags(cast_cursor_, kCastFirst, kCastEnd, n), root, members);
  }
  const uint64_t here = members[size_t(level1())];
  if (rank_ != root && (here & bit(channel())) && !buffer.empty()) std::memcpy(buffer.data(), w.data(), buffer.size());
}

void SimCopBackend::broadcast(std::span<std::byte> buffer, int root) {
  std::vector<uint64_t> all(size_t(sys_.net.level1s));
  for (int k = 0; k < sys_.net.level1s; ++k) all[size_t(k)] = sys_.net.local_all(k);
  cast(buffer, root, all);
}

}  // namespace copbench::simcop
