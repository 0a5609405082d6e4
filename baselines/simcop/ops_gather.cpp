// sim-cop's gather and scatter (simcop_backend.h): cop_gather and cop_scatter as libcop
// makes them (cop/lib/collectives.cpp) and the live cop backend calls them
// (baselines/cop/gather_scatter.cpp): bytes packed eight to a word (PVM_LONG), staged in
// task address space words kStageFirst..kStageEnd (cop/tas_layout.h), a block longer than
// the staging area in several calls.
//  cop_gather: every rank writes its piece into its own task address space (WSRAM), all
//    agree on the arguments (a 2-word MAX reduction to every rank, which is the call's
//    synchronisation too), the root reads each rank's piece (RSRAM, rank order), barrier.
//  cop_scatter: the root writes every rank's piece into its own space, all agree, each
//    rank reads its piece from the root's space, barrier. The root's staging area holds
//    176 words: above 176 ranks not a word of every rank's piece (a task address space
//    is 256 words, seed 000 ch. V), so the root stages them in rounds of 176 ranks
//    (scatter_in_rounds), where the live backend refuses the call.
#include <cop/cop.h>
#include <pvm3.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "cop/tas_layout.h"
#include "lib/elements.h"
#include "simcop/simcop_backend.h"

namespace copbench::simcop {

using cop::wire::Opcode;

namespace {

constexpr size_t kStageWords = cop_tas::kStageEnd - cop_tas::kStageFirst;

// Bytes [8 from_word, 8 (from_word + words)) of a block of `block_bytes` into / out of words.
void pack(const std::byte* block, size_t block_bytes, size_t from_word, size_t words, uint64_t* out) {
  std::memset(out, 0, words * 8);
  const size_t from = from_word * 8;
  if (from < block_bytes) std::memcpy(out, block + from, std::min(words * 8, block_bytes - from));
}
void unpack(const uint64_t* in, size_t from_word, size_t words, std::byte* block, size_t block_bytes) {
  const size_t from = from_word * 8;
  if (from < block_bytes) std::memcpy(block + from, in, std::min(words * 8, block_bytes - from));
}

// collectives.cpp's descriptor of a call's arguments: count, datatype, root.
uint64_t descriptor(size_t count, int root) {
  return (uint64_t(count) << 32) | (uint64_t(PVM_LONG & 0xFF) << 24) | (uint64_t(root) & 0xFFFFFF);
}

}  // namespace

void SimCopBackend::agree(uint64_t d) {
  if (everyone_.empty()) {
    everyone_.resize(static_cast<size_t>(ranks()));
    std::iota(everyone_.begin(), everyone_.end(), 0);
  }
  uint64_t v[2] = {d, uint64_t(-int64_t(d))};
  const auto op = cop::lib::reduce_opcode(COP_MAX, PVM_LONG);
  reduce_chunk(*op, v, take_tags(reduce_cursor_, kReduceFirst, kReduceEnd, 2), everyone_);
  if (v[0] != d || uint64_t(-int64_t(v[1])) != d)
    throw std::runtime_error(fmt::format("sim-cop rank {}: the ranks disagree on count, datatype or root", rank_));
}

void SimCopBackend::gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) {
  const size_t n = size_t(ranks());
  if (root < 0 || root >= ranks()) throw std::invalid_argument("sim-cop gather: no such root");
  if (rank_ == root && all.size() < n * mine.size()) throw std::invalid_argument("sim-cop gather: result too small");
  const size_t block = mine.size(), words = (block + 7) / 8;
  std::vector<uint64_t> piece(kStageWords), none(kStageWords, 0);
  for (size_t at = 0; at < words; at += kStageWords) {
    const size_t w = std::min(kStageWords, words - at);
    pack(mine.data(), block, at, w, piece.data());
    tas(Opcode::WSRAM64, rank_, cop_tas::kStageFirst, std::span<const uint64_t>(piece.data(), w));
    agree(descriptor(w, root));
    if (rank_ == root)
      for (size_t r = 0; r < n; ++r) {
        const std::vector<uint64_t> got = tas(Opcode::RSRAM64, int(r), cop_tas::kStageFirst, std::span(none.data(), w));
        unpack(got.data(), at, w, all.data() + r * block, block);
      }
    barrier();  // nobody writes its piece again before the root has it
  }
}

// The root's staging area holds kStageWords words: `w` words of each of up to
// kStageWords / w ranks a round (scatter_round); a block longer than that goes in
// several slices of words, as on the live backend.
void SimCopBackend::scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) {
  const size_t n = size_t(ranks());
  if (root < 0 || root >= ranks()) throw std::invalid_argument("sim-cop scatter: no such root");
  if (rank_ == root && all.size() < n * mine.size()) throw std::invalid_argument("sim-cop scatter: source too small");
  const size_t block = mine.size(), words = (block + 7) / 8;
  if (n > kStageWords) {  // a word of every rank a slice, in rounds of kStageWords ranks
    for (size_t at = 0; at < words; ++at) scatter_in_rounds(all, mine, root, at);
    return;
  }
  const size_t per_rank = kStageWords / n;
  for (size_t at = 0; at < words; at += per_rank) {
    const size_t w = std::min(per_rank, words - at);
    stage_for(all, mine.size(), root, at, w, 0, n);
    agree(descriptor(w, root));
    read_staged(mine, root, at, w, size_t(rank_));
    barrier();  // nobody's staging is written again before its readers have it
  }
}

// The root writes words at..at+w of ranks first..first+count-1's blocks into its staging area.
void SimCopBackend::stage_for(std::span<const std::byte> all, size_t block, int root, size_t at, size_t w,
                              size_t first, size_t count) {
  if (rank_ != root) return;
  std::vector<uint64_t> source(count * w);
  for (size_t k = 0; k < count; ++k) pack(all.data() + (first + k) * block, block, at, w, source.data() + k * w);
  tas(Opcode::WSRAM64, rank_, cop_tas::kStageFirst, source);
}

// This rank reads its w words, the `slot`-th of the root's staging area.
void SimCopBackend::read_staged(std::span<std::byte> mine, int root, size_t at, size_t w, size_t slot) {
  const std::vector<uint64_t> none(w, 0);
  const std::vector<uint64_t> got = tas(Opcode::RSRAM64, root, uint32_t(cop_tas::kStageFirst + slot * w), none);
  unpack(got.data(), at, w, mine.data(), mine.size());
}

// Word `at` of every block above kStageWords ranks: the staging area holds a word of
// kStageWords ranks, so the root stages them in rounds, which is what the thesis's
// hardware leaves a program (a task address space is 256 words, seed 000 ch. V);
// libcop's cop_scatter, one round, refuses it (CopErrAddressRange), and so does the live
// backend. All agree once (cop_scatter's check); in round g the root writes its ranks'
// words, a barrier of the root and those ranks (tag 2 + 2g: their channels' terminal-
// count masks) says they are there, each reads its own, a second barrier (3 + 2g) that
// the root may write the next round; a barrier of all ends the slice. A round's barrier
// of every rank made scatter at 4096 nodes cost 24 full barriers and agreements a call.
void SimCopBackend::scatter_in_rounds(std::span<const std::byte> all, std::span<std::byte> mine, int root, size_t at) {
  const size_t n = size_t(ranks());
  agree(descriptor(1, root));
  for (size_t first = 0, g = 0; first < n; first += kStageWords, ++g) {
    const size_t count = std::min(kStageWords, n - first);
    const size_t me = size_t(rank_);
    const bool mine_now = me >= first && me < first + count;
    if (!mine_now && rank_ != root) continue;
    std::vector<int> members(count);
    std::iota(members.begin(), members.end(), int(first));
    if (size_t(root) < first || size_t(root) >= first + count)
      members.insert(std::lower_bound(members.begin(), members.end(), root), root);
    stage_for(all, mine.size(), root, at, 1, first, count);
    barrier_of(members, uint32_t(2 + 2 * g));
    if (mine_now) read_staged(mine, root, at, 1, me - first);
    barrier_of(members, uint32_t(3 + 2 * g));
  }
  barrier();
}

}  // namespace copbench::simcop
