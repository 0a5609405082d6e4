// broadcast: cop_bcast to the run's group; multicast: cop_mcast to the members' tids.
// Bytes travel packed eight to a 64-bit word (BCAST64, PVM_LONG); the receivers name the
// root's tid as the sender. Each call gets its own GAS range (take_gas).
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstring>

#include "cop/cop_backend.h"

namespace copbench::cop {

namespace {
constexpr std::size_t kPieceWords = 8192;  // a quarter of the broadcast pool (64 KB)
}

void CopBackend::cast(std::span<std::byte> buffer, int root, const std::vector<int>* members) {
  const std::size_t words = (buffer.size() + 7) / 8;
  const bool sender = rank_ == root;
  const bool receiver =
      !sender && (!members || std::find(members->begin(), members->end(), tids_[static_cast<std::size_t>(rank_)]) !=
                                  members->end());
  if (members && members->empty()) return;
  std::vector<std::uint64_t> w(words, 0);
  if (sender && !buffer.empty()) std::memcpy(w.data(), buffer.data(), buffer.size());
  const int src = tids_[static_cast<std::size_t>(root)];
  for (std::size_t at = 0; at < words; at += kPieceWords) {
    const std::size_t n = std::min(kPieceWords, words - at);
    const int tag = take_gas(cast_cursor_, kCastFirst, kCastEnd, n);  // every rank: the cursors stay in step
    if (!sender && !receiver) continue;
    const int mode = sender ? COP_SEND : COP_RECV;
    if (members)
      check(cop_mcast(w.data() + at, static_cast<int>(n), PVM_LONG, const_cast<int*>(members->data()),
                      static_cast<int>(members->size()), tag, mode, src),
            "cop_mcast");
    else
      check(cop_bcast(w.data() + at, static_cast<int>(n), PVM_LONG, group_.data(), tag, mode, src), "cop_bcast");
  }
  if (receiver && !buffer.empty()) std::memcpy(buffer.data(), w.data(), buffer.size());
}

void CopBackend::broadcast(std::span<std::byte> buffer, int root) {
  if (ranks() > 1) cast(buffer, root, nullptr);
}

void CopBackend::multicast(std::span<std::byte> buffer, int root, std::span<const int> members) {
  std::vector<int> tids;
  for (int m : members) tids.push_back(tids_[static_cast<std::size_t>(m)]);
  cast(buffer, root, &tids);
}

}  // namespace copbench::cop
