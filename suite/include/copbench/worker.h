// The worker side of `copbench run`: each backend has a worker executable
// (copbench-worker-<backend>) started the way that system starts programs (mpirun,
// pvm_spawn). Its main brings the backend up and hands it to run_worker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "copbench/backend.h"
#include "copbench/results.h"

namespace copbench {

// The worker's command line as a struct: every caller (`copbench run`, `copbench
// verify`, the campaign runner, the launch methods) fills one and to_argv() writes it;
// the worker reads it back with parse_worker_args.
struct WorkerArgs {
  std::string benchmark;      // empty with verify
  bool verify = false;        // check every offered collective instead of timing
  // params.timing.max_reps 0 (what the callers set when the user gave none):
  // default_max_reps(min_reps), decided by the worker.
  RunParams params;
  std::string route;
  std::string encoding;
  int nodes = 1;              // wanted (the PVM master spawns nodes x tasks_per_node - 1 more)
  int tasks_per_node = 1;     // ranks per node, in blocks (backend.h)
  int timeout_s = 0;          // the run's deadline; tasks the CLI cannot kill end themselves
  std::string result_path;    // rank 0 writes the result JSON here
  std::string error_path;     // rank 0 writes a one-line error here
  std::string platform;       // smpi: the simulated platform's name (results/platforms/NAME.xml)
  RunContext context;         // link profile, commit, host from the CLI
  std::vector<std::string> raw;  // argv after the program name, for spawning copies

  // The arguments after the program name; parse_worker_args(to_argv()) gives these
  // fields back (raw aside). Fields at their empty/zero value are left out.
  std::vector<std::string> to_argv() const;
};

// Repetitions after which the 10 % confidence target is given up, when none is given
// (`copbench run --max-reps`, a campaign's max_reps): 4 x the repetitions kept.
int default_max_reps(int reps);

// Parses the worker's command line (argv[0] is the program). Throws std::invalid_argument.
WorkerArgs parse_worker_args(int argc, char** argv);
// The same from the arguments after the program name.
WorkerArgs parse_worker_args(const std::vector<std::string>& args);

// `--param KEY=VALUE` (an application's parameter): the key and the value. Throws
// std::invalid_argument("--param 'TEXT': expected KEY=VALUE").
std::pair<std::string, std::string> parse_param(const std::string& text);

// Runs the benchmark (or the verification) on an initialised backend and writes the
// result from rank 0. Returns the process exit code.
int run_worker(Backend& backend, const WorkerArgs& args);

// Records a one-line error where the CLI will look for it, and on stderr.
void report_worker_error(const WorkerArgs& args, const std::string& message);

// Verification of every offered operation against a local computation.
// Returns one line per check ("ok barrier", "FAIL reduce: ..."); all ranks call it.
std::vector<std::string> verify_backend(Backend& backend, bool& all_ok);

}  // namespace copbench
