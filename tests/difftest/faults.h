// cop_difftest's faults on a live stack of scripts/cop-stack (its state directory: the PID
// files of lib/daemons.sh, copd.pid and node<k>.pid): copd stopped (SIGSTOP, then SIGCONT),
// a node cut off (its copdrv and its tasks stopped: copd hears nothing of the node and the
// node nothing of copd, past copd's lease; the loopback has no link to cut, so what copd
// sent meanwhile waits in the node's socket buffers and is read after, where a real
// partition would lose it), copd killed -9 and started again with its own arguments on its
// own port by copbench-daemon (the one start of lib/daemons.sh). Test harness only.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "program.h"

namespace difftest {

// Makes the fault (returns when it is over: a stop or partition after `ms`; a partition
// stops `node_tasks`, the pids of the node's tasks, too); false with `why` when the daemon
// or its PID file is not there.
bool make_fault(const std::string& stack_dir, Fault f, int ms, int node, const std::vector<pid_t>& node_tasks,
                std::string& why);

// Lets every daemon of the stack run again (a run cut short while one was stopped).
void continue_all(const std::string& stack_dir, int nodes);

}  // namespace difftest
