// Pieces of launch.cpp that every LaunchMethod shares (suite/launch/ only).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "copbench/launch.h"
#include "copbench/process.h"

namespace copbench::launch_detail {

// The file's contents, "" when there is none (a worker that wrote nothing).
std::string read_if_any(const std::filesystem::path& p);
std::string first_line(std::string s);
// The last non-empty line of a worker's log (what it said before failing).
std::string last_line(const std::string& s);
// Set by cancel_launches() (async-signal-safe flag).
bool cancelled();
// Runs argv in its own process group; kills the group at the deadline or on
// cancel_launches(). stdout and stderr go to `log`.
ProcessResult run_logged(const std::vector<std::string>& argv, int timeout_s, const std::filesystem::path& log,
                         const std::function<void(int)>& on_worker = nullptr, const Environment& env = {});

// The worker's launcher's command for `req` (mpirun and its options; empty for PVM
// and COP, whose master task starts the rest), then the worker and its arguments. `in_allocation`: mpirun inside a batch
// allocation takes the hosts from it (Open MPI reads Slurm's), never from a hostfile.
std::vector<std::string> worker_command(const LaunchRequest& req, const std::string& worker,
                                        const std::filesystem::path& result, const std::filesystem::path& error,
                                        bool in_allocation);

// Fills `out` from the worker's result and error files and its log.
void read_worker_files(LaunchOutcome& out, const BackendSpec& spec, const std::filesystem::path& dir);

}  // namespace copbench::launch_detail
