// How a task that cop_libcop_check or cop_fault_check spawned ends: its report
// to the parent (who prints and judges it), then it leaves libcop and PVM.
#pragma once
#include <cop/cop.h>
#include <pvm3.h>

#include <string>

namespace cop::testing {

// The first words of a task's report: which task, on which emulated node.
inline std::string task_heading(int inst, int node) {
  return "task inst " + std::to_string(inst) + " node " + std::to_string(node) + ":";
}

// Sends the message being packed (pvm_initsend done, figures packed) to the
// parent with `tag`, then leaves libcop and PVM. Returns the task's exit status
// (0: the parent judges the report, not the exit status).
inline int send_to_parent_and_exit(int tag) {
  pvm_send(pvm_parent(), tag);
  cop_exit();
  pvm_exit();
  return 0;
}

// The same with `report` packed as the message's last item.
inline int report_to_parent(int tag, const std::string& report) {
  pvm_pkstr(const_cast<char*>(report.c_str()));
  return send_to_parent_and_exit(tag);
}

}  // namespace cop::testing
