// reduce: pvm_reduce (PvmSum / PvmMax / PvmMin on PVM_INT or PVM_DOUBLE) to the root's
// group instance, which equals its rank. pvm_reduce works in place; the result is
// defined on the root only.
#include <pvm3.h>

#include <cstring>

#include "pvm/pvm_backend.h"

namespace copbench::pvm {

void PvmBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int root) {
  static_assert(sizeof(int) == sizeof(std::int32_t));
  auto* func = op == ReduceOp::sum ? PvmSum : op == ReduceOp::max ? PvmMax : PvmMin;
  if (in != out) std::memmove(out, in, count * elem_size(elem));
  pvm_check(pvm_reduce(func, out, static_cast<int>(count), elem == Elem::i32 ? PVM_INT : PVM_DOUBLE,
                       next_tag(kReduceTag), group_.data(), root),
            "pvm_reduce");
}

}  // namespace copbench::pvm
