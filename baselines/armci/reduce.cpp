// reduce: ARMCI's global operations armci_msg_igop / armci_msg_dgop. They reduce in place
// and leave the result on every rank (an all-reduce), which includes the root.
#include <cstring>


#include "armci/armci_backend.h"
#include "armci/armci_c.h"

namespace copbench::armci {

void ArmciBackend::reduce(const void* in, void* out, std::size_t count, Elem elem, ReduceOp op, int) {
  char plus[] = "+", max[] = "max", min[] = "min";
  char* name = op == ReduceOp::sum ? plus : op == ReduceOp::max ? max : min;
  if (in != out) std::memmove(out, in, count * elem_size(elem));
  if (elem == Elem::i32) {
    static_assert(sizeof(int) == sizeof(std::int32_t));
    armci_msg_igop(static_cast<int*>(out), static_cast<int>(count), name);
  } else {
    armci_msg_dgop(static_cast<double*>(out), static_cast<int>(count), name);
  }
}

}  // namespace copbench::armci
