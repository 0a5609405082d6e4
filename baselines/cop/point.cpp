// Point-to-point on COP (seed 000 ch. VI, Table IV: "16K point-to-point message using
// cop_write & cop_read"): COP has no message operation, so the sender writes the message
// into its own task address space and the receiver reads it from there, a flag word
// saying when it is ready.
//
// The message area is TAS words kMessageFirst..kStageEnd-1 (176 words of 64 bits); a
// longer message goes in pieces. For each piece:
//   sender    cop_write the piece into its own TAS (one burst), then cop_write its ready
//             word = (receiver's rank, its piece count: a new value per piece)
//   receiver  cop_read the sender's ready word until it names this receiver and a piece
//             newer than the last it took, cop_read the piece, then cop_write its own
//             taken word = (sender's rank, piece count)
//   sender    cop_read the receiver's taken word until it shows that piece: the area is
//             free again (and the message delivered once the last piece is taken); then
//             cop_write its ready word again with the confirmed bit: it saw the taken word
// Only the owner writes a TAS (the controller's protection), so each side writes its own
// words and reads the other's. A receiver may wait on a sender that serves another
// receiver first (the ready word names the receiver). The taken word holds one
// acknowledgement, so a receiver that takes from several senders in turn (a gather to
// rank 0) writes it for the next sender only once the last one has confirmed seeing
// it: without that, a sender whose acknowledgement was overwritten waits for ever.
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cop/cop_backend.h"

namespace copbench::cop {

namespace {
constexpr std::size_t kPieceWords = std::size_t(kStageEnd - kMessageFirst);
// A flag word: (rank, piece count), and in a ready word the confirmed bit; counts stay
// below 2^47.
std::uint64_t flag(int rank, std::uint64_t seq) { return (std::uint64_t(rank) << 48) | seq; }
constexpr std::uint64_t kConfirmed = std::uint64_t{1} << 47;
constexpr std::uint64_t kSeqMask = kConfirmed - 1;
}  // namespace

void CopBackend::await_confirmation() {
  if (unconfirmed_from_ < 0) return;
  const int peer = tids_[static_cast<std::size_t>(unconfirmed_from_)];
  long long ready = 0;
  // Confirmed, or the sender has gone on to a later piece (it saw this one taken first).
  do check(cop_read(&ready, 1, PVM_LONG, peer, kReadyWord, COP_NORMAL), "cop_read");
  while (!(static_cast<std::uint64_t>(ready) & kConfirmed) &&
         (static_cast<std::uint64_t>(ready) & kSeqMask) <= unconfirmed_seq_);
  unconfirmed_from_ = -1;
}

void CopBackend::send(int to, std::span<const std::byte> message) {
  const int peer = tids_[static_cast<std::size_t>(to)];
  const std::size_t words = (message.size() + 7) / 8;
  std::vector<long long> piece(kPieceWords);
  for (std::size_t at = 0; at == 0 || at < words; at += kPieceWords) {
    const std::size_t n = std::min(kPieceWords, words - at);
    if (n > 0) {
      std::fill(piece.begin(), piece.begin() + static_cast<long>(n), 0);
      const std::size_t bytes = std::min(message.size() - at * 8, n * 8);
      std::memcpy(piece.data(), message.data() + at * 8, bytes);
      check(cop_write(piece.data(), static_cast<int>(n), PVM_LONG, mytid_, kMessageFirst, COP_NORMAL), "cop_write");
    }
    long long ready = static_cast<long long>(flag(to, ++piece_seq_));
    check(cop_write(&ready, 1, PVM_LONG, mytid_, kReadyWord, COP_NORMAL), "cop_write");
    const long long want = static_cast<long long>(flag(rank_, piece_seq_));
    long long taken = 0;
    do check(cop_read(&taken, 1, PVM_LONG, peer, kTakenWord, COP_NORMAL), "cop_read");
    while (taken != want);
    ready = static_cast<long long>(flag(to, piece_seq_) | kConfirmed);
    check(cop_write(&ready, 1, PVM_LONG, mytid_, kReadyWord, COP_NORMAL), "cop_write");
  }
}

void CopBackend::recv(int from, std::span<std::byte> message) {
  const int peer = tids_[static_cast<std::size_t>(from)];
  if (seen_seq_.size() < tids_.size()) seen_seq_.resize(tids_.size(), 0);
  std::uint64_t& seen = seen_seq_[static_cast<std::size_t>(from)];
  const std::size_t words = (message.size() + 7) / 8;
  std::vector<long long> piece(kPieceWords);
  for (std::size_t at = 0; at == 0 || at < words; at += kPieceWords) {
    const std::size_t n = std::min(kPieceWords, words - at);
    long long ready = 0;
    do check(cop_read(&ready, 1, PVM_LONG, peer, kReadyWord, COP_NORMAL), "cop_read");
    while (static_cast<std::uint64_t>(ready) >> 48 != static_cast<std::uint64_t>(rank_) ||
           (static_cast<std::uint64_t>(ready) & kConfirmed) || (static_cast<std::uint64_t>(ready) & kSeqMask) <= seen);
    seen = static_cast<std::uint64_t>(ready) & kSeqMask;
    if (n > 0) {
      check(cop_read(piece.data(), static_cast<int>(n), PVM_LONG, peer, kMessageFirst, COP_NORMAL), "cop_read");
      const std::size_t bytes = std::min(message.size() - at * 8, n * 8);
      std::memcpy(message.data() + at * 8, piece.data(), bytes);
    }
    await_confirmation();  // the taken word still holds another piece's acknowledgement
    long long taken = static_cast<long long>(flag(from, seen));
    check(cop_write(&taken, 1, PVM_LONG, mytid_, kTakenWord, COP_NORMAL), "cop_write");
    unconfirmed_from_ = from;
    unconfirmed_seq_ = seen;
  }
}

}  // namespace copbench::cop
