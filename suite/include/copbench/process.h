// Starting a program and waiting for it: the one wrapper the suite uses (the CLI's
// launcher, the campaign runner's helpers, the results' provenance).
//
// Built on Boost.Process (header-only parts of libboost-dev) rather than pstreams: a
// worker must lead its own process group (so mpirun and every rank it started are
// stopped together at a deadline), which Boost.Process offers as an exec-setup hook,
// and its output goes straight to a log file; pstreams only pipes. The program runs
// from an argv, never through a shell.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace copbench {

// What a child's environment has that differs from this process's: a value sets the
// variable, nullopt removes it. Every parameter reaches a child this way, in its own
// options, never through this process's environment: the control side calls no setenv,
// so what one point was given cannot leak into the next.
using Environment = std::map<std::string, std::optional<std::string>>;

// The value `name` has in a child started with `env`: env's word, else this process's
// (nullopt when unset or removed).
std::optional<std::string> env_value(const Environment& env, const std::string& name);

struct ProcessOptions {
  // Where stdout and stderr go: a file (truncated), captured into ProcessResult::output,
  // or (neither) inherited from this process.
  std::filesystem::path output_file;
  bool capture = false;
  bool capture_stderr = true;  // with `capture`: stderr too (false: stderr is discarded)
  int timeout_s = 0;           // 0: no deadline
  std::filesystem::path working_dir;  // empty: this process's
  Environment env;                    // on top of this process's environment
  // The program leads a process group of its own; at the deadline or on `cancelled`
  // the whole group is stopped (SIGTERM, 2 s later SIGKILL).
  bool own_group = false;
  std::function<void(int pid)> on_start;  // told the pid as soon as it runs
  std::function<bool()> cancelled;        // polled while waiting
};

struct ProcessResult {
  int exit_code = 0;       // when it exited
  int signal = 0;          // when a signal ended it
  bool timed_out = false;  // stopped at the deadline
  bool cancelled = false;  // stopped because `cancelled` said so
  std::string output;      // with ProcessOptions::capture
  // The shell's convention: the exit code, or 128 + the signal.
  int status() const { return signal != 0 ? 128 + signal : exit_code; }
};

// Runs argv[0] (looked up in $PATH when it has no '/') with argv[1..]. A program that
// cannot be started gives exit code 127 and says why in the output (file or capture).
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// Whether `program` is an executable in a directory of $PATH.
bool on_path(const std::string& program);

}  // namespace copbench
