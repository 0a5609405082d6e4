// reduce: cop_reduce (COP_SUM / COP_MAX / COP_MIN on PVM_INT or PVM_DOUBLE: SUMI32 /
// MAXI32 / MINI32 and the FP unit's SUMF / MAXF / MINF) to one root or to several
// (reduce_roots), a root's group instance being its rank. In place, like pvm_reduce; the
// result is defined on the roots.
// Each call gets its own GAS range (take_gas), so a task that is not the root may start
// the next reduction before the root has the last one.
#include <cop/cop.h>
#include <pvm3.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cop/cop_backend.h"

namespace copbench::cop {

namespace {
constexpr std::size_t kPieceElements = 8192;  // a quarter of the reduce pool
}

void CopBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) {
  const int roots[1] = {root};
  reduce_roots(in, out, count, elem, op, roots);
}

// cop_reduce with a list of roots: the controller's broadcast mask names every root, so
// all of them receive the result of one reduction (seed 000 ch. V).
void CopBackend::reduce_roots(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op,
                              std::span<const int> roots) {
  const std::size_t esize = elem_size(elem);
  if (in != out) std::memmove(out, in, count * esize);
  const int func = op == ReduceOp::sum ? COP_SUM : op == ReduceOp::max ? COP_MAX : COP_MIN;
  const int type = elem == Elem::i32 ? PVM_INT : PVM_DOUBLE;
  std::vector<int> root_list(roots.begin(), roots.end());
  auto* data = static_cast<std::byte*>(out);
  for (std::size_t at = 0; at < count; at += kPieceElements) {
    const std::size_t n = std::min(kPieceElements, count - at);
    const int tag = take_gas(reduce_cursor_, kReduceFirst, kReduceEnd, n);
    check(cop_reduce(func, data + at * esize, type, static_cast<int>(n), tag, group_.data(), root_list.data(),
                     static_cast<int>(root_list.size())),
          "cop_reduce");
  }
}

}  // namespace copbench::cop
