// Running a campaign: one point at a time, each finished point written at once
// (atomically) as raw/<id>.json, so a killed campaign resumed with --resume redoes
// nothing that finished and loses nothing. Points that cannot run are recorded in
// status/<id>.json with the reason ("not offered", "skipped", "failed").
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "copbench/bench.h"
#include "copbench/campaign.h"
#include "copbench/launch.h"
#include "copbench/results.h"

namespace copbench::campaign {
namespace fs = std::filesystem;
using nlohmann::json;
namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int) {
  g_interrupted = 1;
  cancel_launches();
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string now_string(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string command_output(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe.get())) out += buf;
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

json machine_description() {
  json m;
  m["host"] = host_name();
  utsname u{};
  if (uname(&u) == 0) m["kernel"] = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
  m["cpus"] = std::thread::hardware_concurrency();
  std::ifstream mem("/proc/meminfo");
  std::string line;
  while (std::getline(mem, line))
    if (line.rfind("MemTotal:", 0) == 0) m["memory"] = trim(line.substr(9).erase(0, line.substr(9).find_first_not_of(' ')));
  std::ifstream os("/etc/os-release");
  while (std::getline(os, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      m["os"] = v;
    }
  return m;
}

// Versions of the Debian packages the build and the runs use (scripts/lib/packages.txt).
json package_versions() {
  json out = json::object();
  std::ifstream f(fs::path(COPBENCH_SOURCE_DIR) / "scripts/lib/packages.txt");
  std::string line, names;
  while (std::getline(f, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    names += " '" + line + "'";
  }
  if (names.empty()) return out;
  std::stringstream ss(command_output("dpkg-query -W -f='${Package} ${Version}\\n'" + names + " 2>/dev/null"));
  std::string pkg, version;
  while (ss >> pkg >> version) out[pkg] = version;
  return out;
}

std::string format_duration(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

class Progress {
 public:
  Progress(int total, bool quiet) : total_(total), quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0) {}
  // `starting`: the point named `current` is about to run (shown on a terminal only);
  // otherwise it has just finished (shown everywhere, one line each in a log).
  void show(int finished, int timed_points, double timed_seconds, const std::string& current, bool starting) {
    if (quiet_ || (starting && !tty_)) return;
    int left = total_ - finished;
    std::string eta = timed_points > 0 ? format_duration(timed_seconds / timed_points * left) : "?";
    const int width = 30;
    int filled = total_ > 0 ? finished * width / total_ : width;
    std::string bar = std::string(static_cast<std::size_t>(filled), '#') + std::string(static_cast<std::size_t>(width - filled), '.');
    std::string text = fmt::format("[{}] {}/{} done, {} left, ETA {}  {}", bar, finished, total_, left, eta, current);
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
      if (left == 0) std::fputc('\n', stderr);
    } else {
      std::fprintf(stderr, "%s\n", text.c_str());
    }
    std::fflush(stderr);
  }
  void line(const std::string& text) {
    if (quiet_) return;
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s\n", text.c_str());
  }

 private:
  int total_;
  bool quiet_, tty_;
};

// A private pvmd for local campaigns when none is running; halted when the run ends.
class LocalPvmd {
 public:
  LocalPvmd() : dir_((fs::temp_directory_path() / fmt::format("copbench-campaign-pvm.{}", ::getpid())).string()) {}
  ~LocalPvmd() { stop(); }
  std::optional<std::string> start() {
    std::string helper = executable_dir() + "/copbench-pvmd-local";
    if (::access(helper.c_str(), X_OK) != 0) return "copbench-pvmd-local not found beside copbench";
    std::string out = command_output(fmt::format("'{}' start '{}' 2>&1", helper, dir_));
    if (out.find("export") == std::string::npos) return "cannot start a local pvmd: " + trim(out);
    ::setenv("PVM_ROOT", "/usr/lib/pvm3", 1);
    ::setenv("PVM_TMP", dir_.c_str(), 1);
    ::setenv("PVM_ALLOW_ROOT", "1", 1);
    ::setenv("PVM_RSH", "/usr/bin/ssh", 1);
    started_ = true;
    return std::nullopt;
  }
  void stop() {
    if (!started_) return;
    started_ = false;
    command_output(fmt::format("'{}/copbench-pvmd-local' stop '{}' >/dev/null 2>&1", executable_dir(), dir_));
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& dir() const { return dir_; }
  // The pid the helper recorded for the pvmd it started (0 if none).
  static int pid_in(const std::string& dir) {
    std::ifstream f(fs::path(dir) / "pvmd.pid");
    int pid = 0;
    return (f >> pid) ? pid : 0;
  }

 private:
  std::string dir_;
  bool started_ = false;
};

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
constexpr const char* kRecord = "runner.json";
constexpr const char* kTagVar = "COPBENCH_CAMPAIGN_RUN";

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

struct RunRecord {
  std::string token, host, point;
  int pid = 0;
  uint64_t start = 0;
  fs::path results;
  std::string pvmd_dir;
  int pvmd_pid = 0;
  uint64_t pvmd_start = 0;
  int worker_pid = 0;
  uint64_t worker_start = 0;
  std::string slurm_job;  // the batch job of the running point (--launcher slurm)
  std::set<std::string> temp_dirs;

  json to_json() const {
    return {{"token", token}, {"host", host}, {"pid", pid}, {"start", start}, {"results", results.string()},
            {"point", point}, {"pvmd_dir", pvmd_dir}, {"pvmd_pid", pvmd_pid}, {"pvmd_start", pvmd_start},
            {"worker_pid", worker_pid}, {"worker_start", worker_start}, {"slurm_job", slurm_job},
            {"temp_dirs", temp_dirs}};
  }
  static RunRecord from_json(const json& j) {
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
};

fs::path state_dir() {
  const char* env = std::getenv("COPBENCH_STATE_DIR");
  if (env && *env) return env;
  return fs::temp_directory_path() / fmt::format("copbench-campaign-runs.{}", ::getuid());
}

// Only directories of the kinds a run makes are ever removed.
bool removable_temp_dir(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.is_absolute() && (name.rfind("copbench-run.", 0) == 0 || name.rfind("copbench-campaign-pvm.", 0) == 0);
}

struct Reaped {
  int processes = 0;
  int dirs = 0;
};

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

// Stops what the run of `r` left running and removes its temporary directories.
Reaped reap(const RunRecord& r) {
  Reaped out;
  // A batch job runs on the allocation's nodes, not under this process: the controller ends it.
  if (!r.slurm_job.empty() && r.slurm_job.find_first_not_of("0123456789") == std::string::npos) {
    command_output(fmt::format("scancel {} 2>&1", r.slurm_job));
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

struct Outcome {
  std::string status;  // done, not offered, skipped, failed
  std::string reason;
};

// Why `p` cannot run here, as a status and reason; nullopt when it can.
std::optional<Outcome> cannot_run(const Point& p, const Cluster& cluster) {
  if (p.profile != cluster.profile)
    return Outcome{"skipped", fmt::format("needs link profile {} (this cluster: {}); bring up a cluster with "
                                          "`scripts/cluster up N --profile {}` and run again with --resume",
                                          p.profile, cluster.profile, p.profile)};
  const BackendSpec* spec = find_backend_spec(p.backend);
  if (!spec) return Outcome{"not offered", fmt::format("backend {} is not built yet", p.backend)};
  const Benchmark* bench = find_benchmark(p.benchmark);
  std::vector<Op> missing = missing_ops(*bench, *spec);
  if (!missing.empty()) {
    std::vector<std::string_view> names;
    for (Op op : missing) names.push_back(op_name(op));
    return Outcome{"not offered", fmt::format("{} has no {}", p.backend, fmt::join(names, ", "))};
  }
  if (::access((executable_dir() + "/" + spec->worker).c_str(), X_OK) != 0)
    return Outcome{"not offered", fmt::format("worker {} is not built", spec->worker)};
  return std::nullopt;
}

std::vector<std::string> worker_args(const Point& p, const Campaign& c) {
  std::vector<std::string> a = {"--bench",      p.benchmark,
                                "--reps",       std::to_string(p.timing.reps),
                                "--max-reps",   std::to_string(p.timing.max_reps > 0 ? p.timing.max_reps : 2 * p.timing.reps),
                                "--iters",      std::to_string(p.timing.iters),
                                "--warmup",     std::to_string(p.timing.warmup),
                                "--link-profile", p.profile,
                                "--commit",     source_commit()};
  if (!p.sizes.empty()) a.insert(a.end(), {"--sizes", p.sizes});
  if (!p.route.empty()) a.insert(a.end(), {"--route", p.route});
  if (!p.encoding.empty()) a.insert(a.end(), {"--encoding", p.encoding});
  for (const auto& [k, v] : p.params) a.insert(a.end(), {"--param", k + "=" + v});
  (void)c;
  return a;
}

}  // namespace

RunSummary run_campaign(const RunOptions& o) {
  Cluster cluster = describe_cluster(o.cluster);
  Campaign c = load_campaign(o.file, cluster, o.reference_dir);
  // How every point's worker starts: chosen here, once (launch.h).
  std::unique_ptr<LaunchMethod> launcher;
  try {
    launcher = make_launch_method(o.launcher, cluster.hostfile);
  } catch (const std::invalid_argument& e) {
    throw CampaignError(e.what());
  }

  RunSummary sum;
  sum.total = static_cast<int>(c.points.size());
  json manifest;
  if (!o.resume.empty()) {
    sum.dir = o.resume;
    fs::path m = sum.dir / kManifest;
    if (!fs::exists(m)) throw CampaignError(fmt::format("--resume {}: no {} there (not a campaign directory)", sum.dir.string(), kManifest));
    try {
      manifest = json::parse(read_file(m));
    } catch (const std::exception&) {
      throw CampaignError(fmt::format("--resume {}: {} is not valid JSON", sum.dir.string(), kManifest));
    }
    if (manifest.value("campaign", "") != c.name)
      throw CampaignError(fmt::format("--resume {}: that directory holds campaign '{}', not '{}'", sum.dir.string(),
                                      manifest.value("campaign", "?"), c.name));
  } else {
    fs::create_directories(o.results_root);
    std::string stamp = now_string("%Y%m%d-%H%M%S");
    sum.dir = o.results_root / (c.name + "-" + stamp);
    for (int i = 2; fs::exists(sum.dir); ++i) sum.dir = o.results_root / fmt::format("{}-{}-{}", c.name, stamp, i);
    fs::create_directories(sum.dir);
    manifest["campaign"] = c.name;
    manifest["description"] = c.description;
    manifest["created"] = now_string("%Y-%m-%dT%H:%M:%S%z");
    manifest["file"] = fs::absolute(o.file).string();
    manifest["machine"] = machine_description();
    manifest["commit"] = source_commit();
    manifest["cluster"] = {{"name", cluster.name}, {"size", cluster.size}, {"hosts", cluster.hosts}, {"hostfile", cluster.hostfile}};
    manifest["profiles"] = c.profiles;
    manifest["compare"] = c.compare;
    manifest["main_table"] = c.main_table;
    if (!c.reference.empty()) {
      manifest[campaign::kManifestReference] = fs::absolute(c.reference).string();
      manifest[campaign::kManifestTolerance] = c.tolerance;
    }
    manifest["packages"] = package_versions();
    manifest["sessions"] = json::array();
    write_file_atomically(sum.dir / kCampaignCopy, read_file(o.file));
    // The seed tables as they were, so `report` on this directory later gives the same tables.
    fs::create_directories(sum.dir / kReferenceCopy);
    for (const auto& t : c.compare)
      write_file_atomically(sum.dir / kReferenceCopy / (t + ".csv"), read_file(o.reference_dir / (t + ".csv")));
  }
  fs::create_directories(sum.dir / kRawDir);
  fs::create_directories(sum.dir / kStatusDir);
  // What killed runs left (processes, temporary directories) goes first.
  const std::vector<std::string> cleaned = clean_after_killed_runs(o.resume);

  // This run's record, rewritten whenever it starts or ends something.
  RunRecord record;
  record.pid = ::getpid();
  record.start = start_time(record.pid);
  record.host = host_name();
  record.token = fmt::format("{}-{}-{}", record.host, record.pid, record.start);
  record.results = fs::absolute(sum.dir);
  ::setenv(kTagVar, record.token.c_str(), 1);
  fs::create_directories(state_dir());
  const fs::path state_file = state_dir() / (record.token + ".json");
  auto save_record = [&] {
    const std::string text = record.to_json().dump(2) + "\n";
    write_file_atomically(sum.dir / kRecord, text);
    write_file_atomically(state_file, text);
  };
  save_record();
  manifest["points"] = sum.total;
  manifest["sessions"].push_back({{"started", now_string("%Y-%m-%dT%H:%M:%S%z")},
                                  {"host", host_name()},
                                  {"commit", source_commit()},
                                  {"cluster", cluster.name},
                                  {"profile", cluster.profile},
                                  {"launcher", launcher->name()},
                                  {"resumed", !o.resume.empty()}});
  write_file_atomically(sum.dir / kManifest, manifest.dump(2) + "\n");

  std::ofstream log(sum.dir / kLog, std::ios::app);
  auto log_line = [&](const std::string& s) { log << now_string("%Y-%m-%dT%H:%M:%S ") << s << "\n" << std::flush; };
  log_line(fmt::format("{} campaign {} ({} points) on cluster {} (profile {}), launcher {}, commit {}",
                       o.resume.empty() ? "start" : "resume", c.name, sum.total, cluster.name, cluster.profile,
                       launcher->name(), source_commit()));
  for (const std::string& line : cleaned) {
    log_line(line);
    if (!o.quiet) std::fprintf(stderr, "copbench: %s\n", line.c_str());
  }

  // What is already finished is never run again.
  std::vector<const Point*> pending;
  for (const Point& p : c.points) {
    fs::path raw = sum.dir / kRawDir / (p.id + ".json");
    bool done = false;
    if (fs::exists(raw)) {
      try {
        done = json::parse(read_file(raw)).contains("benchmarks");
      } catch (const std::exception&) {
        done = false;
      }
    }
    if (done) ++sum.already_done;
    else pending.push_back(&p);
  }
  if (sum.already_done > 0) log_line(fmt::format("{} points already done, not run again", sum.already_done));

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills at once; the first ends the running point
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  LocalPvmd pvmd;
  // Stops what this run still has going and removes its record; `interrupted`: the
  // point in progress is recorded as pending. Returns what it did, for the log.
  auto finish = [&](bool interrupted) {
    pvmd.stop();
    const Reaped got = reap(record);
    if (interrupted) mark_pending(sum.dir, record.point, "interrupted (SIGTERM/SIGINT); runs again with --resume");
    std::error_code ec;
    fs::remove(sum.dir / kRecord, ec);
    fs::remove(state_file, ec);
    return got;
  };
  bool pvmd_tried = false;
  std::optional<std::string> pvmd_problem;
  const int kill_after = std::getenv("COPBENCH_CAMPAIGN_KILL_AFTER") ? std::atoi(std::getenv("COPBENCH_CAMPAIGN_KILL_AFTER")) : -1;

  Progress progress(sum.total, o.quiet);
  int finished = sum.already_done;
  int timed_points = 0;
  double timed_seconds = 0;
  try {
    for (const Point* pp : pending) {
      if (g_interrupted) break;
      const Point& p = *pp;
      std::string label = fmt::format("{} {}{} n={}{}", p.benchmark, p.backend, p.route.empty() ? "" : "/" + p.route, p.nodes,
                                      p.tasks_per_node > 1 ? fmt::format("x{}", p.tasks_per_node) : "");
      progress.show(finished, timed_points, timed_seconds, label, true);
      fs::path raw = sum.dir / kRawDir / (p.id + ".json");
      fs::path status = sum.dir / kStatusDir / (p.id + ".json");
      std::optional<Outcome> outcome = cannot_run(p, cluster);
      const BackendSpec* spec = find_backend_spec(p.backend);
      if (!outcome)
        if (auto why = launcher->refuse(*spec)) outcome = Outcome{"failed", *why};
      if (!outcome && spec->launcher == Launcher::pvm_master && !launcher->starts_pvm() && runtime_problem(*spec)) {
        if (cluster.name == "local" && !pvmd_tried) {
          pvmd_tried = true;
          record.pvmd_dir = pvmd.dir();
          save_record();
          pvmd_problem = pvmd.start();
          record.pvmd_pid = LocalPvmd::pid_in(pvmd.dir());
          record.pvmd_start = start_time(record.pvmd_pid);
          save_record();
          if (!pvmd_problem) log_line(fmt::format("started a private pvmd in {} (pid {})", pvmd.dir(), record.pvmd_pid));
        }
        if (auto problem = runtime_problem(*spec)) outcome = Outcome{"failed", *problem};
      }
      auto t0 = std::chrono::steady_clock::now();
      if (!outcome) {
        LaunchRequest req;
        req.spec = spec;
        req.nodes = p.nodes;
        req.tasks_per_node = p.tasks_per_node;
        req.hostfile = cluster.hostfile;
        req.timeout_s = p.timing.timeout;
        req.worker_args = worker_args(p, c);
        req.job_name = p.id;
        req.shared_dir = (record.results / "jobs").string();
        req.on_job = [&](const std::string& job) {
          record.slurm_job = job;
          save_record();
          // Every job of every session, in the manifest and the log.
          manifest["jobs"][p.id].push_back(job);
          write_file_atomically(sum.dir / kManifest, manifest.dump(2) + "\n");
          log_line(fmt::format("{} job {}: point {}", launcher->name(), job, p.id));
        };
        req.on_temp_dir = [&](const std::string& d) {
          record.temp_dirs.insert(d);
          save_record();
        };
        req.on_worker = [&](int pid) {
          record.worker_pid = pid;
          record.worker_start = start_time(pid);
          save_record();
        };
        // The point is running (its status says so until it ends; `pending` if cut short).
        record.point = p.id;
        save_record();
        json running = {{"point", p.id}, {"benchmark", p.benchmark}, {"backend", p.backend}, {"route", p.route},
                        {"encoding", p.encoding}, {"nodes", p.nodes}, {"tasks_per_node", p.tasks_per_node},
                        {"profile", p.profile}, {"sizes", p.sizes}, {"status", "running"},
                        {"reason", fmt::format("started {} by pid {}", now_string("%Y-%m-%dT%H:%M:%S"), ::getpid())}};
        write_file_atomically(status, running.dump(2) + "\n");
        LaunchOutcome lo = launcher->run(req);
        record.worker_pid = 0;
        record.worker_start = 0;
        record.slurm_job.clear();
        for (auto it = record.temp_dirs.begin(); it != record.temp_dirs.end();)
          it = fs::exists(*it) ? std::next(it) : record.temp_dirs.erase(it);
        save_record();
        if (lo.exit_code != 0) {
          outcome = Outcome{"failed", lo.error};
        } else {
          try {
            json result = json::parse(lo.result);
            result["context"]["campaign"] = c.name;
            result["context"]["campaign_point"] = p.id;
            result["context"]["cluster"] = cluster.name;
            for (const auto& [k, v] : lo.context.items()) result["context"][k] = v;
            write_file_atomically(raw, result.dump(2) + "\n");
            outcome = Outcome{"done", ""};
          } catch (const json::exception& e) {
            outcome = Outcome{"failed", std::string("the worker's result is not valid JSON: ") + e.what()};
          }
        }
        timed_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++timed_points;
      }
      if (g_interrupted && outcome->status != "done") break;  // the point was cut short: pending (finish)
      record.point.clear();
      save_record();
      if (outcome->status == "done") {
        std::error_code ec;
        fs::remove(status, ec);
        ++sum.ran;
        log_line(fmt::format("done {} ({:.1f} s)", p.id, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
      } else {
        json st = {{"point", p.id}, {"benchmark", p.benchmark}, {"backend", p.backend}, {"route", p.route},
                   {"encoding", p.encoding}, {"nodes", p.nodes}, {"tasks_per_node", p.tasks_per_node},
                   {"profile", p.profile}, {"sizes", p.sizes},
                   {"status", outcome->status}, {"reason", outcome->reason}};
        write_file_atomically(status, st.dump(2) + "\n");
        if (outcome->status == "not offered") ++sum.not_offered;
        else if (outcome->status == "skipped") ++sum.skipped;
        else {
          ++sum.failed;
          progress.line(fmt::format("copbench: point {} failed: {}", p.id, outcome->reason));
        }
        log_line(fmt::format("{} {}: {}", outcome->status, p.id, outcome->reason));
      }
      ++finished;
      progress.show(finished, timed_points, timed_seconds, label + ": " + outcome->status, false);
      if (outcome->status == "done" && kill_after > 0 && sum.ran >= kill_after) {
        log_line("COPBENCH_CAMPAIGN_KILL_AFTER reached: killing myself (test of --resume)");
        log.close();
        ::raise(SIGKILL);
      }
    }
  } catch (...) {
    finish(g_interrupted != 0);  // nothing of this run stays behind an error either
    throw;
  }
  const bool interrupted = g_interrupted != 0;
  const Reaped got = finish(interrupted);
  if (interrupted) {
    log_line(fmt::format("interrupted after {} of {} points: stopped {} process(es) of this run, removed {} temporary "
                         "director{}{}; resume with --resume {}",
                         finished, sum.total, got.processes, got.dirs, got.dirs == 1 ? "y" : "ies",
                         record.point.empty() ? "" : fmt::format(", point {} pending", record.point), sum.dir.string()));
    throw CampaignError(fmt::format("interrupted; finished points are kept: copbench campaign run {} --resume {}",
                                    o.file.string(), sum.dir.string()));
  }
  log_line(fmt::format("end: {} already done, {} ran, {} not offered, {} skipped, {} failed", sum.already_done, sum.ran,
                       sum.not_offered, sum.skipped, sum.failed));
  return sum;
}

}  // namespace copbench::campaign
