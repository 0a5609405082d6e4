// run_process (process.h) on Boost.Process: spawn with an exec-setup hook for the
// process group, output to a file, and a poll of the child against the deadline.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/io.hpp>

#include "copbench/files.h"
#include "copbench/process.h"

namespace copbench {
namespace fs = std::filesystem;
namespace bp = boost::process;
namespace {

// execvp's lookup (bp::search_path would need the compiled Boost.Filesystem).
std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return (fs::path(dir) / program).string();
  return program;
}

// A private file for captured output (a pipe could fill while we only poll).
fs::path capture_file() {
  std::string tmpl = (fs::temp_directory_path() / "copbench-output.XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + fs::temp_directory_path().string());
  ::close(fd);
  return tmpl;
}

// This process's environment with `changes` applied.
bp::environment child_environment(const Environment& changes) {
  bp::environment e = boost::this_process::environment();
  for (const auto& [name, value] : changes) {
    if (value) e[name] = *value;
    else e.erase(name);
  }
  return e;
}

bp::child spawn(const std::vector<std::string>& argv, const fs::path& out, bool err_too, const ProcessOptions& o,
                std::error_code& ec) {
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  // In the child, between fork and exec: its own group, its working directory (a
  // directory it cannot enter ends it with 127, like a program that cannot start).
  auto setup = bp::extend::on_exec_setup = [own_group = o.own_group, dir = o.working_dir.string()](auto&) {
    if (own_group) ::setpgid(0, 0);
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) ::_exit(127);
  };
  const bp::environment env = child_environment(o.env);
  if (out.empty()) return bp::child(bp::exe = find_program(argv[0]), bp::args = args, env, setup, ec);
  if (!err_too)
    return bp::child(bp::exe = find_program(argv[0]), bp::args = args, bp::std_out > out.string(),
                     bp::std_err > bp::null, env, setup, ec);
  return bp::child(bp::exe = find_program(argv[0]), bp::args = args, (bp::std_out & bp::std_err) > out.string(), env,
                   setup, ec);
}

// Stops the child (its group with `group`): SIGTERM, then SIGKILL 2 s later.
void stop(bp::child& c, bool group) {
  const pid_t target = group ? -c.id() : c.id();
  ::kill(target, SIGTERM);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (c.running() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(target, SIGKILL);
}

}  // namespace

std::optional<std::string> env_value(const Environment& env, const std::string& name) {
  if (auto it = env.find(name); it != env.end()) return it->second;
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

bool on_path(const std::string& program) {
  return program.find('/') == std::string::npos && find_program(program) != program;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty()) throw std::invalid_argument("run_process: no program");
  ProcessResult r;
  const fs::path out = o.capture ? capture_file() : o.output_file;
  std::error_code ec;
  bp::child c = spawn(argv, out, !o.capture || o.capture_stderr, o, ec);
  if (ec) {
    r.exit_code = 127;
    const std::string why = "copbench: cannot start " + argv[0] + ": " + ec.message() + "\n";
    if (o.capture) {
      r.output = why;
      fs::remove(out, ec);
    } else if (!out.empty()) {
      std::ofstream(out) << why;
    }
    return r;
  }
  if (o.own_group) ::setpgid(c.id(), c.id());  // also here: no race with a kill of the group
  if (o.on_start) o.on_start(c.id());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  while (c.running()) {
    r.cancelled = o.cancelled && o.cancelled();
    r.timed_out = !r.cancelled && o.timeout_s > 0 && std::chrono::steady_clock::now() > deadline;
    if (r.cancelled || r.timed_out) {
      stop(c, o.own_group);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  c.wait(ec);
  const int status = c.native_exit_code();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (o.capture) {
    r.output = read_file(out);
    fs::remove(out, ec);
  }
  return r;
}

}  // namespace copbench
