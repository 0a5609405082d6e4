// The ways a backend's worker is started (launch.h, WorkerLauncher; backends.json
// "launcher"): one class each, registered in worker_launchers(). Each owns what comes
// before the worker on its command line, the variables the worker gets, what it starts
// on this machine around the worker, and its Slurm job's prologue; launch() and the
// launch methods only call them.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "copbench/launch.h"
#include "launch/internal.h"
#include "launch/job_templates.h"

namespace copbench {
namespace fs = std::filesystem;
using namespace launch_detail;

std::vector<std::string> WorkerLauncher::command(const LaunchRequest&, const fs::path&, bool) const { return {}; }

Environment WorkerLauncher::environment(const LaunchRequest&, const fs::path&) const { return {}; }

std::string WorkerLauncher::start_runtime(const LaunchRequest&, const fs::path&, Environment&) const { return ""; }

WorkerLauncher::JobPrologue WorkerLauncher::job_prologue() const {
  return {"# The worker as it is, inside the allocation.\nexec", "the worker itself, inside the allocation"};
}

namespace {

bool given(const Environment& env, const std::string& name) {
  const auto v = env_value(env, name);
  return v && !v->empty();
}

// PVM's directory of daemon files (PVM_TMP, default /tmp).
std::string pvm_tmp_dir(const Environment& env) { return given(env, "PVM_TMP") ? *env_value(env, "PVM_TMP") : "/tmp"; }

// Why no pvmd of this user answers in PVM_TMP (none, or one that died and left its
// file), or nullopt. `note` follows the first kind of answer.
std::optional<std::string> pvmd_problem(const Environment& env, const std::string& note) {
  const fs::path daemon_file = fs::path(pvm_tmp_dir(env)) / fmt::format("pvmd.{}", ::getuid());
  if (!fs::exists(daemon_file))
    return fmt::format("no pvmd is running for this user ({} missing): start the virtual machine with "
                       "`pvm` (then `quit`), or a private local one with `eval $(copbench-pvmd-local start)`{}",
                       daemon_file.string(), note);
  // pvmd.<uid> names the daemon's socket; a daemon that died leaves the file behind.
  const std::string socket = first_line(read_if_any(daemon_file));
  if (!socket.empty() && socket[0] == '/' && !fs::exists(socket))
    return fmt::format("{} is stale (the pvmd that wrote it is gone): remove it and start the virtual machine "
                       "again (`pvm`, or `eval $(copbench-pvmd-local start)`)",
                       daemon_file.string());
  return std::nullopt;
}

class Mpirun : public WorkerLauncher {
 public:
  std::string name() const override { return "mpirun"; }
  std::optional<std::string> runtime_problem(const BackendSpec&, const std::string&, const Environment&) const override {
    if (!on_path("mpirun")) return "mpirun not found on PATH (install openmpi-bin)";
    return std::nullopt;
  }
  std::vector<std::string> command(const LaunchRequest& req, const fs::path&, bool in_allocation) const override {
    const int ranks = req.nodes * req.tasks_per_node;
    std::vector<std::string> argv = {"mpirun", "-np", std::to_string(ranks)};
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
    // Every local rank stands for a node: never pin two of them to one core, and when
    // there are more ranks than cores let waiting ranks yield (Open MPI busy-polls, and
    // spinning ranks on one core starve the rank they wait for).
    argv.insert(argv.end(), {"--oversubscribe", "--bind-to", "none"});
    const unsigned cores = std::thread::hardware_concurrency();
    if (req.hostfile.empty() && !in_allocation && ranks > static_cast<int>(cores))
      argv.insert(argv.end(), {"--mca", "mpi_yield_when_idle", "1"});
    if (!req.hostfile.empty() && !in_allocation) argv.insert(argv.end(), {"--hostfile", req.hostfile});
    // Ranks in blocks, T per host in hostfile order (on one machine all are local anyway).
    if ((!req.hostfile.empty() || in_allocation) && req.tasks_per_node > 1)
      argv.insert(argv.end(), {"--map-by", fmt::format("ppr:{}:node", req.tasks_per_node)});
    argv.insert(argv.end(), req.spec->mpirun_args.begin(), req.spec->mpirun_args.end());
    return argv;
  }
  JobPrologue job_prologue() const override {
    return {"# mpirun inside the allocation: Open MPI takes the hosts from Slurm.\nexec",
            "mpirun inside the allocation (Open MPI reads it)"};
  }
};

// The worker enrolls in the running virtual machine and pvm_spawns the rest.
class PvmMaster : public WorkerLauncher {
 public:
  std::string name() const override { return "pvm_master"; }
  bool needs_running_pvmd() const override { return true; }
  std::optional<std::string> runtime_problem(const BackendSpec&, const std::string&, const Environment& env) const override {
    return pvmd_problem(env, "");
  }
  // The templates (suite/launch/templates/) start every daemon through copbench-daemon.
  JobPrologue job_prologue() const override {
    return {job_templates::pvm_in_allocation, "a pvmd of the allocated hosts, started and halted by the job"};
  }
};

// As pvm_master, on a COP stack (copd and one copdrv per node, seed 000 ch. IV). On one
// machine it uses what it is given and starts the rest privately in the run's directory,
// stopped after the worker: a pvmd unless PVM_TMP names a live one, a loopback stack
// unless COP_DRIVER_1..N or COP_STACK_DIR name one. On a cluster (a hostfile, or
// COP_USE_RUNNING=1) every task binds to the copdrv of its own host and the tasks are
// spread over the cluster's virtual machine, which must run: it starts nothing.
class CopMaster : public WorkerLauncher {
 public:
  std::string name() const override { return "cop_master"; }
  std::optional<std::string> runtime_problem(const BackendSpec&, const std::string& hostfile,
                                             const Environment& env) const override {
    if (hostfile.empty()) return std::nullopt;
    return pvmd_problem(env, fmt::format(" (a cop run on the cluster of {} uses the cluster's virtual machine, started "
                                         "by ansible/site.yml, with PVM_TMP naming its directory)",
                                         hostfile));
  }
  // Each point is its own COP job (cop.h "Jobs": its own partition on a controller that
  // other points or users share), unless the user named one for the whole campaign.
  Environment environment(const LaunchRequest& req, const fs::path& dir) const override {
    if (given(req.env, "COP_JOB")) return {};
    return {{"COP_JOB", "copbench-point-" + dir.filename().string()}};
  }
  std::string start_runtime(const LaunchRequest& req, const fs::path& dir, Environment& env) const override;
  void stop_runtime(const fs::path& dir, const Environment& env) const override;
  JobPrologue job_prologue() const override {
    return {std::string(job_templates::pvm_in_allocation) + job_templates::cop_in_allocation,
            "a pvmd of the allocated hosts, started and halted by the job; a job-private COP stack (copd, one "
            "copdrv per host), started and stopped by the job"};
  }
  void job_context(LaunchOutcome& out, const fs::path& dir) const override {
    const std::string stack = first_line(read_if_any(dir / "cop-stack"));
    out.context["cop_stack"] = stack.empty() ? "job-private (the job ended before it was up)" : "job-private: " + stack;
  }

 private:
  // Runs one of the helpers beside copbench (bounded, stopped on cancel_launches()).
  static ProcessResult helper(const std::vector<std::string>& argv, const Environment& env) {
    ProcessOptions o;
    o.capture = true;
    o.timeout_s = 120;
    o.env = env;
    o.cancelled = [] { return cancelled(); };
    std::vector<std::string> cmd = argv;
    cmd[0] = executable_dir() + "/" + cmd[0];
    return run_process(cmd, o);
  }
};

// `export A=1 B=2` lines (what copbench-pvmd-local start prints) into `env`.
void add_exports(const std::string& text, Environment& env) {
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream words(line);
    std::string word;
    if (!(words >> word) || word != "export") continue;
    while (words >> word)
      if (const auto eq = word.find('='); eq != std::string::npos) env[word.substr(0, eq)] = word.substr(eq + 1);
  }
}

std::string CopMaster::start_runtime(const LaunchRequest& req, const fs::path& dir, Environment& env) const {
  if (!req.hostfile.empty() || env_value(env, "COP_USE_RUNNING") == "1") {
    if (auto problem = pvmd_problem(env, "")) return "a cop run on a cluster (a hostfile, or COP_USE_RUNNING=1) uses the running virtual machine: " + *problem;
    return "";
  }
  if (!given(env, "PVM_TMP") || pvmd_problem(env, "")) {
    const ProcessResult r = helper({"copbench-pvmd-local", "start", (dir / "pvm").string()}, env);
    if (r.status() != 0 || r.output.find("export") == std::string::npos)
      return "could not start a private pvmd: " + last_line(r.output);
    add_exports(r.output, env);
  }
  if (!given(env, "COP_DRIVER_1") && !given(env, "COP_STACK_DIR")) {
    const fs::path stack = dir / "stack";
    const ProcessResult r =
        helper({"copbench-cop-stack", "start", "--nodes", std::to_string(req.nodes), "--dir", stack.string()}, env);
    if (r.status() != 0) return "could not start the COP stack: " + last_line(r.output);
    env["COP_STACK_DIR"] = stack.string();
  }
  return "";
}

// What start_runtime started lies in `dir`: stopped by the helpers that started it.
void CopMaster::stop_runtime(const fs::path& dir, const Environment& env) const {
  std::error_code ec;
  if (fs::exists(dir / "stack", ec)) helper({"copbench-cop-stack", "stop", "--dir", (dir / "stack").string()}, env);
  if (fs::exists(dir / "pvm", ec)) helper({"copbench-pvmd-local", "stop", (dir / "pvm").string()}, env);
}

// Simulated ranks: SimGrid's smpirun on a platform file (--platform NAME).
class Smpirun : public WorkerLauncher {
 public:
  std::string name() const override { return "smpirun"; }
  bool simulated() const override { return true; }
  std::optional<std::string> runtime_problem(const BackendSpec&, const std::string& hostfile, const Environment&) const override {
    if (!on_path("smpirun")) return "smpirun not found on PATH (install libsimgrid-dev)";
    if (!hostfile.empty()) return "the smpi backend simulates its nodes on this machine: it takes no hostfile";
    return std::nullopt;
  }
  // smpirun and its options: the platform file, a hostfile in the run's directory naming
  // the platform's first `nodes` hosts (each tasks_per_node times: ranks in blocks), and
  // the backend's SimGrid settings (backends.json: mpirun_args, and mpirun_args_from_ranks
  // where the point has that many ranks). Every platform's hosts are node-0 ..
  // node-4095 (results/platforms/).
  std::vector<std::string> command(const LaunchRequest& req, const fs::path& dir, bool) const override {
    const fs::path hostfile = dir / "hostfile";
    std::ofstream hosts(hostfile);
    for (int node = 0; node < req.nodes; ++node)
      for (int t = 0; t < req.tasks_per_node; ++t) hosts << "node-" << node << "\n";
    if (!hosts.flush()) throw std::runtime_error("cannot write " + hostfile.string());
    std::vector<std::string> argv = {"smpirun", "-platform", platform_file(req.worker.platform), "-hostfile",
                                     hostfile.string(), "-np", std::to_string(req.nodes * req.tasks_per_node)};
    const std::vector<std::string> args = req.spec->mpirun_args_at(req.nodes * req.tasks_per_node);
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // smpirun, a shell script, splits its arguments again at white space: refuse what it
  // would cut in pieces rather than let the worker read something else.
  void check_argument(const std::string& a) const override {
    if (a.find_first_of(" \t\n") != std::string::npos)
      throw std::invalid_argument(fmt::format("smpirun would split the worker argument '{}' at its spaces", a));
  }
};

// A SimGrid S4U program started as it is: it simulates every node itself (sim-cop).
class S4u : public WorkerLauncher {
 public:
  std::string name() const override { return "s4u"; }
  bool simulated() const override { return true; }
  std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile,
                                             const Environment&) const override {
    if (hostfile.empty()) return std::nullopt;
    return spec.name + " simulates its nodes on this machine: it takes no hostfile";
  }
};

// Every launcher, once: a new way to start a worker is one class and one line here.
const std::vector<std::unique_ptr<WorkerLauncher>>& worker_launchers() {
  static const std::vector<std::unique_ptr<WorkerLauncher>> all = [] {
    std::vector<std::unique_ptr<WorkerLauncher>> v;
    v.push_back(std::make_unique<Mpirun>());
    v.push_back(std::make_unique<PvmMaster>());
    v.push_back(std::make_unique<CopMaster>());
    v.push_back(std::make_unique<Smpirun>());
    v.push_back(std::make_unique<S4u>());
    return v;
  }();
  return all;
}

}  // namespace

std::vector<std::string> worker_launcher_names() {
  std::vector<std::string> names;
  for (const auto& l : worker_launchers()) names.push_back(l->name());
  return names;
}

const WorkerLauncher& worker_launcher(const std::string& name) {
  for (const auto& l : worker_launchers())
    if (l->name() == name) return *l;
  throw std::invalid_argument(
      fmt::format("unknown worker launcher '{}' (known: {})", name, fmt::join(worker_launcher_names(), ", ")));
}

}  // namespace copbench
