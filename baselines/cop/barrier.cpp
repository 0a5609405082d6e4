// barrier: cop_barrier on the run's group (BENTRY on one GAS word; tasks of one host meet
// in the channel window first).
#include <cop/cop.h>

#include "cop/cop_backend.h"

namespace copbench::cop {

void CopBackend::barrier() { check(cop_barrier(group_.data(), ranks(), kBarrierTag), "cop_barrier"); }

}  // namespace copbench::cop
