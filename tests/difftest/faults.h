// cop_difftest's faults on a live stack of scripts/cop-stack (its state directory: the PID
// files of lib/daemons.sh, copd.pid and node<k>.pid): copd stopped (SIGSTOP, then SIGCONT),
// a node cut off (its copdrv stopped: no heartbeats, no frames, longer than copd's lease),
// copd killed -9 and started again with its own arguments on its own port by
// copbench-daemon (the one start of lib/daemons.sh). Test harness only: nothing in cop/.
#pragma once
#include <string>

#include "program.h"

namespace difftest {

// Makes the fault (returns when it is over: a stop or partition after `ms`); false with
// `why` when the daemon or its PID file is not there.
bool make_fault(const std::string& stack_dir, Fault f, int ms, int node, std::string& why);

// Lets every daemon of the stack run again (a run cut short while one was stopped).
void continue_all(const std::string& stack_dir, int nodes);

}  // namespace difftest
