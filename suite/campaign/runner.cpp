// Running a campaign: one point at a time, each finished point written at once
// (atomically) as raw/<id>.json, so a killed campaign resumed with --resume redoes
// nothing that finished and loses nothing. Points that cannot run are recorded in
// status/<id>.json with the reason ("not offered", "skipped", "failed").
#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
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
  ~LocalPvmd() { stop(); }
  std::optional<std::string> start() {
    dir_ = fmt::format("/tmp/copbench-campaign-pvm.{}", ::getpid());
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

 private:
  std::string dir_;
  bool started_ = false;
};

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
  manifest["points"] = sum.total;
  manifest["sessions"].push_back({{"started", now_string("%Y-%m-%dT%H:%M:%S%z")},
                                  {"host", host_name()},
                                  {"commit", source_commit()},
                                  {"cluster", cluster.name},
                                  {"profile", cluster.profile},
                                  {"resumed", !o.resume.empty()}});
  write_file_atomically(sum.dir / kManifest, manifest.dump(2) + "\n");

  std::ofstream log(sum.dir / kLog, std::ios::app);
  auto log_line = [&](const std::string& s) { log << now_string("%Y-%m-%dT%H:%M:%S ") << s << "\n" << std::flush; };
  log_line(fmt::format("{} campaign {} ({} points) on cluster {} (profile {}), commit {}",
                       o.resume.empty() ? "start" : "resume", c.name, sum.total, cluster.name, cluster.profile, source_commit()));

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
  bool pvmd_tried = false;
  std::optional<std::string> pvmd_problem;
  const int kill_after = std::getenv("COPBENCH_CAMPAIGN_KILL_AFTER") ? std::atoi(std::getenv("COPBENCH_CAMPAIGN_KILL_AFTER")) : -1;

  Progress progress(sum.total, o.quiet);
  int finished = sum.already_done;
  int timed_points = 0;
  double timed_seconds = 0;
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
    if (!outcome && spec->launcher == Launcher::pvm_master && runtime_problem(*spec)) {
      if (cluster.name == "local" && !pvmd_tried) {
        pvmd_tried = true;
        pvmd_problem = pvmd.start();
        if (!pvmd_problem) log_line("started a private pvmd in " + pvmd.dir());
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
      LaunchOutcome lo = launch(req);
      if (lo.exit_code != 0) {
        outcome = Outcome{"failed", lo.error};
      } else {
        try {
          json result = json::parse(lo.result);
          result["context"]["campaign"] = c.name;
          result["context"]["campaign_point"] = p.id;
          result["context"]["cluster"] = cluster.name;
          write_file_atomically(raw, result.dump(2) + "\n");
          outcome = Outcome{"done", ""};
        } catch (const json::exception& e) {
          outcome = Outcome{"failed", std::string("the worker's result is not valid JSON: ") + e.what()};
        }
      }
      timed_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ++timed_points;
    }
    if (g_interrupted && outcome->status != "done") break;  // the point was cut short: not recorded
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
  pvmd.stop();
  if (g_interrupted) {
    log_line(fmt::format("interrupted after {} of {} points; resume with --resume {}", finished, sum.total, sum.dir.string()));
    throw CampaignError(fmt::format("interrupted; finished points are kept: copbench campaign run {} --resume {}",
                                    o.file.string(), sum.dir.string()));
  }
  log_line(fmt::format("end: {} already done, {} ran, {} not offered, {} skipped, {} failed", sum.already_done, sum.ran,
                       sum.not_offered, sum.skipped, sum.failed));
  return sum;
}

}  // namespace copbench::campaign
