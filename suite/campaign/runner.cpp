// Running a campaign: one point at a time, each finished point written at once
// (atomically) as raw/<id>.json, so a killed campaign resumed with --resume redoes
// nothing that finished and loses nothing. Points that cannot run are recorded in
// status/<id>.json with the reason ("not offered", "skipped", "failed").
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "campaign/internal.h"
#include "copbench/catalog.h"
#include "copbench/campaign.h"
#include "copbench/files.h"
#include "copbench/launch.h"
#include "copbench/log.h"
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

struct Outcome {
  std::string status;  // done, not offered, skipped, failed
  std::string reason;
};

// Why `p` cannot run here, as a status and reason; nullopt when it can.
// private_cop: each cop point starts a COP stack of its own (a Slurm job's), so the
// cluster's controllers do not matter.
std::optional<Outcome> cannot_run(const Point& p, const Cluster& cluster, bool private_cop) {
  if (p.profile != cluster.profile && simulated_platform(p.profile).empty())
    return Outcome{"skipped", fmt::format("needs link profile {} (this cluster: {}); bring up a cluster with "
                                          "`scripts/cluster up N --profile {}` and run again with --resume",
                                          p.profile, cluster.profile, p.profile)};
  // A cop point on a cluster runs on the cluster's own copdrv: their controllers must be the point's.
  const int k = p.per_controller > 0 ? p.per_controller : 64;
  if (p.backend == "cop" && !private_cop && cluster.per_controller > 0 && k != cluster.per_controller)
    return Outcome{"skipped", fmt::format("needs cop with {} channels per level-1 controller (this cluster: {}); bring up a "
                                          "cluster with `scripts/cluster up N --per-controller {}` and run again with --resume",
                                          k, cluster.per_controller, k)};
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

// The point's `env:` in its worker's environment (on top of `env`): each variable set
// and named in PVM_EXPORT, so that the tasks PVM spawns have it too (a pvmd's
// environment is its own). Returns "NAME=VALUE ...", what the result's context records.
std::string add_point_environment(const std::map<std::string, std::string>& point_env, Environment& env) {
  if (point_env.empty()) return "";
  std::string text, exported = env_value(env, "PVM_EXPORT").value_or("");
  for (const auto& [name, value] : point_env) {
    env[name] = value;
    text += (text.empty() ? "" : " ") + name + "=" + value;
    exported += (exported.empty() ? "" : ":") + name;
  }
  env["PVM_EXPORT"] = exported;
  return text;
}

// The point's status file: what it is and where it stands.
json point_status(const Point& p, const std::string& status, const std::string& reason) {
  return {{"point", p.id}, {"benchmark", p.benchmark}, {"backend", p.backend}, {"route", p.route},
          {"encoding", p.encoding}, {"nodes", p.nodes}, {"tasks_per_node", p.tasks_per_node},
          {"profile", p.profile}, {"sizes", p.sizes}, {"per_controller", p.per_controller}, {"env", p.env}, {"status", status}, {"reason", reason}};
}

// Whether raw/<id>.json holds a whole result (a finished point is never run again).
bool finished(const fs::path& raw) {
  if (!fs::exists(raw)) return false;
  try {
    return json::parse(read_file(raw)).contains("benchmarks");
  } catch (const std::exception&) {
    return false;
  }
}

// One run of a campaign (a new directory or a --resume), step by step.
class CampaignRun {
 public:
  explicit CampaignRun(const RunOptions& o);
  RunSummary run();

 private:
  void open_directory();
  void start_record();
  void start_session();
  std::vector<const Point*> pending_points();
  std::optional<Outcome> runtime_refusal(const BackendSpec& spec);
  LaunchRequest request_for(const Point& p, const BackendSpec& spec);
  Outcome launch_point(const Point& p, const BackendSpec& spec);
  void record_outcome(const Point& p, const Outcome& outcome, double seconds);
  void run_points(const std::vector<const Point*>& pending);
  Reaped finish(bool interrupted);
  void save_record();
  void save_manifest() { write_file_atomically(sum_.dir / kManifest, manifest_.dump(2) + "\n"); }

  const RunOptions& o_;
  Cluster cluster_;
  Campaign c_;
  std::unique_ptr<LaunchMethod> launcher_;
  RunSummary sum_;
  json manifest_;
  json install_;  // how the suite got onto the hosts and their commits (check_install)
  RunRecord record_;
  fs::path state_file_;
  std::shared_ptr<spdlog::logger> log_;  // campaign.log
  LocalPvmd pvmd_;
  bool pvmd_tried_ = false;
  // What every process this run starts gets in its environment: the run's tag, and the
  // private pvmd's variables once it is up. Never set in this process (process.h).
  Environment env_;
  Progress progress_;
  int finished_ = 0, timed_points_ = 0;
  double timed_seconds_ = 0;
};

CampaignRun::CampaignRun(const RunOptions& o)
    : o_(o),
      cluster_(describe_cluster(o.cluster, o.launcher != "slurm")),
      c_(load_campaign(o.file, cluster_, o.reference_dir)),
      progress_(static_cast<int>(c_.points.size()), o.quiet) {
  // How every point's worker starts: chosen here, once (launch.h).
  try {
    launcher_ = make_launch_method(o.launcher, cluster_.hostfile);
  } catch (const std::invalid_argument& e) {
    throw CampaignError(e.what());
  }
  sum_.total = static_cast<int>(c_.points.size());
  // Every host runs the build this head node runs, or nothing runs (install.cpp).
  install_ = check_install(cluster_);
}

// The results directory: the one to resume, or a new <name>-<timestamp>.
void CampaignRun::open_directory() {
  if (!o_.resume.empty()) {
    sum_.dir = o_.resume;
    manifest_ = resumed_manifest(sum_.dir, c_.name);
  } else {
    fs::create_directories(o_.results_root);
    const std::string stamp = now_string("%Y%m%d-%H%M%S");
    sum_.dir = o_.results_root / (c_.name + "-" + stamp);
    for (int i = 2; fs::exists(sum_.dir); ++i) sum_.dir = o_.results_root / fmt::format("{}-{}-{}", c_.name, stamp, i);
    fs::create_directories(sum_.dir);
    manifest_ = new_manifest(c_, cluster_, o_, sum_.dir);
  }
  manifest_["install"] = install_;
  fs::create_directories(sum_.dir / kRawDir);
  fs::create_directories(sum_.dir / kStatusDir);
}

void CampaignRun::save_record() {
  const std::string text = record_.to_json().dump(2) + "\n";
  write_file_atomically(sum_.dir / kRecord, text);
  write_file_atomically(state_file_, text);
}

// This run's record (internal.h), rewritten whenever it starts or ends something, and
// the tag every process started under it inherits.
void CampaignRun::start_record() {
  record_.pid = ::getpid();
  record_.start = start_time(record_.pid);
  record_.host = host_name();
  record_.token = fmt::format("{}-{}-{}", record_.host, record_.pid, record_.start);
  record_.results = fs::absolute(sum_.dir);
  env_[kTagVar] = record_.token;
  fs::create_directories(state_dir());
  state_file_ = state_dir() / (record_.token + ".json");
  save_record();
}

// The session in the manifest and the log; what killed runs left is cleaned up first.
void CampaignRun::start_session() {
  const std::vector<std::string> cleaned = clean_after_killed_runs(o_.resume);
  start_record();
  manifest_["points"] = sum_.total;
  manifest_["sessions"].push_back({{"started", now_string("%Y-%m-%dT%H:%M:%S%z")},
                                   {"host", host_name()},
                                   {"commit", source_commit()},
                                   {"cluster", cluster_.name},
                                   {"profile", cluster_.profile},
                                   {"launcher", launcher_->name()},
                                   {"resumed", !o_.resume.empty()}});
  save_manifest();
  log_ = file_log(sum_.dir / kLog);
  log_->info("{} campaign {} ({} points) on cluster {} (profile {}), launcher {}, commit {}",
             o_.resume.empty() ? "start" : "resume", c_.name, sum_.total, cluster_.name, cluster_.profile,
             launcher_->name(), source_commit());
  for (const std::string& line : cleaned) {
    log_->info("{}", line);
    if (!o_.quiet) log().warn("{}", line);  // "copbench: warning: cleaned up after killed run ..."
  }
}

// What is already finished is never run again.
std::vector<const Point*> CampaignRun::pending_points() {
  std::vector<const Point*> pending;
  for (const Point& p : c_.points) {
    if (finished(sum_.dir / kRawDir / (p.id + ".json"))) ++sum_.already_done;
    else pending.push_back(&p);
  }
  if (sum_.already_done > 0) log_->info("{} points already done, not run again", sum_.already_done);
  return pending;
}

// Why the launcher or the backend's runtime cannot run `p` now; a local campaign
// starts a private pvmd once when PVM has none.
std::optional<Outcome> CampaignRun::runtime_refusal(const BackendSpec& spec) {
  if (auto why = launcher_->refuse(spec)) return Outcome{"failed", *why};
  if (!worker_launcher(spec).needs_running_pvmd() || launcher_->starts_pvm() || !runtime_problem(spec, "", env_))
    return std::nullopt;
  if (cluster_.name == "local" && !pvmd_tried_) {
    pvmd_tried_ = true;
    record_.pvmd_dir = pvmd_.dir();
    save_record();
    const std::optional<std::string> problem = pvmd_.start(env_);
    if (!problem)
      for (const auto& [name, value] : pvmd_.environment()) env_[name] = value;
    record_.pvmd_pid = LocalPvmd::pid_in(pvmd_.dir());
    record_.pvmd_start = start_time(record_.pvmd_pid);
    save_record();
    if (!problem) log_->info("started a private pvmd in {} (pid {})", pvmd_.dir(), record_.pvmd_pid);
  }
  if (auto problem = runtime_problem(spec, "", env_)) return Outcome{"failed", *problem};
  return std::nullopt;
}

// The point's launch; what it starts is written into the record as it appears.
LaunchRequest CampaignRun::request_for(const Point& p, const BackendSpec& spec) {
  LaunchRequest req;
  req.spec = &spec;
  req.nodes = p.nodes;
  req.tasks_per_node = p.tasks_per_node;
  req.hostfile = worker_launcher(spec).simulated() ? "" : cluster_.hostfile;  // simulated nodes are this machine's
  req.env = env_;
  req.timeout_s = p.timing.timeout;
  req.worker = point_worker_args(p);
  req.job_name = p.id;
  req.shared_dir = (record_.results / "jobs").string();
  req.on_job = [this, &p](const std::string& job) {
    record_.slurm_job = job;
    save_record();
    // Every job of every session, in the manifest and the log.
    manifest_["jobs"][p.id].push_back(job);
    save_manifest();
    log_->info("{} job {}: point {}", launcher_->name(), job, p.id);
  };
  req.on_temp_dir = [this](const std::string& d) {
    record_.temp_dirs.insert(d);
    save_record();
  };
  req.on_worker = [this](int pid) {
    record_.worker_pid = pid;
    record_.worker_start = start_time(pid);
    save_record();
  };
  return req;
}

// Runs the point's worker; a whole result is written to raw/<id>.json at once.
Outcome CampaignRun::launch_point(const Point& p, const BackendSpec& spec) {
  LaunchRequest req = request_for(p, spec);
  // The point is running (its status says so until it ends; `pending` if cut short).
  record_.point = p.id;
  save_record();
  write_file_atomically(sum_.dir / kStatusDir / (p.id + ".json"),
                        point_status(p, "running", fmt::format("started {} by pid {}", now_string("%Y-%m-%dT%H:%M:%S"), ::getpid()))
                                .dump(2) + "\n");
  // Locally each cop point starts a private stack, as many level-1 controllers as it asks
  // (scripts/lib/stack.sh reads COP_PER_CONTROLLER), and so does a Slurm job's script
  // (launch/methods.cpp, cop_in_allocation); on a cluster the hosts' env.sh sets it.
  if (p.backend == "cop" && (cluster_.per_controller == 0 || launcher_->name() == "slurm"))
    req.env["COP_PER_CONTROLLER"] =
        p.per_controller > 0 ? std::optional<std::string>(std::to_string(p.per_controller)) : std::nullopt;
  const std::string env_text = add_point_environment(p.env, req.env);
  LaunchOutcome lo = launcher_->run(req);
  record_.worker_pid = 0;
  record_.worker_start = 0;
  record_.slurm_job.clear();
  for (auto it = record_.temp_dirs.begin(); it != record_.temp_dirs.end();)
    it = fs::exists(*it) ? std::next(it) : record_.temp_dirs.erase(it);
  save_record();
  if (lo.exit_code != 0) return Outcome{"failed", lo.error};
  try {
    json result = json::parse(lo.result);
    result["context"]["campaign"] = c_.name;
    result["context"]["campaign_point"] = p.id;
    result["context"]["cluster"] = cluster_.name;
    if (p.per_controller > 0) result["context"]["cop_per_controller"] = p.per_controller;
    if (!env_text.empty()) result["context"]["campaign_env"] = env_text;
    for (const auto& [k, v] : lo.context.items()) result["context"][k] = v;
    write_file_atomically(sum_.dir / kRawDir / (p.id + ".json"), result.dump(2) + "\n");
    return Outcome{"done", ""};
  } catch (const json::exception& e) {
    return Outcome{"failed", std::string("the worker's result is not valid JSON: ") + e.what()};
  }
}

// The point's end in its status file (removed when done), the summary and the log.
void CampaignRun::record_outcome(const Point& p, const Outcome& outcome, double seconds) {
  record_.point.clear();
  save_record();
  const fs::path status = sum_.dir / kStatusDir / (p.id + ".json");
  if (outcome.status == "done") {
    std::error_code ec;
    fs::remove(status, ec);
    ++sum_.ran;
    log_->info("done {} ({:.1f} s)", p.id, seconds);
    return;
  }
  write_file_atomically(status, point_status(p, outcome.status, outcome.reason).dump(2) + "\n");
  if (outcome.status == "not offered") ++sum_.not_offered;
  else if (outcome.status == "skipped") ++sum_.skipped;
  else {
    ++sum_.failed;
    progress_.line(fmt::format("copbench: point {} failed: {}", p.id, outcome.reason));
  }
  log_->info("{} {}: {}", outcome.status, p.id, outcome.reason);
}

void CampaignRun::run_points(const std::vector<const Point*>& pending) {
  finished_ = sum_.already_done;
  for (const Point* pp : pending) {
    if (g_interrupted) break;
    const Point& p = *pp;
    const std::string label = fmt::format("{} {}{} n={}{}", p.benchmark, p.backend, p.route.empty() ? "" : "/" + p.route,
                                          p.nodes, p.tasks_per_node > 1 ? fmt::format("x{}", p.tasks_per_node) : "");
    progress_.show(finished_, timed_points_, timed_seconds_, label, true);
    std::optional<Outcome> outcome = cannot_run(p, cluster_, launcher_->name() == "slurm");
    const BackendSpec* spec = find_backend_spec(p.backend);
    if (!outcome) outcome = runtime_refusal(*spec);
    const auto t0 = std::chrono::steady_clock::now();
    auto seconds = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    if (!outcome) {
      outcome = launch_point(p, *spec);
      timed_seconds_ += seconds();
      ++timed_points_;
    }
    if (g_interrupted && outcome->status != "done") break;  // the point was cut short: pending (finish)
    record_outcome(p, *outcome, seconds());
    ++finished_;
    progress_.show(finished_, timed_points_, timed_seconds_, label + ": " + outcome->status, false);
  }
}

// Stops what this run still has going and removes its record; `interrupted`: the
// point in progress is recorded as pending. Returns what it did, for the log.
Reaped CampaignRun::finish(bool interrupted) {
  pvmd_.stop();
  const Reaped got = reap(record_);
  if (interrupted) mark_pending(sum_.dir, record_.point, "interrupted (SIGTERM/SIGINT); runs again with --resume");
  std::error_code ec;
  fs::remove(sum_.dir / kRecord, ec);
  fs::remove(state_file_, ec);
  return got;
}

RunSummary CampaignRun::run() {
  open_directory();
  start_session();
  const std::vector<const Point*> pending = pending_points();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND;  // a second Ctrl-C kills at once; the first ends the running point
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  try {
    run_points(pending);
  } catch (...) {
    finish(g_interrupted != 0);  // nothing of this run stays behind an error either
    throw;
  }
  const bool interrupted = g_interrupted != 0;
  const std::string point = record_.point;
  const Reaped got = finish(interrupted);
  if (interrupted) {
    log_->info("interrupted after {} of {} points: stopped {} process(es) of this run, removed {} temporary "
               "director{}{}; resume with --resume {}",
               finished_, sum_.total, got.processes, got.dirs, got.dirs == 1 ? "y" : "ies",
               point.empty() ? "" : fmt::format(", point {} pending", point), sum_.dir.string());
    throw CampaignError(fmt::format("interrupted; finished points are kept: copbench campaign run {} --resume {}",
                                    o_.file.string(), sum_.dir.string()));
  }
  log_->info("end: {} already done, {} ran, {} not offered, {} skipped, {} failed", sum_.already_done, sum_.ran,
             sum_.not_offered, sum_.skipped, sum_.failed);
  return sum_;
}

}  // namespace

WorkerArgs point_worker_args(const Point& p) {
  WorkerArgs w;
  w.benchmark = p.benchmark;
  if (!p.sizes.empty()) w.params.sizes = parse_sizes(p.sizes);
  w.params.options = p.params;
  w.params.timing.min_reps = p.timing.reps;
  w.params.timing.max_reps = p.timing.max_reps;  // 0: default_max_reps (worker.h)
  w.params.timing.iterations = p.timing.iters;
  w.params.timing.warmup = p.timing.warmup;
  if (!p.timing.methods.empty()) w.params.timing.methods = parse_methods(p.timing.methods);
  w.route = p.route;
  w.encoding = p.encoding;
  w.nodes = p.nodes;
  w.tasks_per_node = p.tasks_per_node;
  w.context.link_profile = p.profile;
  w.platform = simulated_platform(p.profile);
  w.context.commit = source_commit();
  return w;
}

RunSummary run_campaign(const RunOptions& options) { return CampaignRun(options).run(); }

}  // namespace copbench::campaign
