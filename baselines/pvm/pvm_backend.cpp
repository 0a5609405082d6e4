// Enrolling, spawning the tasks, numbering them and forming the group; the harness services.
#include "pvm/pvm_backend.h"

#include <pvm3.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "copbench/bench.h"

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
  if (started_by_hand())
    spawn_and_number(options);
  else
    server_tid_ = receive_rank_table(1)[0];  // the rank table from rank 0, with the server's tid
  group_ = fmt::format("copbench-{:x}", tids_[0]);
  // pvm_gather / pvm_scatter / pvm_reduce address members by instance number: instance == rank.
  join_group_in_rank_order();
}

void PvmBackend::enroll(const PvmOptions& options) {
  enroll_in_pvm(
      "start the virtual machine with `pvm` (then `quit`), or a private local one with "
      "`eval $(copbench-pvmd-local start)`");
  route_ = options.route.empty() ? "normal" : options.route;
  if (route_ != "normal" && route_ != "direct")
    throw std::invalid_argument("unknown PVM route '" + route_ + "' (normal, direct)");
  // Direct: every task asks for task-to-task links. Normal: every task allows them but
  // nobody asks, so traffic goes through the daemons (PvmDontRoute against a direct
  // request hangs the task that asks: it waits for a link the other never grants).
  pvm_check(pvm_setopt(PvmRoute, route_ == "direct" ? PvmRouteDirect : PvmAllowDirect), "pvm_setopt(PvmRoute)");
  encoding_ = encoding_code(options.encoding);
}

void PvmBackend::spawn_and_number(const PvmOptions& options) {
  tids_ = spawn_ranks(mytid_, options.nodes, options.tasks_per_node, [&](int) { return options.spawn_args; });
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // The lock / shared-variable server task only for a run that locks, shares words or
  // fences (the worker's command line says): echo and the collectives run without it.
  std::vector<char*> argv{self.data()};
  std::vector<std::string> raw = options.spawn_args;
  for (std::string& a : raw) argv.push_back(a.data());
  const bool server = uses_any(ops_of_worker_command(static_cast<int>(argv.size()), argv.data()),
                               {Op::lock, Op::shared_read, Op::shared_write, Op::shared_rmw, Op::shared_cas,
                                Op::fence, Op::fence_window, Op::fence_barrier, Op::server_lock});
  std::string server_arg = fmt::format("--pvm-server={},{}", ranks(), options.timeout_s);
  char* server_argv[] = {server_arg.data(), nullptr};
  if (server) {
    const int got = pvm_spawn(self.data(), server_argv, PvmTaskDefault, const_cast<char*>(""), 1, &server_tid_);
    if (got != 1) {
      const int code = got < 0 ? got : server_tid_ < 0 ? server_tid_ : PvmSysErr;
      server_tid_ = 0;
      kill_other_ranks();
      pvm_check(code, "pvm_spawn of the lock server");
    }
  }
  const int extra[] = {server_tid_};
  send_rank_table(extra);
}

PvmBackend::~PvmBackend() {
  // A destructor cannot fail the point (it is reported already): a failing call is said
  // on stderr, and pvm_exit still runs.
  try {
    if (joined_) {
      pvm_check(pvm_barrier(group_.data(), ranks()), "pvm_barrier (farewell)");
      if (rank_ == 0 && server_tid_ != 0) server_call(-1, 0, 0, 0, false);  // stop the server
      pvm_check(pvm_lvgroup(group_.data()), "pvm_lvgroup");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pvm: rank %d ending: %s\n", rank_, e.what());
  }
  pvm_exit();
}

void PvmBackend::kill_all() {
  kill_other_ranks();
  if (server_tid_ != 0) pvm_kill(server_tid_);  // best effort, as kill_other_ranks
}

void PvmBackend::sync() { pvm_check(pvm_barrier(group_.data(), ranks()), "pvm_barrier (sync)"); }

}  // namespace copbench::pvm
