// What the pvm backend offers: PVM 3.4 messages (normal = daemon-routed, direct =
// task-to-task TCP), group barrier / reduce / broadcast / gather / scatter, pvm_mcast,
// and a lock-and-shared-variable server task. PVM has no scan and no fence. The lock is
// seed 004's server queue lock (a FIFO queue per lock in the server task), so server_lock
// is the same lock.
#include "copbench/bench.h"

namespace copbench {

BackendSpec pvm_spec() {
  BackendSpec s;
  s.name = "pvm";
  s.summary = "PVM 3.4: pvm_send/recv, pvm_mcast, group collectives (pvmgs), a lock/shared-variable server task";
  s.worker = "copbench-worker-pvm";
  s.launcher = Launcher::pvm_master;
  s.routes = {"normal", "direct"};
  s.encodings = {"default", "raw", "inplace"};
  s.offered = {Op::echo,      Op::barrier,     Op::reduce,       Op::broadcast,  Op::multicast,
               Op::gather,    Op::scatter,     Op::lock,         Op::shared_read, Op::shared_write,
               Op::shared_rmw, Op::shared_cas, Op::server_lock, Op::bare_loops};
  return s;
}

}  // namespace copbench
