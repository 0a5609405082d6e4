// gather / scatter: cop_gather and cop_scatter of bytes packed eight to a 64-bit word
// (PVM_LONG), staged in task address space words kStageFirst..kStageEnd. A block longer
// than the staging area goes in several calls, as a COP program would have to: a task
// address space is 256 words.
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "cop/cop_backend.h"

namespace copbench::cop {

namespace {
constexpr std::size_t kStageWords = kStageEnd - kStageFirst;

// Bytes [from, from + 8 * words) of a block of `block` bytes into / out of words.
void pack(const std::byte* block, std::size_t block_bytes, std::size_t from_word, std::size_t words, std::uint64_t* out) {
  std::memset(out, 0, words * 8);
  const std::size_t from = from_word * 8;
  if (from < block_bytes) std::memcpy(out, block + from, std::min(words * 8, block_bytes - from));
}
void unpack(const std::uint64_t* in, std::size_t from_word, std::size_t words, std::byte* block, std::size_t block_bytes) {
  const std::size_t from = from_word * 8;
  if (from < block_bytes) std::memcpy(block + from, in, std::min(words * 8, block_bytes - from));
}
}  // namespace

void CopBackend::gather(std::span<const std::byte> mine, std::span<std::byte> all, int root) {
  const std::size_t n = static_cast<std::size_t>(ranks());
  const std::size_t block = mine.size(), words = (block + 7) / 8;
  std::vector<std::uint64_t> piece(kStageWords), result(rank_ == root ? n * kStageWords : 0);
  for (std::size_t at = 0; at < words; at += kStageWords) {
    const std::size_t w = std::min(kStageWords, words - at);
    pack(mine.data(), block, at, w, piece.data());
    check(cop_gather(result.data(), piece.data(), static_cast<int>(w), PVM_LONG, kStageFirst, group_.data(), root),
          "cop_gather");
    if (rank_ == root)
      for (std::size_t r = 0; r < n; ++r) unpack(result.data() + r * w, at, w, all.data() + r * block, block);
  }
}

void CopBackend::scatter(std::span<const std::byte> all, std::span<std::byte> mine, int root) {
  const std::size_t n = static_cast<std::size_t>(ranks());
  const std::size_t block = mine.size(), words = (block + 7) / 8;
  const std::size_t per_rank = kStageWords / n;  // the root's staging area holds every rank's piece
  if (per_rank == 0) throw std::runtime_error("cop scatter: more ranks than staging words");
  std::vector<std::uint64_t> source(rank_ == root ? n * per_rank : 0), piece(per_rank);
  for (std::size_t at = 0; at < words; at += per_rank) {
    const std::size_t w = std::min(per_rank, words - at);
    if (rank_ == root)
      for (std::size_t r = 0; r < n; ++r) pack(all.data() + r * block, block, at, w, source.data() + r * w);
    check(cop_scatter(piece.data(), source.data(), static_cast<int>(w), PVM_LONG, kStageFirst, group_.data(), root),
          "cop_scatter");
    unpack(piece.data(), at, w, mine.data(), block);
  }
}

}  // namespace copbench::cop
