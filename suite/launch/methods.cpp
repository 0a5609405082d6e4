// The launch methods (launch.h): local, ssh (a hostfile's hosts) and slurm. The first
// two are launch() as it always was; slurm submits each run as a batch job of exactly
// its node count and waits for the job's end in the controller's own words
// (scontrol show job: JobState, Reason, ExitCode), so that a job that fails, is
// cancelled or runs past its time limit is reported with Slurm's reason.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "copbench/launch.h"
#include "launch/internal.h"

namespace copbench {
namespace fs = std::filesystem;
using namespace launch_detail;
namespace {

class DirectLaunch : public LaunchMethod {
 public:
  DirectLaunch(std::string name, std::string hostfile) : name_(std::move(name)), hostfile_(std::move(hostfile)) {}
  std::string name() const override { return name_; }
  std::optional<std::string> refuse(const BackendSpec&) const override { return std::nullopt; }
  LaunchOutcome run(LaunchRequest req) override {
    req.hostfile = hostfile_;
    return launch(req);
  }

 private:
  std::string name_, hostfile_;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a short Slurm command (sbatch, scontrol, scancel); its output, and its exit code in `rc`.
// sbatch passes `env` on to the job (--export=ALL).
std::string slurm_command(const std::vector<std::string>& argv, int& rc, const Environment& env = {}) {
  ProcessOptions o;
  o.env = env;
  o.capture = true;
  o.timeout_s = 60;
  const ProcessResult r = run_process(argv, o);
  rc = r.timed_out ? 124 : r.status();
  return r.output;
}

// `scontrol show job -o ID`: KEY=VALUE words on one line.
std::map<std::string, std::string> job_fields(const std::string& text) {
  std::map<std::string, std::string> f;
  std::stringstream ss(text);
  std::string word;
  while (ss >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos && !f.count(word.substr(0, eq))) f[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return f;
}

// Job states after which nothing of the job runs any more (squeue(1), JOB STATE CODES).
bool job_ended(const std::string& state) {
  static const std::set<std::string> ended = {"COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",
                                              "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",     "DEADLINE",
                                              "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
  return ended.count(state) > 0;
}

// What the controller last said of a job, and why copbench cancelled it ("" if not).
struct JobEnd {
  std::map<std::string, std::string> fields;
  std::string our_reason;
  std::string error;  // the controller lost the job
};

class SlurmLaunch : public LaunchMethod {
 public:
  std::string name() const override { return "slurm"; }
  bool starts_pvm() const override { return true; }
  std::optional<std::string> refuse(const BackendSpec&) const override {
    for (const char* tool : {"sbatch", "scontrol", "scancel"})
      if (!on_path(tool)) return fmt::format("{} not found on PATH (install slurm-client)", tool);
    return std::nullopt;
  }
  LaunchOutcome run(LaunchRequest req) override;

 private:
  static std::string write_job_script(const fs::path& dir, const BackendSpec& spec, const std::vector<std::string>& argv);
  static JobEnd wait_for_job(const std::string& job, int minutes);
  void judge(LaunchOutcome& out, const JobEnd& end, const std::string& job, const BackendSpec& spec, const fs::path& dir) const;
  void sweep_hosts(const std::string& job, const std::string& nodelist);
};

// job.sh in `dir`: the worker launcher's set-up of the allocation, then the worker.
// Returns how the worker is started, for the result's context.
std::string SlurmLaunch::write_job_script(const fs::path& dir, const BackendSpec& spec, const std::vector<std::string>& argv) {
  const WorkerLauncher::JobPrologue prologue = worker_launcher(spec).job_prologue();
  std::ofstream script(dir / "job.sh");
  script << "#!/bin/sh\n"
         << "dir=" << shell_quote(dir.string()) << " bindir=" << shell_quote(executable_dir()) << "\n"
         << prologue.script;
  for (const auto& a : argv) script << ' ' << shell_quote(a);
  script << "\n";
  script.close();
  ::chmod((dir / "job.sh").c_str(), 0755);
  return prologue.started_by;
}

// Waits for the job's end, asking the controller (never a fixed sleep for an outcome);
// cancels it on cancel_launches() or 2 minutes past its time limit.
JobEnd SlurmLaunch::wait_for_job(const std::string& job, int minutes) {
  using clock = std::chrono::steady_clock;
  std::optional<clock::time_point> running_since;
  JobEnd end;
  int unknown = 0, rc = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::string shown = slurm_command({"scontrol", "show", "job", "-o", job}, rc);
    if (rc != 0) {
      // The controller forgets a job MinJobAge after its end; right after submission
      // or in a controller restart it may not answer: a few tries before giving up.
      if (++unknown < 20) continue;
      slurm_command({"scancel", job}, rc);  // in case it still runs, unseen
      end.error = fmt::format("Slurm job {}: the controller no longer knows it ({})", job, last_line(shown));
      return end;
    }
    unknown = 0;
    end.fields = job_fields(shown);
    const std::string state = end.fields["JobState"];
    if (job_ended(state)) return end;
    if (state == "RUNNING" && !running_since) running_since = clock::now();
    const bool late = running_since && clock::now() > *running_since + std::chrono::seconds(minutes * 60 + 120);
    if (cancelled() || late) {
      end.our_reason = cancelled() ? "interrupted" : "still running 2 minutes past its time limit";
      slurm_command({"scancel", job}, rc);
      for (int i = 0; i < 200; ++i) {  // until the controller says it ended (bounded)
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        end.fields = job_fields(slurm_command({"scontrol", "show", "job", "-o", job}, rc));
        if (rc != 0 || job_ended(end.fields["JobState"])) break;
      }
      return end;
    }
  }
}

// The outcome from how the job ended (Slurm's words) and the worker's files.
void SlurmLaunch::judge(LaunchOutcome& out, const JobEnd& end, const std::string& job, const BackendSpec& spec,
                        const fs::path& dir) const {
  auto field = [&end](const char* key) {
    auto it = end.fields.find(key);
    return it == end.fields.end() ? std::string() : it->second;
  };
  if (!field("NodeList").empty()) out.context["slurm_nodes"] = field("NodeList");
  worker_launcher(spec).job_context(out, dir);
  const std::string state = field("JobState");
  if (!end.error.empty()) {
    out.exit_code = 1;
    out.error = end.error;
  } else if (!end.our_reason.empty()) {
    out.exit_code = cancelled() ? 130 : 124;
    out.error = fmt::format("Slurm job {} cancelled by copbench: {} (JobState={})", job, end.our_reason, state);
  } else if (state == "COMPLETED") {
    out.exit_code = 0;
    read_worker_files(out, spec, dir);
    if (out.exit_code != 0) out.error = fmt::format("Slurm job {}: {}", job, out.error);
  } else {
    LaunchOutcome worker_said;
    worker_said.exit_code = 1;
    read_worker_files(worker_said, spec, dir);
    const std::string exit = field("ExitCode");
    out.exit_code = std::max(1, std::atoi(exit.c_str()));
    out.error = fmt::format("Slurm job {} {} (Reason={}, ExitCode={})", job, state, field("Reason"), exit);
    if (state == "FAILED" && !worker_said.error.empty()) out.error += ": " + worker_said.error;
  }
}

LaunchOutcome SlurmLaunch::run(LaunchRequest req) {
  LaunchOutcome out;
  const BackendSpec& spec = *req.spec;
  const fs::path worker = fs::path(executable_dir()) / spec.worker;
  if (auto why = refuse(spec)) {
    out.exit_code = 1;
    out.error = *why;
    return out;
  }
  if (::access(worker.c_str(), X_OK) != 0) {
    out.exit_code = 1;
    out.error = fmt::format("worker {} not found (build the target {})", worker.string(), spec.worker);
    return out;
  }
  // The job's files lie where every node sees them: rank 0 writes the result on
  // whichever node Slurm gives it.
  const fs::path shared = req.shared_dir.empty() ? fs::current_path() : fs::absolute(req.shared_dir);
  fs::create_directories(shared);
  std::string tmpl = (shared / "copbench-run.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a directory in " + shared.string());
  const fs::path dir = tmpl;
  if (req.on_temp_dir) req.on_temp_dir(dir.string());
  req.hostfile.clear();
  const std::string started_by =
      write_job_script(dir, spec, worker_command(req, worker.string(), dir / "result.json", dir / "error.txt", true));
  // Slurm's time limit (whole minutes) is the point's timeout and the worker's own
  // margin; our deadline follows it, so Slurm's TIMEOUT is what a run past it reports.
  const int minutes = std::max(1, (req.timeout_s + 30 + 59) / 60);
  const std::string name = req.job_name.empty() ? "copbench" : "copbench-" + req.job_name;
  std::vector<std::string> sbatch = {"sbatch", "--parsable", fmt::format("--nodes={}", req.nodes),
                                     fmt::format("--ntasks-per-node={}", req.tasks_per_node), "--overcommit",
                                     "--exclusive", fmt::format("--job-name={}", name),
                                     fmt::format("--time={}", minutes), "--output=" + (dir / "worker.log").string(),
                                     "--chdir=" + dir.string(), "--export=ALL", (dir / "job.sh").string()};
  int rc = 0;
  const std::string submitted = slurm_command(sbatch, rc, req.env);
  const std::string job = first_line(submitted.substr(0, submitted.find(';')));
  std::error_code ec;
  if (rc != 0 || job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
    out.exit_code = rc != 0 ? rc : 1;
    out.error = fmt::format("sbatch refused the job: {}", last_line(submitted));
    fs::remove_all(dir, ec);
    return out;
  }
  if (req.on_job) req.on_job(job);
  out.context["launcher"] = "slurm";
  out.context["slurm_job"] = job;
  out.context["slurm_started_by"] = started_by;
  const JobEnd end = wait_for_job(job, minutes);
  judge(out, end, job, spec, dir);
  auto nodes = end.fields.find("NodeList");
  sweep_hosts(job, nodes == end.fields.end() ? "" : nodes->second);
  fs::remove_all(dir, ec);
  return out;
}

// The job's script stops its daemons on every host when it ends (its EXIT trap), but
// Slurm kills a script whose trap outlives KillWait, and the copdrv and pvmd it started
// over ssh are not the job's processes. So after every job the runner, too, stops what
// the job may have left on its hosts: every daemon recorded in the job's directories
// (copbench-daemon stop: by PID and /proc start time) and the directories. Best effort:
// a host it cannot reach is passed over.
void SlurmLaunch::sweep_hosts(const std::string& job, const std::string& nodelist) {
  if (nodelist.empty()) return;
  int rc = 0;
  const std::string hosts = slurm_command({"scontrol", "show", "hostnames", nodelist}, rc);
  if (rc != 0) return;
  const std::string cop = "/tmp/copbench-slurm-cop." + job, pvm = "/tmp/copbench-slurm-pvm." + job;
  const std::string cmd = fmt::format(
      "for f in {0}/*.pid {1}/*.pid; do [ -e \"$f\" ] && {2}/copbench-daemon stop \"${{f%/*}}\" \"$(basename \"$f\" .pid)\"; done; "
      "rm -rf {0} {1}; true",
      cop, pvm, shell_quote(executable_dir()));
  std::stringstream ss(hosts);
  std::string host;
  while (ss >> host) {
    ProcessOptions o;
    o.capture = true;  // and dropped: best effort
    o.timeout_s = 20;
    run_process({"ssh", "-o", "BatchMode=yes", host, cmd}, o);
  }
}

}  // namespace

const std::vector<std::string>& launch_method_names() {
  static const std::vector<std::string> names = {"local", "ssh", "slurm"};
  return names;
}

std::unique_ptr<LaunchMethod> make_launch_method(const std::string& kind, const std::string& hostfile) {
  if (kind.empty()) return std::make_unique<DirectLaunch>(hostfile.empty() ? "local" : "ssh", hostfile);
  if (kind == "local") {
    if (!hostfile.empty())
      throw std::invalid_argument(fmt::format("--launcher local runs on this machine only, but the cluster has the hostfile {}", hostfile));
    return std::make_unique<DirectLaunch>("local", "");
  }
  if (kind == "ssh") {
    if (hostfile.empty()) throw std::invalid_argument("--launcher ssh needs a cluster (--cluster INVENTORY): it has no hosts here");
    return std::make_unique<DirectLaunch>("ssh", hostfile);
  }
  if (kind == "slurm") return std::make_unique<SlurmLaunch>();
  throw std::invalid_argument(fmt::format("unknown launcher '{}' (local, ssh or slurm)", kind));
}

}  // namespace copbench
