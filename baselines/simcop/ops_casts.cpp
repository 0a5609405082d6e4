// sim-cop's reduce to several roots and multicast (simcop_backend.h): cop_reduce with a
// list of roots and cop_mcast, as baselines/cop calls them (reduce.cpp, broadcast.cpp),
// on the bursts of simcop_backend.cpp's reduce_chunk and cast_chunk.
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <stdexcept>

#include "lib/elements.h"
#include "simcop/simcop_backend.h"

namespace copbench::simcop {

// cop_reduce to `roots` (sorted, distinct; libcop refuses a root named twice:
// PvmBadParam): one reduction whose result the controllers broadcast to every root.
void SimCopBackend::reduce_roots(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                                 std::span<const int> roots) {
  if (roots.empty() || !std::is_sorted(roots.begin(), roots.end()) ||
      std::adjacent_find(roots.begin(), roots.end()) != roots.end() || roots.front() < 0 || roots.back() >= ranks())
    throw std::invalid_argument("sim-cop reduce_roots: the roots must be sorted, distinct ranks");
  const int type = elem == Elem::i32 ? PVM_INT : PVM_DOUBLE;
  const int func = op == ReduceOp::sum ? COP_SUM : op == ReduceOp::max ? COP_MAX : COP_MIN;
  const auto opcode = cop::lib::reduce_opcode(func, type);
  if (!opcode) throw std::invalid_argument("sim-cop: no COP reduction for this type and function");
  const bool me_root = std::binary_search(roots.begin(), roots.end(), rank_);
  for (size_t at = 0; at < count; at += cop::lib::kChunk) {
    const size_t n = std::min(cop::lib::kChunk, count - at);
    std::vector<uint64_t> words(n);
    for (size_t i = 0; i < n; ++i) words[i] = cop::lib::to_word(in, at + i, type);
    reduce_chunk(*opcode, words, take_tags(reduce_cursor_, kReduceFirst, kReduceEnd, n), roots);
    if (me_root)
      for (size_t i = 0; i < n; ++i) cop::lib::from_word(out, at + i, type, words[i]);
  }
}

// cop_mcast from `root` to `members` (sorted, without the root): the broadcast mask of
// each level-1 names its members' channels; an empty list sends nothing (cop.h: the
// adapter returns at once, baselines/cop/broadcast.cpp).
void SimCopBackend::multicast(std::span<std::byte> buffer, int root, std::span<const int> members) {
  const Network& n = sys_.net;
  if (root < 0 || root >= ranks()) throw std::invalid_argument("sim-cop multicast: no such root");
  std::vector<uint64_t> mask(size_t(n.level1s), 0);
  for (int m : members) {
    if (m < 0 || m >= ranks() || m == root)
      throw std::invalid_argument("sim-cop multicast: a member is not a rank other than the root");
    mask[size_t(n.level1_of(m))] |= uint64_t{1} << (n.channel_of(m) - 1);
  }
  if (members.empty()) return;
  cast(buffer, root, mask);
}

}  // namespace copbench::simcop
