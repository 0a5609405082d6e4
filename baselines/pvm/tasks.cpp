// PVM task setup shared by the pvm and cop backends (tasks.h).
#include "pvm/tasks.h"

#include <pvm3.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace copbench::pvm {

int virtual_machine_hosts() {
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  if (pvm_config(&nhost, &narch, &hosts) < 0) throw std::runtime_error("pvm_config failed");
  return nhost;
}

std::vector<int> spawn_ranks(int my_tid, int nodes, int tasks_per_node,
                             const std::function<std::vector<std::string>(int rank)>& args_for) {
  const int t = tasks_per_node;
  const int n = nodes * t;
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  if (pvm_config(&nhost, &narch, &hosts) < 0) throw std::runtime_error("pvm_config failed");
  if (nhost > 1 && nodes > nhost)
    throw std::invalid_argument(fmt::format("--nodes {}: the virtual machine has {} hosts", nodes, nhost));

  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<int> tids(static_cast<std::size_t>(n), 0);
  tids[0] = my_tid;
  for (int r = 1; r < n; ++r) {
    std::vector<std::string> args = args_for(r);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int tid = 0;
    int got = nhost > 1 ? pvm_spawn(self.data(), argv.data(), PvmTaskHost, hosts[r / t].hi_name, 1, &tid)
                        : pvm_spawn(self.data(), argv.data(), PvmTaskDefault, const_cast<char*>(""), 1, &tid);
    if (got != 1) {
      for (int k = 1; k < r; ++k) pvm_kill(tids[static_cast<std::size_t>(k)]);
      throw std::runtime_error(fmt::format("pvm_spawn of task {} failed (code {})", r, tid));
    }
    tids[static_cast<std::size_t>(r)] = tid;
  }
  return tids;
}

void join_group_in_rank_order(const std::string& group, std::span<const int> tids, int rank, int token_tag,
                              bool& joined) {
  const int n = static_cast<int>(tids.size());
  char* name = const_cast<char*>(group.c_str());
  if (rank > 0) pvm_recv(tids[static_cast<std::size_t>(rank - 1)], token_tag);
  int inst = pvm_joingroup(name);
  if (inst < 0)
    throw std::runtime_error(fmt::format(
        "pvm_joingroup failed (code {}): is the group server pvmgs on the pvmd's path (ep=)?", inst));
  joined = true;
  if (inst != rank) throw std::runtime_error(fmt::format("group instance {} for rank {}", inst, rank));
  if (rank + 1 < n) {
    pvm_initsend(PvmDataDefault);
    pvm_send(tids[static_cast<std::size_t>(rank + 1)], token_tag);
  }
  if (pvm_barrier(name, n) < 0) throw std::runtime_error("pvm_barrier failed while forming the group");
  pvm_freezegroup(name, n);
  pvm_barrier(name, n);
}

void max_over_ranks_by_messages(std::span<const int> tids, int rank, std::span<double> values, int up_tag,
                                int down_tag) {
  const int n = static_cast<int>(tids.size());
  const int count = static_cast<int>(values.size());
  if (n == 1) return;
  if (rank == 0) {
    std::vector<double> other(values.size());
    for (int r = 1; r < n; ++r) {
      pvm_recv(-1, up_tag);
      pvm_upkdouble(other.data(), count, 1);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], other[i]);
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(values.data(), count, 1);
    pvm_mcast(const_cast<int*>(tids.data()) + 1, n - 1, down_tag);
  } else {
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(values.data(), count, 1);
    pvm_send(tids[0], up_tag);
    pvm_recv(tids[0], down_tag);
    pvm_upkdouble(values.data(), count, 1);
  }
}

}  // namespace copbench::pvm
