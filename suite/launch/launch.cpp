// Starting a backend's worker: mpirun for MPI and ARMCI, smpirun for smpi (simulated
// ranks), a PVM master task for PVM (which pvm_spawns the rest itself). The worker reports through two files in a
// private temporary directory: the result JSON and a one-line error.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "copbench/launch.h"
#include "copbench/files.h"
#include "launch/internal.h"

namespace copbench {
namespace fs = std::filesystem;
namespace launch_detail {

std::string read_if_any(const fs::path& p) { return fs::exists(p) ? read_file(p) : std::string(); }

std::string first_line(std::string s) {
  auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

std::string last_line(const std::string& s) {
  std::stringstream ss(s);
  std::string line, last = "(no output; set COPBENCH_VERBOSE=1 to see the worker's output)";
  while (std::getline(ss, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace launch_detail
using namespace launch_detail;
namespace {

// Slots and hosts of an mpirun hostfile ("host [slots=N]" lines, # comments).
struct HostfileCount {
  int slots = 0;
  int hosts = 0;
};

HostfileCount count_hostfile(const std::string& hostfile) {
  std::ifstream f(hostfile);
  if (!f) throw std::invalid_argument("cannot read hostfile " + hostfile);
  int slots = 0, hosts = 0;
  std::string line;
  while (std::getline(f, line)) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream ls(line);
    std::string host, word;
    if (!(ls >> host)) continue;
    int n = 1;
    while (ls >> word)
      if (word.rfind("slots=", 0) == 0) n = std::max(1, std::atoi(word.c_str() + 6));
    slots += n;
    ++hosts;
  }
  return {slots, hosts};
}

volatile sig_atomic_t g_cancelled = 0;

}  // namespace

namespace launch_detail {
bool cancelled() { return g_cancelled != 0; }

// The worker's own output (mpirun and libpvm chatter included) goes to `log`.
ProcessResult run_logged(const std::vector<std::string>& argv, int timeout_s, const fs::path& log,
                         const std::function<void(int)>& on_worker) {
  ProcessOptions o;
  o.output_file = log;
  o.own_group = true;
  o.timeout_s = timeout_s;
  o.on_start = on_worker;
  o.cancelled = [] { return g_cancelled != 0; };
  return run_process(argv, o);
}

}  // namespace launch_detail

void cancel_launches() { g_cancelled = 1; }

void cancel_launches_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { cancel_launches(); };
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int max_local_nodes() {
  unsigned cores = std::thread::hardware_concurrency();
  return std::max(4, 4 * static_cast<int>(cores == 0 ? 1 : cores));
}

int available_nodes(const BackendSpec& spec, const std::string& hostfile) {
  if (simulated(spec.launcher)) return kPlatformHosts;
  if (!hostfile.empty()) return count_hostfile(hostfile).slots;
  return max_local_nodes();
}

int cluster_hosts(const std::string& hostfile) { return count_hostfile(hostfile).hosts; }

std::string pvm_tmp_dir() {
  const char* tmp = std::getenv("PVM_TMP");
  return tmp && *tmp ? tmp : "/tmp";
}

std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile) {
  if (spec.launcher == Launcher::smpirun) {
    if (!on_path("smpirun")) return "smpirun not found on PATH (install libsimgrid-dev)";
    if (!hostfile.empty()) return "the smpi backend simulates its nodes on this machine: it takes no hostfile";
    return std::nullopt;
  }
  if (spec.launcher == Launcher::s4u)
    return hostfile.empty() ? std::nullopt
                            : std::optional<std::string>(spec.name + " simulates its nodes on this machine: it takes no hostfile");
  if (spec.launcher == Launcher::mpirun) {
    if (!on_path("mpirun")) return "mpirun not found on PATH (install openmpi-bin)";
    return std::nullopt;
  }
  // On one machine the cop wrapper starts what is missing; on a cluster it must not.
  if (spec.launcher == Launcher::cop_master && hostfile.empty()) return std::nullopt;
  const std::string cluster_note =
      spec.launcher == Launcher::cop_master
          ? fmt::format(" (a cop run on the cluster of {} uses the cluster's virtual machine, started by "
                        "ansible/site.yml, with PVM_TMP naming its directory)", hostfile)
          : std::string();
  fs::path daemon_file = fs::path(pvm_tmp_dir()) / fmt::format("pvmd.{}", ::getuid());
  if (!fs::exists(daemon_file))
    return fmt::format("no pvmd is running for this user ({} missing): start the virtual machine with "
                       "`pvm` (then `quit`), or a private local one with `eval $(copbench-pvmd-local start)`{}",
                       daemon_file.string(), cluster_note);
  // pvmd.<uid> names the daemon's socket; a daemon that died leaves the file behind.
  std::string socket = first_line(read_if_any(daemon_file));
  if (!socket.empty() && socket[0] == '/' && !fs::exists(socket))
    return fmt::format("{} is stale (the pvmd that wrote it is gone): remove it and start the virtual machine "
                       "again (`pvm`, or `eval $(copbench-pvmd-local start)`)",
                       daemon_file.string());
  return std::nullopt;
}

std::string executable_dir() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : self.parent_path().string();
}

std::string platform_file(const std::string& name) {
  return (fs::path(executable_dir()) / ".." / "share" / "copbench" / "platforms" / (name + ".xml"))
      .lexically_normal()
      .string();
}

LaunchOutcome launch(const LaunchRequest& req) {
  LaunchOutcome out;
  const BackendSpec& spec = *req.spec;
  fs::path worker = fs::path(executable_dir()) / spec.worker;
  if (::access(worker.c_str(), X_OK) != 0) {
    out.exit_code = 1;
    out.error = fmt::format("worker {} not found (build the target {})", worker.string(), spec.worker);
    return out;
  }
  std::string tmpl = (fs::temp_directory_path() / "copbench-run.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
  fs::path dir = tmpl;
  if (req.on_temp_dir) req.on_temp_dir(dir.string());
  fs::path result = dir / "result.json";
  fs::path error = dir / "error.txt";

  // A cop run on a cluster: every task binds to the copdrv of its own host (COP_DRIVER
  // there, or the default directory), never to a private loopback stack.
  if (spec.launcher == Launcher::cop_master && !req.hostfile.empty() && !std::getenv("COP_STACK_DIR") &&
      !std::getenv("COP_DRIVER_1"))
    ::setenv("COP_USE_RUNNING", "1", 1);
  std::vector<std::string> argv;
  try {
    argv = worker_command(req, worker.string(), result, error, false);
  } catch (...) {  // a refused command line (smpirun's spaces) leaves no directory behind
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }

  fs::path log = dir / "worker.log";
  // Each point is its own COP job (cop.h "Jobs": its own partition on a controller that
  // other points or users share), unless the user named one for the whole campaign.
  // (No static: the smpi worker's simulated ranks would share it; the guard unsets the
  // point's own id however run_logged ends, so the next point does not take it for the user's.)
  const bool own_job = spec.launcher == Launcher::cop_master && std::getenv("COP_JOB") == nullptr;
  if (own_job) ::setenv("COP_JOB", ("copbench-point-" + dir.filename().string()).c_str(), 1);
  struct UnsetJob {
    bool on;
    ~UnsetJob() {
      if (on) ::unsetenv("COP_JOB");
    }
  } unset_job{own_job};
  const ProcessResult ran = run_logged(argv, req.timeout_s, log, req.on_worker);
  const bool timed_out = ran.timed_out || ran.cancelled;
  out.exit_code = ran.status();
  if (timed_out && std::getenv("COPBENCH_VERBOSE")) std::fputs(read_if_any(log).c_str(), stderr);
  if (timed_out && g_cancelled) {
    out.exit_code = 130;
    out.error = fmt::format("{} worker killed: interrupted", spec.name);
  } else if (timed_out) {
    out.exit_code = 124;
    out.error = fmt::format("{} worker did not finish within {} s (killed)", spec.name, req.timeout_s);
  } else {
    read_worker_files(out, spec, dir);
  }
  out.context["launcher"] = req.hostfile.empty() ? "local" : "ssh";
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

namespace launch_detail {
namespace {

// smpirun and its options: the platform file, a hostfile in the run's directory naming
// the platform's first `nodes` hosts (each tasks_per_node times: ranks in blocks), and
// the backend's SimGrid settings (backends.json: mpirun_args, and mpirun_args_from_ranks
// where the point has that many ranks). Every platform's hosts are node-0 ..
// node-4095 (results/platforms/).
std::vector<std::string> smpirun_command(const LaunchRequest& req, const fs::path& dir) {
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

}  // namespace

std::vector<std::string> worker_command(const LaunchRequest& req, const std::string& worker, const fs::path& result,
                                        const fs::path& error, bool in_allocation) {
  const BackendSpec& spec = *req.spec;
  std::vector<std::string> argv;
  if (spec.launcher == Launcher::mpirun) {
    const int ranks = req.nodes * req.tasks_per_node;
    argv = {"mpirun", "-np", std::to_string(ranks)};
    if (::geteuid() == 0) argv.push_back("--allow-run-as-root");
    // Every local rank stands for a node: never pin two of them to one core, and when
    // there are more ranks than cores let waiting ranks yield (Open MPI busy-polls, and
    // spinning ranks on one core starve the rank they wait for).
    argv.insert(argv.end(), {"--oversubscribe", "--bind-to", "none"});
    unsigned cores = std::thread::hardware_concurrency();
    if (req.hostfile.empty() && !in_allocation && ranks > static_cast<int>(cores))
      argv.insert(argv.end(), {"--mca", "mpi_yield_when_idle", "1"});
    if (!req.hostfile.empty() && !in_allocation) argv.insert(argv.end(), {"--hostfile", req.hostfile});
    // Ranks in blocks, T per host in hostfile order (on one machine all are local anyway).
    if ((!req.hostfile.empty() || in_allocation) && req.tasks_per_node > 1)
      argv.insert(argv.end(), {"--map-by", fmt::format("ppr:{}:node", req.tasks_per_node)});
    argv.insert(argv.end(), spec.mpirun_args.begin(), spec.mpirun_args.end());
  }
  if (spec.launcher == Launcher::smpirun) argv = smpirun_command(req, result.parent_path());
  WorkerArgs args = req.worker;
  args.nodes = req.nodes;
  args.tasks_per_node = req.tasks_per_node;
  args.timeout_s = req.timeout_s + 30;  // the worker's own deadline, after ours
  args.result_path = result.string();
  args.error_path = error.string();
  argv.push_back(worker);
  const std::vector<std::string> worker_argv = args.to_argv();
  // smpirun, a shell script, splits its arguments again at white space: refuse what it
  // would cut in pieces rather than let the worker read something else.
  for (const std::string& a : worker_argv)
    if (spec.launcher == Launcher::smpirun && a.find_first_of(" \t\n") != std::string::npos)
      throw std::invalid_argument(fmt::format("smpirun would split the worker argument '{}' at its spaces", a));
  argv.insert(argv.end(), worker_argv.begin(), worker_argv.end());
  return argv;
}

void read_worker_files(LaunchOutcome& out, const BackendSpec& spec, const fs::path& dir) {
  const fs::path result = dir / "result.json", error = dir / "error.txt", log = dir / "worker.log";
  if (std::getenv("COPBENCH_VERBOSE")) std::fputs(read_if_any(log).c_str(), stderr);
  if (fs::exists(error) && !read_if_any(error).empty()) {
    out.error = first_line(read_if_any(error));
    if (out.exit_code == 0) out.exit_code = 1;
  } else if (out.exit_code != 0) {
    out.error = fmt::format("{} worker failed (exit code {}): {}", spec.name, out.exit_code, last_line(read_if_any(log)));
  } else if (!fs::exists(result)) {
    out.exit_code = 1;
    out.error = fmt::format("{} worker wrote no result", spec.name);
  }
  if (out.exit_code == 0 || fs::exists(result)) out.result = fs::exists(result) ? read_if_any(result) : "";
}

}  // namespace launch_detail
}  // namespace copbench
