// The CLI side of `copbench run`: checks a request against what is available and starts
// the backend's worker the way that system starts programs.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "copbench/catalog.h"
#include "copbench/process.h"
#include "copbench/worker.h"

namespace copbench {

struct LaunchRequest {
  const BackendSpec* spec = nullptr;
  int nodes = 1;
  int tasks_per_node = 1;             // ranks per node, in blocks (backend.h)
  std::string hostfile;                 // a cluster's hosts (mpirun --hostfile syntax); "" = this machine
  // What the worker is told (worker.h); nodes, tasks per node, its deadline and its
  // files are filled in from this request by the launch.
  WorkerArgs worker;
  // The worker's environment on top of this process's (process.h): the point's `env:`,
  // the campaign's tag and private pvmd, COP_PER_CONTROLLER. The launch adds its own
  // (WorkerLauncher::environment); nothing is set in this process.
  Environment env;
  int timeout_s = 600;
  // Told what the launch creates, as soon as it exists, so that a campaign can record
  // it and clean it up after a kill: the private temporary directory, then the
  // worker's pid (also its process group).
  std::function<void(const std::string& dir)> on_temp_dir;
  std::function<void(int pid)> on_worker;
  // Batch systems (Slurm): the job's name, a directory every node sees (the worker's
  // result file is written there, on whichever node runs rank 0), and told the job id
  // as soon as the job is submitted.
  std::string job_name;
  std::string shared_dir;
  std::function<void(const std::string& job)> on_job;
};

struct LaunchOutcome {
  int exit_code = 0;
  std::string error;   // the worker's one-line error, or ours
  std::string result;  // the result file's contents when exit_code == 0
  nlohmann::json context = nlohmann::json::object();  // how it was started (merged into the result's context)
};

// How many ranks this machine (or the hostfile's cluster: its slots) offers to `spec`; PVM
// counts are checked again by the master against the virtual machine.
int available_nodes(const BackendSpec& spec, const std::string& hostfile);
// Local nodes are ranks on loopback: at most this many ranks per machine.
int max_local_nodes();
// The hosts a hostfile names (each line one host, whatever its slots).
int cluster_hosts(const std::string& hostfile);

// Why the backend's runtime cannot be used now (e.g. no pvmd), or nullopt: its
// WorkerLauncher's runtime_problem, for a worker started with `env`.
std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile = "",
                                           const Environment& env = {});

// Directory holding copbench and the workers (that of the running executable).
std::string executable_dir();
// The smpi backend's platforms: every one has this many hosts (node-0 .. node-4095), and
// --platform NAME is the file share/copbench/platforms/NAME.xml beside bin/ (copied there
// from results/platforms/ by the build).
inline constexpr int kPlatformHosts = 4096;
std::string platform_file(const std::string& name);

LaunchOutcome launch(const LaunchRequest& request);
// Async-signal-safe: the running launch (and every later one) kills its worker's process
// group and returns at once with exit code 130. For a campaign's SIGINT/SIGTERM handler.
void cancel_launches();
// For a command that runs one launch (copbench run, verify): the first SIGINT or SIGTERM
// calls cancel_launches(), so the worker and what it started are stopped, not orphaned;
// a second one kills at once.
void cancel_launches_on_signals();

// ---- How a backend's worker is started (backends.json "launcher") ----
//
// One class per way (suite/launch/worker_launchers.cpp): mpirun, pvm_master (the worker
// enrolls in a running PVM virtual machine and pvm_spawns the rest), cop_master (as
// pvm_master on a COP stack: copd and one copdrv per node), smpirun and s4u (simulated
// nodes). Each owns the command before the worker, the worker's environment, what it
// starts on this machine around the worker and stops after it, and its Slurm job's
// prologue: a new way is one class and one line in worker_launchers(). Nothing else
// tests a launcher's name.
class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  virtual std::string name() const = 0;
  // Its nodes are simulated on a platform on this machine (--platform NAME): no
  // hostfile, simulated time.
  virtual bool simulated() const { return false; }
  // Its worker enrolls in a PVM virtual machine that must run before it starts (a local
  // campaign starts a private pvmd for it once; cop_master starts its own).
  virtual bool needs_running_pvmd() const { return false; }
  // Why it cannot start `spec`'s worker now, with `hostfile` ("" = this machine) and `env`.
  virtual std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile,
                                                     const Environment& env) const = 0;
  // What comes before the worker and its arguments (mpirun and its options; empty when
  // the worker is started as it is). `dir` is the run's private directory.
  // `in_allocation`: inside a batch allocation, which names the hosts.
  virtual std::vector<std::string> command(const LaunchRequest& req, const std::filesystem::path& dir,
                                           bool in_allocation) const;
  // Throws std::invalid_argument for a worker argument it would not pass intact.
  virtual void check_argument(const std::string& /*argument*/) const {}
  // The worker's variables on top of req.env (cop_master: the point's own COP_JOB).
  virtual Environment environment(const LaunchRequest& req, const std::filesystem::path& dir) const;
  // Starts on this machine what the worker needs and was not given (cop_master: a
  // private pvmd and COP stack in `dir`), adding to `env` how the worker finds it; ""
  // or why it could not. stop_runtime() stops what it started (also after a failure).
  virtual std::string start_runtime(const LaunchRequest& req, const std::filesystem::path& dir, Environment& env) const;
  virtual void stop_runtime(const std::filesystem::path& /*dir*/, const Environment& /*env*/) const {}
  // A Slurm job: the shell text between the job script's `dir=... bindir=...` line (the
  // job's directory, the build's bin/) and the worker's command, ending in `exec` or in a
  // command that takes the worker's as its arguments; and how the worker is started there.
  struct JobPrologue {
    std::string script;
    std::string started_by;
  };
  virtual JobPrologue job_prologue() const;
  // What a Slurm job's directory tells of how its worker ran (cop_master: the stack).
  virtual void job_context(LaunchOutcome& /*out*/, const std::filesystem::path& /*dir*/) const {}
};

// The registered launchers' names, and the one of `name` (std::invalid_argument naming
// the known ones when there is none).
std::vector<std::string> worker_launcher_names();
const WorkerLauncher& worker_launcher(const std::string& name);
inline const WorkerLauncher& worker_launcher(const BackendSpec& spec) { return worker_launcher(spec.launcher); }

// ---- How a point's worker is started: the one place a launcher is chosen ----
//
// `local` (ranks on loopback), `ssh` (the hostfile's hosts: mpirun over ssh, PVM's own
// virtual machine) and `slurm` (each run in a Slurm allocation of exactly its node
// count). A batch system more (PBS, Flux) is one more LaunchMethod and one more name
// in make_launch_method().
class LaunchMethod {
 public:
  virtual ~LaunchMethod() = default;
  virtual std::string name() const = 0;
  // Why this method cannot start `spec`'s workers (one line), or nullopt.
  virtual std::optional<std::string> refuse(const BackendSpec& spec) const = 0;
  // True when each run starts its own PVM virtual machine (so none need run here).
  virtual bool starts_pvm() const { return false; }
  // Starts the worker and waits for it; request.hostfile is the method's own.
  virtual LaunchOutcome run(LaunchRequest request) = 0;
};

// The launcher names make_launch_method() knows.
const std::vector<std::string>& launch_method_names();
// `kind` "" picks `ssh` when there is a hostfile and `local` otherwise (what a run
// without --launcher always did). Throws std::invalid_argument for an unknown name or
// for `ssh` without a hostfile.
std::unique_ptr<LaunchMethod> make_launch_method(const std::string& kind, const std::string& hostfile);

}  // namespace copbench
