// The run record of a campaign run and the clean-up after runs that were killed
// (internal.h says what a run leaves behind and how the next one finds it).
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "campaign/internal.h"
#include "copbench/files.h"
#include "copbench/launch.h"
#include "copbench/process.h"
#include "copbench/results.h"

namespace copbench::campaign {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

bool same_process(int pid, uint64_t start) { return pid > 0 && start != 0 && start_time(pid) == start; }

// Live processes of this user (other than this one) whose environment carries the tag.
std::vector<int> tagged_processes(const std::string& token) {
  std::vector<int> out;
  const std::string want = std::string(kTagVar) + "=" + token;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == ::getpid()) continue;
    struct stat st {};
    const std::string base = fmt::format("/proc/{}", pid);
    if (::stat(base.c_str(), &st) != 0 || st.st_uid != ::getuid()) continue;
    std::ifstream env(base + "/environ", std::ios::binary);
    std::string var;
    while (std::getline(env, var, '\0'))
      if (var == want) {
        out.push_back(int(pid));
        break;
      }
  }
  ::closedir(d);
  return out;
}

// Only directories of the kinds a run makes are ever removed.
bool removable_temp_dir(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.is_absolute() && (name.rfind("copbench-run.", 0) == 0 || name.rfind("copbench-campaign-pvm.", 0) == 0);
}

// Stops the processes (TERM, then KILL what is still there) and waits until they are gone.
int stop_processes(const std::vector<std::pair<int, uint64_t>>& procs) {
  std::vector<std::pair<int, uint64_t>> alive;
  for (const auto& [pid, start] : procs)
    if (same_process(pid, start) && ::kill(pid, SIGTERM) == 0) alive.push_back({pid, start});
  const int n = static_cast<int>(alive.size());
  for (int sig : {0, SIGKILL}) {
    if (sig == SIGKILL)
      for (const auto& [pid, start] : alive)
        if (same_process(pid, start)) ::kill(pid, SIGKILL);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(sig == 0 ? 3 : 5);
    while (std::chrono::steady_clock::now() < until) {
      bool any = false;
      for (const auto& [pid, start] : alive) {
        // A zombie (state Z) is gone for our purpose: its parent reaps it.
        std::ifstream f(fmt::format("/proc/{}/stat", pid));
        std::string stat;
        if (same_process(pid, start) && std::getline(f, stat) && stat.find(") Z") == std::string::npos) any = true;
      }
      if (!any) return n;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  return n;
}

}  // namespace

// Start time of a process (clock ticks after boot, /proc/PID/stat field 22), 0 if gone.
uint64_t start_time(int pid) {
  if (pid <= 0) return 0;
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(f, stat)) return 0;
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream rest(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i)
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

json RunRecord::to_json() const {
  return {{"token", token}, {"host", host}, {"pid", pid}, {"start", start}, {"results", results.string()},
          {"point", point}, {"pvmd_dir", pvmd_dir}, {"pvmd_pid", pvmd_pid}, {"pvmd_start", pvmd_start},
          {"worker_pid", worker_pid}, {"worker_start", worker_start}, {"slurm_job", slurm_job},
          {"temp_dirs", temp_dirs}};
}

RunRecord RunRecord::from_json(const json& j) {
  RunRecord r;
  r.token = j.at("token").get<std::string>();
  r.host = j.value("host", "");
  r.pid = j.value("pid", 0);
  r.start = j.value("start", uint64_t{0});
  r.results = j.value("results", "");
  r.point = j.value("point", "");
  r.pvmd_dir = j.value("pvmd_dir", "");
  r.pvmd_pid = j.value("pvmd_pid", 0);
  r.pvmd_start = j.value("pvmd_start", uint64_t{0});
  r.worker_pid = j.value("worker_pid", 0);
  r.worker_start = j.value("worker_start", uint64_t{0});
  r.slurm_job = j.value("slurm_job", "");
  for (const auto& d : j.value("temp_dirs", json::array())) r.temp_dirs.insert(d.get<std::string>());
  return r;
}

fs::path state_dir() {
  const char* env = std::getenv("COPBENCH_STATE_DIR");
  if (env && *env) return env;
  return fs::temp_directory_path() / fmt::format("copbench-campaign-runs.{}", ::getuid());
}

// Stops what the run of `r` left running and removes its temporary directories.
Reaped reap(const RunRecord& r) {
  Reaped out;
  // A batch job runs on the allocation's nodes, not under this process: the controller ends it.
  if (!r.slurm_job.empty() && r.slurm_job.find_first_not_of("0123456789") == std::string::npos) {
    ProcessOptions o;
    o.capture = true;  // and dropped
    run_process({"scancel", r.slurm_job}, o);
    ++out.processes;
  }
  std::vector<std::pair<int, uint64_t>> procs;
  if (same_process(r.worker_pid, r.worker_start)) {
    // The worker leads its own process group (mpirun and its ranks): the group first.
    ::kill(-r.worker_pid, SIGTERM);
    procs.push_back({r.worker_pid, r.worker_start});
  }
  const std::vector<int> tagged = tagged_processes(r.token);
  int pvmd_pid = r.pvmd_pid;
  uint64_t pvmd_start = r.pvmd_start;
  if (pvmd_pid == 0 && !r.pvmd_dir.empty()) {  // killed between starting pvmd and recording it
    pvmd_pid = LocalPvmd::pid_in(r.pvmd_dir);
    pvmd_start = start_time(pvmd_pid);
    if (std::find(tagged.begin(), tagged.end(), pvmd_pid) == tagged.end()) pvmd_pid = 0;  // not ours
  }
  if (same_process(pvmd_pid, pvmd_start)) procs.push_back({pvmd_pid, pvmd_start});
  for (int pid : tagged) {
    const uint64_t st = start_time(pid);
    if (st && std::none_of(procs.begin(), procs.end(), [&](const auto& p) { return p.first == pid; }))
      procs.push_back({pid, st});
  }
  out.processes = stop_processes(procs);
  // What pvmd or a rank started last, while the others were going.
  const auto late = tagged_processes(r.token);
  std::vector<std::pair<int, uint64_t>> rest;
  for (int pid : late) rest.push_back({pid, start_time(pid)});
  out.processes += stop_processes(rest);

  std::set<std::string> dirs = r.temp_dirs;
  if (!r.pvmd_dir.empty()) dirs.insert(r.pvmd_dir);
  for (const auto& d : dirs) {
    std::error_code ec;
    if (removable_temp_dir(d) && fs::exists(d, ec) && fs::remove_all(d, ec) > 0 && !ec) ++out.dirs;
  }
  return out;
}

// A point cut short: recorded as pending (runs again with --resume), unless it finished.
void mark_pending(const fs::path& results, const std::string& point, const std::string& why) {
  if (point.empty() || results.empty() || !fs::is_directory(results / kStatusDir)) return;
  if (fs::exists(results / kRawDir / (point + ".json"))) return;
  json st = {{"point", point}, {"status", "pending"}, {"reason", why}};
  std::error_code ec;
  const fs::path status = results / kStatusDir / (point + ".json");
  try {
    // Keep what the status file said about the point (benchmark, backend, ...).
    if (fs::exists(status)) {
      json old = json::parse(read_file(status));
      old["status"] = "pending";
      old["reason"] = why;
      st = old;
    }
  } catch (const std::exception&) {
  }
  write_file_atomically(status, st.dump(2) + "\n");
}

// Cleans up after runs that were killed (their runner is gone): from the state
// directory, and from `resume` when it holds a record. Returns one line per run.
std::vector<std::string> clean_after_killed_runs(const fs::path& resume) {
  std::vector<std::pair<RunRecord, std::vector<fs::path>>> found;
  auto consider = [&](const fs::path& file) {
    RunRecord r;
    try {
      r = RunRecord::from_json(json::parse(read_file(file)));
    } catch (const std::exception&) {
      return;  // not a record (or half written by a run killed at that moment)
    }
    for (auto& [other, files] : found)
      if (other.token == r.token) {
        files.push_back(file);
        return;
      }
    found.push_back({r, {file}});
  };
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(state_dir(), ec))
    if (e.path().extension() == ".json") consider(e.path());
  if (!resume.empty() && fs::exists(resume / kRecord)) consider(resume / kRecord);

  std::vector<std::string> lines;
  for (auto& [r, files] : found) {
    if (r.host != host_name()) continue;  // another machine's run (a shared results directory)
    if (same_process(r.pid, r.start)) {
      if (!resume.empty() && fs::equivalent(r.results, resume, ec))
        throw CampaignError(fmt::format("--resume {}: a campaign (copbench pid {}) is still running in that directory",
                                        resume.string(), r.pid));
      continue;
    }
    const Reaped got = reap(r);
    mark_pending(r.results, r.point, "interrupted (its run was killed); runs again with --resume");
    if (!r.results.empty()) files.push_back(r.results / kRecord);
    for (const auto& f : files) fs::remove(f, ec);
    lines.push_back(fmt::format("cleaned up after killed run pid {} ({}): stopped {} leftover process(es), removed {} "
                                "temporary director{}{}",
                                r.pid, r.results.string(), got.processes, got.dirs, got.dirs == 1 ? "y" : "ies",
                                r.point.empty() ? "" : fmt::format(", point {} pending", r.point)));
  }
  return lines;
}

LocalPvmd::LocalPvmd()
    : dir_((fs::temp_directory_path() / fmt::format("copbench-campaign-pvm.{}", ::getpid())).string()) {}

std::optional<std::string> LocalPvmd::start(const Environment& env) {
  const std::string helper = executable_dir() + "/copbench-pvmd-local";
  if (::access(helper.c_str(), X_OK) != 0) return "copbench-pvmd-local not found beside copbench";
  ProcessOptions o;
  o.capture = true;
  o.env = env;
  const ProcessResult r = run_process({helper, "start", dir_}, o);
  if (r.output.find("export") == std::string::npos) {
    std::string out = r.output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return "cannot start a local pvmd: " + out;
  }
  started_ = true;
  return std::nullopt;
}

// What copbench-pvmd-local start prints (lib/daemons.sh, pvmd_exports).
Environment LocalPvmd::environment() const {
  return {{"PVM_ROOT", "/usr/lib/pvm3"}, {"PVM_TMP", dir_}, {"PVM_ALLOW_ROOT", "1"}, {"PVM_RSH", "/usr/bin/ssh"}};
}

void LocalPvmd::stop() {
  if (!started_) return;
  started_ = false;
  ProcessOptions o;
  o.capture = true;  // and dropped
  run_process({executable_dir() + "/copbench-pvmd-local", "stop", dir_}, o);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

int LocalPvmd::pid_in(const std::string& dir) {
  std::ifstream f(fs::path(dir) / "pvmd.pid");
  int pid = 0;
  return (f >> pid) ? pid : 0;
}

}  // namespace copbench::campaign
