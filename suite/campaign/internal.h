// Pieces of the campaign runner (runner.cpp) kept in files of their own: the run
// record and the clean-up after killed runs (run_record.cpp), the results directory's
// manifest (manifest.cpp), the progress line and the private pvmd (progress.cpp).
// suite/campaign/ only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "copbench/campaign.h"
#include "copbench/process.h"

namespace copbench::campaign {

// ---- What a run leaves behind if it is killed, and how the next one finds it ----
//
// Every run writes a record (runner.json in its results directory and a copy in the
// state directory) naming its pid, the processes it started (private pvmd, the
// running worker) and the temporary directories it made, and tags its environment
// with COPBENCH_CAMPAIGN_RUN=<token>: every process started under it (pvmd, the
// pvmgs and tasks pvmd spawns, mpirun and its ranks, copd/copdrv) inherits the tag.
// On SIGTERM/SIGINT the run stops them itself; after a SIGKILL the next run (or a
// --resume of the directory) finds the record of a runner that is gone and stops
// what is left. A pid is only signalled if it is still the process recorded (its
// start time in /proc/PID/stat) or carries the run's tag.
inline constexpr const char* kRecord = "runner.json";
inline constexpr const char* kTagVar = "COPBENCH_CAMPAIGN_RUN";

struct RunRecord {
  std::string token, host, point;
  int pid = 0;
  uint64_t start = 0;
  std::filesystem::path results;
  std::string pvmd_dir;
  int pvmd_pid = 0;
  uint64_t pvmd_start = 0;
  int worker_pid = 0;
  uint64_t worker_start = 0;
  std::string slurm_job;  // the batch job of the running point (--launcher slurm)
  std::set<std::string> temp_dirs;

  nlohmann::json to_json() const;
  static RunRecord from_json(const nlohmann::json& j);
};

// Start time of a process (clock ticks after boot, /proc/PID/stat field 22), 0 if gone.
uint64_t start_time(int pid);
// The directory holding every run's record ($COPBENCH_STATE_DIR or one per user in /tmp).
std::filesystem::path state_dir();

struct Reaped {
  int processes = 0;
  int dirs = 0;
};
// Stops what the run of `r` left running and removes its temporary directories.
Reaped reap(const RunRecord& r);
// A point cut short: recorded as pending (runs again with --resume), unless it finished.
void mark_pending(const std::filesystem::path& results, const std::string& point, const std::string& why);
// Cleans up after runs that were killed (their runner is gone): from the state
// directory, and from `resume` when it holds a record. Returns one line per run.
std::vector<std::string> clean_after_killed_runs(const std::filesystem::path& resume);

// A private pvmd for local campaigns when none is running; halted when the run ends.
class LocalPvmd {
 public:
  LocalPvmd();
  ~LocalPvmd() { stop(); }
  LocalPvmd(const LocalPvmd&) = delete;
  LocalPvmd& operator=(const LocalPvmd&) = delete;
  // Started with `env` (the run's tag) on top of this process's environment.
  std::optional<std::string> start(const Environment& env);
  void stop();
  // What a task needs to use it (PVM_ROOT, PVM_TMP, ...), for the workers' environment.
  Environment environment() const;
  const std::string& dir() const { return dir_; }
  // The pid the helper recorded for the pvmd it started (0 if none).
  static int pid_in(const std::string& dir);

 private:
  std::string dir_;
  bool started_ = false;
};

// ---- The results directory ----

// The local time in strftime's `format`.
std::string now_string(const char* format);
// A new results directory's manifest (machine, commit, cluster, packages, ...); also
// copies the campaign file and its seed tables into `dir`.
nlohmann::json new_manifest(const Campaign& c, const Cluster& cluster, const RunOptions& o, const std::filesystem::path& dir);
// The manifest of `dir`, refused unless it holds campaign `name`.
nlohmann::json resumed_manifest(const std::filesystem::path& dir, const std::string& name);

// ---- How the suite got onto the cluster's hosts (install.cpp) ----

// The record the ansible role suite writes beside every host's build.
inline constexpr const char* kInstallRecord = "copbench-install.json";
std::filesystem::path install_record_path();
// The install mode and every host's commit, for the manifest; throws CampaignError
// naming the first host whose commit differs from this copbench's (or that has no
// record). null for `local`; mode "unrecorded" when this build has no record.
nlohmann::json check_install(const Cluster& cluster);

// The progress bar on a terminal, a line per finished point in a log.
class Progress {
 public:
  Progress(int total, bool quiet);
  // `starting`: the point named `current` is about to run (shown on a terminal only);
  // otherwise it has just finished (shown everywhere, one line each in a log).
  void show(int finished, int timed_points, double timed_seconds, const std::string& current, bool starting);
  void line(const std::string& text);

 private:
  int total_;
  bool quiet_, tty_;
};

}  // namespace copbench::campaign
