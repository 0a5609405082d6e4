// Enrolling, spawning the tasks, numbering them and forming the group; the harness services.
#include "pvm/pvm_backend.h"

#include <pvm3.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "copbench/bench.h"
#include "pvm/tasks.h"

namespace copbench {
BackendSpec pvm_spec();
}

namespace copbench::pvm {

int encoding_code(const std::string& name) {
  if (name == "default" || name.empty()) return PvmDataDefault;
  if (name == "raw") return PvmDataRaw;
  if (name == "inplace") return PvmDataInPlace;
  throw std::invalid_argument("unknown PVM encoding '" + name + "' (default, raw, inplace)");
}

void PvmBackend::start(const PvmOptions& options) {
  if (options.timeout_s > 0) ::alarm(static_cast<unsigned>(options.timeout_s));
  tasks_per_node_ = options.tasks_per_node;  // every task has it from the same arguments
  enroll(options);
  {
    if (pvm_parent() == PvmNoParent)
      spawn_and_number(options);
    else {
      // The rank table from rank 0: nodes, server tid, then every rank's tid.
      pvm_recv(pvm_parent(), kSetupTag);
      int n = 0;
      pvm_upkint(&n, 1, 1);
      pvm_upkint(&server_tid_, 1, 1);
      tids_.resize(static_cast<std::size_t>(n));
      pvm_upkint(tids_.data(), n, 1);
      for (int r = 0; r < n; ++r)
        if (tids_[static_cast<std::size_t>(r)] == mytid_) rank_ = r;
    }
    group_ = fmt::format("copbench-{:x}", tids_[0]);
    join_group_in_rank_order();
  }
}

void PvmBackend::enroll(const PvmOptions& options) {
  pvm_setopt(PvmAutoErr, 0);  // errors are ours to report, in one line
  mytid_ = pvm_mytid();
  if (mytid_ < 0)
    throw std::runtime_error(
        "cannot contact the local pvmd: start the virtual machine with `pvm` (then `quit`), "
        "or a private local one with `eval $(copbench-pvmd-local start)`");
  route_ = options.route.empty() ? "normal" : options.route;
  if (route_ != "normal" && route_ != "direct")
    throw std::invalid_argument("unknown PVM route '" + route_ + "' (normal, direct)");
  // Direct: every task asks for task-to-task links. Normal: every task allows them but
  // nobody asks, so traffic goes through the daemons (PvmDontRoute against a direct
  // request hangs: CLUSTER-NOTES.md).
  pvm_setopt(PvmRoute, route_ == "direct" ? PvmRouteDirect : PvmAllowDirect);
  encoding_ = encoding_code(options.encoding);
}

void PvmBackend::spawn_and_number(const PvmOptions& options) {
  tids_ = spawn_ranks(mytid_, options.nodes, options.tasks_per_node, [&](int) { return options.spawn_args; });
  const int n = static_cast<int>(tids_.size());
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // The lock / shared-variable server task only for a run that locks, shares words or
  // fences (the worker's command line says): echo and the collectives run without it.
  std::vector<char*> argv{self.data()};
  std::vector<std::string> raw = options.spawn_args;
  for (std::string& a : raw) argv.push_back(a.data());
  const bool server = uses_any(ops_of_worker_command(static_cast<int>(argv.size()), argv.data()),
                               {Op::lock, Op::shared_read, Op::shared_write, Op::shared_rmw, Op::shared_cas,
                                Op::fence, Op::fence_window, Op::fence_barrier, Op::server_lock});
  std::string server_arg = fmt::format("--pvm-server={},{}", n, options.timeout_s);
  char* server_argv[] = {server_arg.data(), nullptr};
  if (server && pvm_spawn(self.data(), server_argv, PvmTaskDefault, const_cast<char*>(""), 1, &server_tid_) != 1) {
    for (int k = 1; k < n; ++k) pvm_kill(tids_[static_cast<std::size_t>(k)]);
    throw std::runtime_error(fmt::format("pvm_spawn of the lock server failed (code {})", server_tid_));
  }
  for (int r = 1; r < n; ++r) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(const_cast<int*>(&n), 1, 1);
    pvm_pkint(&server_tid_, 1, 1);
    pvm_pkint(tids_.data(), n, 1);
    pvm_send(tids_[static_cast<std::size_t>(r)], kSetupTag);
  }
}

// pvm_gather / pvm_scatter / pvm_reduce address members by instance number: instance == rank.
void PvmBackend::join_group_in_rank_order() {
  pvm::join_group_in_rank_order(group_, tids_, rank_, kSetupTag, joined_);
}

PvmBackend::~PvmBackend() {
  if (joined_) {
    pvm_barrier(group_.data(), ranks());
    if (rank_ == 0 && server_tid_ != 0) server_call(-1, 0, 0, 0, false);  // stop the server
    pvm_lvgroup(group_.data());
  }
  pvm_exit();
}

void PvmBackend::kill_all() {
  joined_ = false;  // the others are gone: no farewell barrier
  for (std::size_t r = 0; r < tids_.size(); ++r)
    if (tids_[r] != 0 && tids_[r] != mytid_) pvm_kill(tids_[r]);
  if (server_tid_ != 0) pvm_kill(server_tid_);
}

bool PvmBackend::offers(Op op) const {
  static const BackendSpec spec = pvm_spec();
  return spec.offers(op);
}

void PvmBackend::sync() { pvm_barrier(group_.data(), ranks()); }

// Gathered at rank 0 by messages, maximised there, and multicast back.
void PvmBackend::max_over_ranks(std::span<double> values) {
  max_over_ranks_by_messages(tids_, rank_, values, kMaxUpTag, kMaxDownTag);
}

}  // namespace copbench::pvm
