// sim-cop's node (simcop_backend.h): libcop's commands on a simulated channel.
#include "simcop/simcop_backend.h"

#include <cop/cop.h>
#include <fmt/format.h>
#include <pvm3.h>

#include <algorithm>
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
  send_packet(sys_.mail.level1s[size_t(level1())], std::move(p), 1);
}

void SimCopBackend::take_one() {
  std::unique_ptr<Packet> p = take_down<Packet>(sys_.mail.nodes[size_t(rank_)], sys_.net);
  if (p->kind == Packet::answers)
    answers_.insert(answers_.end(), p->messages.begin(), p->messages.end());
  else
    inbox_.insert(inbox_.end(), p->messages.begin(), p->messages.end());
}

std::vector<uint64_t> SimCopBackend::await_words(uint32_t tag, size_t n) {
  std::vector<uint64_t> words(n);
  std::vector<bool> got(n, false);
  size_t have = 0;
  for (;;) {
    for (auto it = inbox_.begin(); it != inbox_.end();) {
      const uint32_t t = it->addr.msgtag;
      if (t >= tag && t - tag < n && !got[t - tag]) {
        words[t - tag] = cop::wire::payload(*it);
        got[t - tag] = true;
        ++have;
        it = inbox_.erase(it);
      } else {
        ++it;
      }
    }
    if (have == n) return words;
    take_one();
  }
}

void SimCopBackend::await_answers() {
  while (answers_.size() < sent_) take_one();
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

// cop_reduce (channel_reduce): every node contributes; the root's channel is the
// broadcast mask of the result (on the root's level-1; at the level 2, that level-1).
void SimCopBackend::reduce_chunk(Opcode op, std::span<uint64_t> words, uint32_t tag, int root) {
  const Network& n = sys_.net;
  const int root_level1 = n.level1_of(root);
  const uint64_t bm = root_level1 == level1() ? bit(n.channel_of(root)) : 0;
  Burst b = commands::reduction(kTask, op, tag, words, n.local_all(level1()), bm);
  for_two_levels(b, op, tag, n.level2_all(), bit(root_level1 + 1), words.size(), first_of_level1());
  send(b);
  if (rank_ == root) {
    const std::vector<uint64_t> result = await_words(tag, words.size());
    std::copy(result.begin(), result.end(), words.begin());
  }
  await_answers();
}

void SimCopBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) {
  const int type = elem == Elem::i32 ? PVM_INT : PVM_DOUBLE;
  const int func = op == ReduceOp::sum ? COP_SUM : op == ReduceOp::max ? COP_MAX : COP_MIN;
  const auto opcode = cop::lib::reduce_opcode(func, type);
  if (!opcode) throw std::invalid_argument("sim-cop: no COP reduction for this type and function");
  for (size_t at = 0; at < count; at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, count - at);
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) words[i] = cop::lib::to_word(in, at + i, type);
    reduce_chunk(*opcode, words, take_tags(reduce_cursor_, kReduceFirst, kReduceEnd, n), root);
    if (rank_ == root)
      for (size_t i = 0; i < n; ++i) cop::lib::from_word(out, at + i, type, words[i]);
  }
}

// cop_bcast (channel_bcast): the root sets the broadcast mask and sends the words; a
// receiver sends nothing, except that with two levels the first node of every other
// level-1 sets its controller's mask (the words come down from the level 2 to it).
void SimCopBackend::cast_chunk(std::span<uint64_t> words, uint32_t tag, int root) {
  const Network& n = sys_.net;
  const int root_level1 = n.level1_of(root);
  if (rank_ == root) {
    const uint64_t local = n.local_all(root_level1) & ~bit(n.channel_of(root));
    Burst b = commands::broadcast(kTask, Opcode::BCAST64, tag, words, local);
    if (local == 0)  // the root is its level-1's only node: its words go only up
      std::erase_if(b, [](const Message& m) { return m.ins.opcode == Opcode::SETBM; });
    const uint64_t bm2 = n.level2_all() & ~(local == 0 ? bit(root_level1 + 1) : 0);
    for_two_levels(b, Opcode::BCAST64, tag, 0, bm2, words.size(), true);
    send(b);
    await_answers();
    return;
  }
  if (n.two_levels() && level1() != root_level1 && first_of_level1()) {
    Burst b{commands::command(kTask, Opcode::LOCK)};
    commands::append_masks(b, kTask, Opcode::SETBM, tag, n.local_all(level1()), words.size());
    b.push_back(commands::command(kTask, Opcode::UNLOCK));
    send(b);
  }
  const std::vector<uint64_t> got = await_words(tag, words.size());
  std::copy(got.begin(), got.end(), words.begin());
  await_answers();
}

void SimCopBackend::broadcast(std::span<std::byte> buffer, int root) {
  const size_t words = (buffer.size() + 7) / 8;
  std::vector<uint64_t> w(words, 0);
  if (rank_ == root && !buffer.empty()) std::memcpy(w.data(), buffer.data(), buffer.size());
  for (size_t at = 0; at < words; at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, words - at);
    cast_chunk(std::span<uint64_t>(w.data() + at, n), take_tags(cast_cursor_, kCastFirst, kCastEnd, n), root);
  }
  if (rank_ != root && !buffer.empty()) std::memcpy(buffer.data(), w.data(), buffer.size());
}

}  // namespace copbench::simcop
