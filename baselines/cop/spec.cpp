// What the cop backend offers: libcop's collectives and task address spaces (seed 000
// ch. V, Table II) in direct or normal access mode. COP has no point-to-point
// operation: echo (and what needs it) is not offered rather than measured on PVM.
// No fence of any kind (writes are acknowledged commands) and no server_lock: the
// controller has RMW but no lock server, and a server queue lock needs one.
#include "copbench/bench.h"

namespace copbench {

BackendSpec cop_spec() {
  BackendSpec s;
  s.name = "cop";
  s.summary =
      "libcop on copd/copdrv: cop_barrier, cop_reduce (one root or several), cop_bcast, cop_mcast, cop_gather/scatter, cop_read/cop_rmw; "
      "lock = ticket lock (cop_rmw + cop_read); no point-to-point";
  s.worker = "copbench-cop-run";
  s.launcher = Launcher::cop_master;
  s.routes = {"direct", "normal"};
  s.offered = {Op::barrier, Op::reduce, Op::reduce_roots, Op::broadcast,  Op::multicast, Op::gather,
               Op::scatter, Op::lock,   Op::shared_read, Op::shared_rmw};
  return s;
}

}  // namespace copbench
