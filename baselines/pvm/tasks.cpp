// PVM task setup shared by the pvm and cop backends (tasks.h).
#include "pvm/tasks.h"

#include <pvm3.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

// PVM's table of error texts (what pvm_perror prints), exported by libpvm3 but not
// declared in pvm3.h.
extern "C" {
extern char* pvm_errlist[];
extern int pvm_nerr;
}

namespace copbench::pvm {

namespace {
const char* error_text(int rc) {
  return -rc < pvm_nerr && pvm_errlist[-rc] != nullptr ? pvm_errlist[-rc] : "unknown PVM error";
}
}  // namespace

int pvm_check(int rc, const char* call) {
  if (rc >= 0) return rc;
  throw std::runtime_error(fmt::format("{} failed: {} (code {})", call, error_text(rc), rc));
}

int virtual_machine_hosts() {
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  pvm_check(pvm_config(&nhost, &narch, &hosts), "pvm_config");
  return nhost;
}

bool started_by_hand() {
  const int parent = pvm_parent();
  if (parent == PvmNoParent) return true;
  pvm_check(parent, "pvm_parent");
  return false;
}

std::vector<int> spawn_ranks(int my_tid, int nodes, int tasks_per_node,
                             const std::function<std::vector<std::string>(int rank)>& args_for) {
  const int t = tasks_per_node;
  const int n = nodes * t;
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  pvm_check(pvm_config(&nhost, &narch, &hosts), "pvm_config");
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
      for (int k = 1; k < r; ++k) pvm_kill(tids[static_cast<std::size_t>(k)]);  // best effort: failing anyway
      // pvm_spawn returns the count started; the reason is the negative tid (or count).
      pvm_check(got < 0 ? got : tid < 0 ? tid : PvmSysErr, fmt::format("pvm_spawn of task {}", r).c_str());
    }
    tids[static_cast<std::size_t>(r)] = tid;
  }
  return tids;
}

void PvmTaskBackend::join_group_in_rank_order() {
  const int n = ranks();
  char* name = group_.data();
  if (rank_ > 0) pvm_check(pvm_recv(tids_[static_cast<std::size_t>(rank_ - 1)], kSetupTag), "pvm_recv (group token)");
  const int inst = pvm_joingroup(name);
  if (inst < 0)
    throw std::runtime_error(fmt::format("pvm_joingroup failed: {} (code {}): is the group server pvmgs on the "
                                         "pvmd's path (ep=)?",
                                         error_text(inst), inst));
  joined_ = true;
  if (inst != rank_) throw std::runtime_error(fmt::format("group instance {} for rank {}", inst, rank_));
  if (rank_ + 1 < n) {
    pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
    pvm_check(pvm_send(tids_[static_cast<std::size_t>(rank_ + 1)], kSetupTag), "pvm_send (group token)");
  }
  pvm_check(pvm_barrier(name, n), "pvm_barrier (forming the group)");
  pvm_check(pvm_freezegroup(name, n), "pvm_freezegroup");
  pvm_check(pvm_barrier(name, n), "pvm_barrier (group frozen)");
}

void PvmTaskBackend::enroll_in_pvm(const char* hint) {
  pvm_setopt(PvmAutoErr, 0);
  mytid_ = pvm_mytid();
  if (mytid_ < 0) throw std::runtime_error(std::string("cannot contact the local pvmd: ") + hint);
}

void PvmTaskBackend::send_rank_table(std::span<const int> extra) const {
  int n = ranks();
  for (int r = 1; r < n; ++r) {
    pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
    pvm_check(pvm_pkint(&n, 1, 1), "pvm_pkint");
    if (!extra.empty())
      pvm_check(pvm_pkint(const_cast<int*>(extra.data()), static_cast<int>(extra.size()), 1), "pvm_pkint");
    pvm_check(pvm_pkint(const_cast<int*>(tids_.data()), n, 1), "pvm_pkint");
    pvm_check(pvm_send(tids_[static_cast<std::size_t>(r)], kSetupTag), "pvm_send (rank table)");
  }
}

std::vector<int> PvmTaskBackend::receive_rank_table(int extra_count) {
  pvm_check(pvm_recv(pvm_parent(), kSetupTag), "pvm_recv (rank table)");
  int n = 0;
  pvm_check(pvm_upkint(&n, 1, 1), "pvm_upkint");
  std::vector<int> extra(static_cast<std::size_t>(extra_count));
  if (extra_count > 0) pvm_check(pvm_upkint(extra.data(), extra_count, 1), "pvm_upkint");
  tids_.resize(static_cast<std::size_t>(n));
  pvm_check(pvm_upkint(tids_.data(), n, 1), "pvm_upkint");
  for (int r = 0; r < n; ++r)
    if (tids_[static_cast<std::size_t>(r)] == mytid_) rank_ = r;
  return extra;
}

void PvmTaskBackend::kill_other_ranks() {
  joined_ = false;  // the others are gone: no farewell barrier
  // Best effort: a task that already ended makes pvm_kill fail, and the run fails anyway.
  for (int tid : tids_)
    if (tid != 0 && tid != mytid_) pvm_kill(tid);
}

void PvmTaskBackend::max_over_ranks(std::span<double> values) {
  const int n = ranks();
  const int count = static_cast<int>(values.size());
  if (n == 1) return;
  if (rank_ == 0) {
    std::vector<double> other(values.size());
    for (int r = 1; r < n; ++r) {
      pvm_check(pvm_recv(-1, kMaxUpTag), "pvm_recv (max_over_ranks)");
      pvm_check(pvm_upkdouble(other.data(), count, 1), "pvm_upkdouble");
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], other[i]);
    }
    pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
    pvm_check(pvm_pkdouble(values.data(), count, 1), "pvm_pkdouble");
    pvm_check(pvm_mcast(tids_.data() + 1, n - 1, kMaxDownTag), "pvm_mcast (max_over_ranks)");
  } else {
    pvm_check(pvm_initsend(PvmDataDefault), "pvm_initsend");
    pvm_check(pvm_pkdouble(values.data(), count, 1), "pvm_pkdouble");
    pvm_check(pvm_send(tids_[0], kMaxUpTag), "pvm_send (max_over_ranks)");
    pvm_check(pvm_recv(tids_[0], kMaxDownTag), "pvm_recv (max_over_ranks)");
    pvm_check(pvm_upkdouble(values.data(), count, 1), "pvm_upkdouble");
  }
}

}  // namespace copbench::pvm
