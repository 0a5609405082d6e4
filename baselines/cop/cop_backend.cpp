// Enrolling in PVM, spawning the tasks, numbering them, forming the group, binding each
// task to its node's channel (cop_mytid); the harness services and the modelled clock.
#include "cop/cop_backend.h"

#include <cop/cop.h>
#include <pvm3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "copbench/bench.h"

namespace copbench {
BackendSpec cop_spec();
}

namespace copbench::cop {
namespace {

// Hall's P_CLK (seed 000 ch. VI): the controller's clock counts cycles of 10 ns.
constexpr double kCycleSeconds = 10e-9;

// Where node <node>'s channel driver is (1-based): COP_DRIVER_<node> (as `cop-stack start` exports
// them), else COP_STACK_DIR/node<node> (copbench-cop-run's private stack), else "" (the
// task's own COP_DRIVER or libcop's default, as on a cluster where each host has one).
std::string driver_for_node(int node) {
  if (const char* d = std::getenv(fmt::format("COP_DRIVER_{}", node).c_str()); d && *d) return d;
  if (const char* dir = std::getenv("COP_STACK_DIR"); dir && *dir) return fmt::format("{}/node{}", dir, node);
  return {};
}

}  // namespace

int check(int rc, const char* call) {
  if (rc < 0) throw std::runtime_error(fmt::format("{} failed: {} ({})", call, cop_strerror(rc), rc));
  return rc;
}

CopBackend::CopBackend(const CopOptions& options) {
  if (options.timeout_s > 0) ::alarm(static_cast<unsigned>(options.timeout_s));
  tasks_per_node_ = options.tasks_per_node;  // every task has it from the same arguments
  enroll(options);
  try {
    CopOptions mine = options;
    if (pvm_parent() == PvmNoParent) {
      spawn_and_number(options);
      if (mine.driver.empty()) mine.driver = driver_for_node(1);
    } else {
      pvm_recv(pvm_parent(), kSetupTag);
      int n = 0;
      pvm_upkint(&n, 1, 1);
      tids_.resize(static_cast<std::size_t>(n));
      pvm_upkint(tids_.data(), n, 1);
      for (int r = 0; r < n; ++r)
        if (tids_[static_cast<std::size_t>(r)] == mytid_) rank_ = r;
    }
    group_ = fmt::format("copbench-cop-{:x}", tids_[0]);
    join_group_in_rank_order();
    bind_channel(mine);
  } catch (...) {
    kill_all();
    throw;
  }
}

void CopBackend::enroll(const CopOptions& options) {
  pvm_setopt(PvmAutoErr, 0);
  mytid_ = pvm_mytid();
  if (mytid_ < 0)
    throw std::runtime_error(
        "cannot contact the local pvmd: run through `copbench run --backend cop` (it starts one), or start the "
        "virtual machine with `pvm` / `eval $(copbench-pvmd-local start)`");
  route_ = options.route.empty() ? "direct" : options.route;
  if (route_ != "direct" && route_ != "normal")
    throw std::invalid_argument("unknown cop route '" + route_ + "' (direct, normal: libcop's access modes)");
  // The harness's messages are PVM's; task-to-task links keep them off the daemons.
  pvm_setopt(PvmRoute, PvmRouteDirect);
}

void CopBackend::spawn_and_number(const CopOptions& options) {
  const int t = options.tasks_per_node;
  const int n = options.nodes * t;
  int nhost = 0, narch = 0;
  pvmhostinfo* hosts = nullptr;
  if (pvm_config(&nhost, &narch, &hosts) < 0) throw std::runtime_error("pvm_config failed");
  // A virtual machine of several hosts is a cluster: T tasks per host, in the order the
  // hosts were added (the COP channel order); each uses its own host's copdrv. On one
  // host, rank r uses node r / T's copdrv: the T tasks of a node share its channel.
  if (nhost > 1 && options.nodes > nhost)
    throw std::invalid_argument(fmt::format("--nodes {}: the virtual machine has {} hosts", options.nodes, nhost));
  if (options.nodes > 64)
    throw std::invalid_argument(fmt::format("--nodes {}: a COP controller has 64 channels", options.nodes));
  if (t > 64)
    throw std::invalid_argument(fmt::format("--tasks-per-node {}: a COP channel has 64 task spaces", t));

  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  tids_.assign(static_cast<std::size_t>(n), 0);
  tids_[0] = mytid_;
  for (int r = 1; r < n; ++r) {
    std::vector<std::string> args = options.spawn_args;
    const std::string driver = nhost > 1 ? std::string() : driver_for_node(r / t + 1);
    if (!driver.empty()) args.push_back("--cop-driver=" + driver);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int tid = 0;
    int got = nhost > 1 ? pvm_spawn(self.data(), argv.data(), PvmTaskHost, hosts[r / t].hi_name, 1, &tid)
                        : pvm_spawn(self.data(), argv.data(), PvmTaskDefault, const_cast<char*>(""), 1, &tid);
    if (got != 1) {
      for (int k = 1; k < r; ++k) pvm_kill(tids_[static_cast<std::size_t>(k)]);
      tids_.resize(1);
      throw std::runtime_error(fmt::format("pvm_spawn of task {} failed (code {})", r, tid));
    }
    tids_[static_cast<std::size_t>(r)] = tid;
  }
  for (int r = 1; r < n; ++r) {
    pvm_initsend(PvmDataDefault);
    pvm_pkint(const_cast<int*>(&n), 1, 1);
    pvm_pkint(tids_.data(), n, 1);
    pvm_send(tids_[static_cast<std::size_t>(r)], kSetupTag);
  }
}

// Instance numbers follow join order; joining one after another makes instance == rank,
// which is what cop_reduce's roots and cop_gather's root name.
void CopBackend::join_group_in_rank_order() {
  const int n = ranks();
  if (rank_ > 0) pvm_recv(tids_[static_cast<std::size_t>(rank_ - 1)], kSetupTag);
  int inst = pvm_joingroup(group_.data());
  if (inst < 0)
    throw std::runtime_error(fmt::format(
        "pvm_joingroup failed (code {}): is the group server pvmgs on the pvmd's path (ep=)?", inst));
  joined_ = true;
  if (inst != rank_) throw std::runtime_error(fmt::format("group instance {} for rank {}", inst, rank_));
  if (rank_ + 1 < n) {
    pvm_initsend(PvmDataDefault);
    pvm_send(tids_[static_cast<std::size_t>(rank_ + 1)], kSetupTag);
  }
  if (pvm_barrier(group_.data(), n) < 0) throw std::runtime_error("pvm_barrier failed while forming the group");
  pvm_freezegroup(group_.data(), n);
  pvm_barrier(group_.data(), n);
}

void CopBackend::bind_channel(const CopOptions& options) {
  if (!options.driver.empty()) ::setenv("COP_DRIVER", options.driver.c_str(), 1);
  ::setenv("COP_ACCESS", route_.c_str(), 1);
  const int tid = cop_mytid();
  if (tid < 0) {
    const char* where = std::getenv("COP_DRIVER");
    throw std::runtime_error(fmt::format(
        "cop_mytid failed on rank {} (COP_DRIVER={}): {} ({}); start the COP stack with `copbench-cop-stack start "
        "--nodes N` or let `copbench run --backend cop` start one",
        rank_, where ? where : "unset", cop_strerror(tid), tid));
  }
  enrolled_ = true;
  // The group is frozen: libcop may keep its tids and channels instead of asking pvmgs.
  check(cop_setopt(CopStaticGroups, 1), "cop_setopt(CopStaticGroups)");
  check(cop_barrier(group_.data(), ranks(), kSyncBarrierTag), "cop_barrier (setup)");
}

CopBackend::~CopBackend() {
  if (joined_) pvm_barrier(group_.data(), ranks());
  if (enrolled_) cop_exit();
  if (joined_) pvm_lvgroup(group_.data());
  pvm_exit();
}

void CopBackend::kill_all() {
  joined_ = false;
  for (std::size_t r = 0; r < tids_.size(); ++r)
    if (tids_[r] != 0 && tids_[r] != mytid_) pvm_kill(tids_[r]);
}

bool CopBackend::offers(Op op) const {
  static const BackendSpec spec = cop_spec();
  return spec.offers(op);
}

std::uint64_t CopBackend::cycles() const {
  unsigned long long c = 0;
  check(cop_modelled_cycles(&c), "cop_modelled_cycles");
  return c;
}

// The thesis's barrier before each timed collective, on the channel (cop_barrier): every
// task leaves it on the controller's one release broadcast, so they start together. The
// cycles it costs are kept out of the modelled clock, which then counts, per timed
// operation, the controller's cycles from the release to this task's last message.
void CopBackend::sync() {
  const std::uint64_t before = cycles();
  check(cop_barrier(group_.data(), ranks(), kSyncBarrierTag), "cop_barrier (sync)");
  excluded_cycles_ += cycles() - before;
  reduce_cursor_ = kReduceFirst;
  cast_cursor_ = kCastFirst;
}

std::optional<double> CopBackend::modelled_clock() {
  return static_cast<double>(cycles() - excluded_cycles_) * kCycleSeconds;
}

int CopBackend::take_gas(std::uint32_t& cursor, std::uint32_t first, std::uint32_t end, std::size_t words) {
  if (words > end - first) throw std::logic_error("GAS range larger than its pool");
  if (cursor + words > end) {
    check(cop_barrier(group_.data(), ranks(), kSyncBarrierTag), "cop_barrier (GAS pool wrap)");
    reduce_cursor_ = kReduceFirst;
    cast_cursor_ = kCastFirst;
  }
  const auto tag = static_cast<int>(cursor);
  cursor += static_cast<std::uint32_t>(words);
  return tag;
}

// Gathered at rank 0 by PVM messages, maximised there, and multicast back: a harness
// service, kept off the channel so it never touches the modelled clock.
void CopBackend::max_over_ranks(std::span<double> values) {
  const int n = ranks();
  const int count = static_cast<int>(values.size());
  if (n == 1) return;
  if (rank_ == 0) {
    std::vector<double> other(values.size());
    for (int r = 1; r < n; ++r) {
      pvm_recv(-1, kMaxUpTag);
      pvm_upkdouble(other.data(), count, 1);
      for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], other[i]);
    }
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(values.data(), count, 1);
    pvm_mcast(tids_.data() + 1, n - 1, kMaxDownTag);
  } else {
    pvm_initsend(PvmDataDefault);
    pvm_pkdouble(values.data(), count, 1);
    pvm_send(tids_[0], kMaxUpTag);
    pvm_recv(tids_[0], kMaxDownTag);
    pvm_upkdouble(values.data(), count, 1);
  }
}

}  // namespace copbench::cop
