// Enrolling in PVM, spawning the tasks, numbering them, forming the group, binding each
// task to its node's channel (cop_mytid); the harness services and the modelled clock.
#include "cop/cop_backend.h"

#include <cop/cop.h>
#include <pvm3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "copbench/bench.h"
#include "pvm/tasks.h"

namespace copbench::cop {
namespace {

// Hall's P_CLK (seed 000 ch. VI): the controller's clock counts cycles of 10 ns.
constexpr double kCycleSeconds = 10e-9;

// Where node <node>'s channel driver is (1-based): COP_DRIVER_<node> (as `cop-stack start` exports
// them), else COP_STACK_DIR/node<node> (the private stack of the cop_master launcher, suite/launch/worker_launchers.cpp), else "" (the
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

void CopBackend::start(const CopOptions& options) {
  if (options.timeout_s > 0) ::alarm(static_cast<unsigned>(options.timeout_s));
  tasks_per_node_ = options.tasks_per_node;  // every task has it from the same arguments
  enroll(options);
  CopOptions mine = options;
  if (pvm::started_by_hand()) {
    spawn_and_number(options);
    if (mine.driver.empty()) mine.driver = driver_for_node(1);
  } else {
    receive_rank_table(0);
  }
  group_ = fmt::format("copbench-cop-{:x}", tids_[0]);
  // Instance == rank, which is what cop_reduce's roots and cop_gather's root name.
  join_group_in_rank_order();
  bind_channel(mine);
}

void CopBackend::enroll(const CopOptions& options) {
  enroll_in_pvm(
      "run through `copbench run --backend cop` (it starts one), or start the virtual machine with `pvm` / "
      "`eval $(copbench-pvmd-local start)`");
  route_ = options.route.empty() ? "direct" : options.route;
  if (route_ != "direct" && route_ != "normal")
    throw std::invalid_argument("unknown cop route '" + route_ + "' (direct, normal: libcop's access modes)");
  // How libcop finds the group's members (cop.h CopStaticGroups, CopGroupCache; issue 26
  // compares them): COPBENCH_COP_GROUPS=static (unset: the group is frozen, fetched once),
  // default (libcop's default: a view kept, dropped on a change notice) or ask (the group
  // server pvmgs every call).
  if (const char* g = std::getenv("COPBENCH_COP_GROUPS"); g && *g) groups_ = g;
  if (groups_ != "static" && groups_ != "default" && groups_ != "ask")
    throw std::invalid_argument("COPBENCH_COP_GROUPS='" + groups_ + "' (static, default, ask: how libcop finds a group's members)");
  // The harness's messages are PVM's; task-to-task links keep them off the daemons.
  pvm::pvm_check(pvm_setopt(PvmRoute, PvmRouteDirect), "pvm_setopt(PvmRoute)");
}

void CopBackend::spawn_and_number(const CopOptions& options) {
  const int t = options.tasks_per_node;
  // A virtual machine of several hosts is a cluster: T tasks per host, in the order the
  // hosts were added (the COP channel order); each uses its own host's copdrv. On one
  // host, rank r uses node r / T's copdrv: the T tasks of a node share its channel.
  if (options.nodes > 64)
    throw std::invalid_argument(fmt::format("--nodes {}: a COP controller has 64 channels", options.nodes));
  if (t > 64)
    throw std::invalid_argument(fmt::format("--tasks-per-node {}: a COP channel has 64 task spaces", t));
  const bool cluster = pvm::virtual_machine_hosts() > 1;
  // The run is one COP job (cop.h "Jobs": its own partition, whoever else shares the
  // controller): COP_JOB as the launcher set it, else one of its own (this master).
  if (const char* job = std::getenv("COP_JOB"); !job || !*job) {
    char host[64] = {};
    ::gethostname(host, sizeof host - 1);
    ::setenv("COP_JOB", fmt::format("copbench-{:.32}-{}-{:x}", host, ::getpid(), mytid_).c_str(), 1);
  }
  // libcop's settings reach the spawned tasks only through PVM_EXPORT (a pvmd's
  // environment is its own): the job (COP_JOB), the polling wait (COP_POLL_US), the groups.
  for (const char* name : {"COP_JOB", "COP_POLL_US", "COPBENCH_COP_GROUPS"}) {
    if (const char* v = std::getenv(name); !v || !*v) continue;
    const char* old = std::getenv("PVM_EXPORT");
    const std::string exported = old && *old ? std::string(old) + ":" + name : std::string(name);
    ::setenv("PVM_EXPORT", exported.c_str(), 1);
  }
  tids_ = pvm::spawn_ranks(mytid_, options.nodes, t, [&](int r) {
    std::vector<std::string> args = options.spawn_args;
    const std::string driver = cluster ? std::string() : driver_for_node(r / t + 1);
    if (!driver.empty()) args.push_back("--cop-driver=" + driver);
    return args;
  });
  send_rank_table({});
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
  // The group is frozen: libcop may keep its tids and channels instead of asking pvmgs
  // (unless COPBENCH_COP_GROUPS asks for libcop's default or for pvmgs every call).
  if (groups_ == "static") check(cop_setopt(CopStaticGroups, 1), "cop_setopt(CopStaticGroups)");
  if (groups_ == "ask") check(cop_setopt(CopGroupCache, 0), "cop_setopt(CopGroupCache)");
  // One group with the whole global address space (the layout in cop_backend.h), as
  // before group windows (cop.h "Tags"): the benchmark's modelled times stay the same.
  check(cop_setopt(CopGroupWindows, 1), "cop_setopt(CopGroupWindows)");
  check(cop_barrier(group_.data(), ranks(), kSyncBarrierTag), "cop_barrier (setup)");
}

CopBackend::~CopBackend() {
  // A destructor cannot fail the point (it is reported already): a failing call is said
  // on stderr, and cop_exit / pvm_exit still run.
  stop_floor();
  try {
    if (joined_) pvm::pvm_check(pvm_barrier(group_.data(), ranks()), "pvm_barrier (farewell)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cop: rank %d ending: %s\n", rank_, e.what());
  }
  if (enrolled_) cop_exit();
  if (joined_ && pvm_lvgroup(group_.data()) < 0)
    std::fprintf(stderr, "cop: rank %d ending: pvm_lvgroup failed\n", rank_);
  pvm_exit();
}

void CopBackend::kill_all() {
  stop_floor();
  kill_other_ranks();
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

}  // namespace copbench::cop
