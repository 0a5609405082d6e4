// How a PVM program of this suite sets up its tasks: the pvm backend and the cop backend
// (a COP program is a PVM program calling libcop) both start this way.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace copbench::pvm {

// Spawns ranks 1 .. nodes*tasks_per_node-1 of this executable; rank 0 is the caller
// (my_tid). A virtual machine of several hosts is a cluster: tasks_per_node tasks per
// host, in the order the hosts were added (rank r on host r / tasks_per_node); on one
// host every task runs there. args_for(r) gives rank r's arguments. Returns every rank's
// tid; on failure kills what it spawned and throws.
std::vector<int> spawn_ranks(int my_tid, int nodes, int tasks_per_node,
                             const std::function<std::vector<std::string>(int rank)>& args_for);

// Hosts of the running virtual machine (throws when pvm_config fails).
int virtual_machine_hosts();

// Joins `group` one rank after the other (a token passed with `token_tag`), so that
// instance number == rank, as pvm_reduce / pvm_gather / cop_reduce's roots address
// members; then freezes the group. `joined` is set once this task is a member.
void join_group_in_rank_order(const std::string& group, std::span<const int> tids, int rank, int token_tag,
                              bool& joined);

// Element-wise maximum over ranks by PVM messages: to rank 0 (up_tag), maximised there
// and multicast back (down_tag). A harness service, never timed.
void max_over_ranks_by_messages(std::span<const int> tids, int rank, std::span<double> values, int up_tag,
                                int down_tag);

}  // namespace copbench::pvm
