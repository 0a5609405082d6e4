// Starting a backend's worker the way its WorkerLauncher says (worker_launchers.cpp:
// mpirun for MPI and ARMCI, smpirun for smpi, a PVM master task for PVM and COP, which
// pvm_spawns the rest itself). The worker reports through two files in a private
// temporary directory: the result JSON and a one-line error.
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
                         const std::function<void(int)>& on_worker, const Environment& env) {
  ProcessOptions o;
  o.env = env;
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
  if (worker_launcher(spec).simulated()) return kPlatformHosts;
  if (!hostfile.empty()) return count_hostfile(hostfile).slots;
  return max_local_nodes();
}

int cluster_hosts(const std::string& hostfile) { return count_hostfile(hostfile).hosts; }

std::optional<std::string> runtime_problem(const BackendSpec& spec, const std::string& hostfile, const Environment& env) {
  return worker_launcher(spec).runtime_problem(spec, hostfile, env);
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

namespace {

// A private directory for one run's files (the result, the error, the log, and what
// the worker's launcher starts there).
fs::path run_directory(const LaunchRequest& req) {
  std::string tmpl = (fs::temp_directory_path() / "copbench-run.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
  if (req.on_temp_dir) req.on_temp_dir(tmpl);
  return tmpl;
}

// Runs the worker with `env` and judges how it ended.
void run_worker(LaunchOutcome& out, const LaunchRequest& req, const std::vector<std::string>& argv, const fs::path& dir,
                const Environment& env) {
  const BackendSpec& spec = *req.spec;
  const fs::path log = dir / "worker.log";
  const ProcessResult ran = run_logged(argv, req.timeout_s, log, req.on_worker, env);
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
}

}  // namespace

// The worker's launcher gives the command before the worker, the worker's variables and
// what must run beside it (WorkerLauncher); nothing is set in this process.
LaunchOutcome launch(const LaunchRequest& req) {
  LaunchOutcome out;
  const BackendSpec& spec = *req.spec;
  const WorkerLauncher& launcher = worker_launcher(spec);
  const fs::path worker = fs::path(executable_dir()) / spec.worker;
  if (::access(worker.c_str(), X_OK) != 0) {
    out.exit_code = 1;
    out.error = fmt::format("worker {} not found (build the target {})", worker.string(), spec.worker);
    return out;
  }
  const fs::path dir = run_directory(req);
  std::vector<std::string> argv;
  try {
    argv = worker_command(req, worker.string(), dir / "result.json", dir / "error.txt", false);
  } catch (...) {  // a refused command line (smpirun's spaces) leaves no directory behind
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }
  Environment env = req.env;
  for (const auto& [name, value] : launcher.environment(req, dir)) env[name] = value;
  const std::string not_started = launcher.start_runtime(req, dir, env);
  if (not_started.empty()) {
    run_worker(out, req, argv, dir, env);
  } else {
    out.exit_code = g_cancelled ? 130 : 1;
    out.error = fmt::format("{}: {}", spec.name, not_started);
  }
  launcher.stop_runtime(dir, env);
  out.context["launcher"] = req.hostfile.empty() ? "local" : "ssh";
  std::error_code ec;
  fs::remove_all(dir, ec);
  return out;
}

namespace launch_detail {

std::vector<std::string> worker_command(const LaunchRequest& req, const std::string& worker, const fs::path& result,
                                        const fs::path& error, bool in_allocation) {
  const WorkerLauncher& launcher = worker_launcher(*req.spec);
  std::vector<std::string> argv = launcher.command(req, result.parent_path(), in_allocation);
  WorkerArgs args = req.worker;
  args.nodes = req.nodes;
  args.tasks_per_node = req.tasks_per_node;
  args.timeout_s = req.timeout_s + 30;  // the worker's own deadline, after ours
  args.result_path = result.string();
  args.error_path = error.string();
  argv.push_back(worker);
  const std::vector<std::string> worker_argv = args.to_argv();
  for (const std::string& a : worker_argv) launcher.check_argument(a);
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
