// The CLI side of `copbench run`: checks a request against what is available and starts
// the backend's worker the way that system starts programs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "copbench/catalog.h"
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

// Why the backend's runtime cannot be used now (e.g. no pvmd), or nullopt. With a hostfile
// the cop backend runs on the cluster's own PVM virtual machine and copdrv daemons (it
// starts a private loopback stack only on one machine), so a running pvmd is required.
std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile = "");

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
