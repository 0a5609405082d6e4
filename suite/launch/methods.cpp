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
std::string slurm_command(const std::vector<std::string>& argv, int& rc) {
  ProcessOptions o;
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

// The job script's start for PVM: a virtual machine of exactly the allocated hosts,
// private to the job (its own PVM_TMP on each host, so the cluster's own pvmd is never
// met), the master pvmd here on the job's first host and one on each other host
// (through dx=, a wrapper that gives them the same PVM_TMP); halted when the script
// ends, also when Slurm cancels the job (SIGTERM). The worker follows on the last line.
std::string pvm_in_allocation(const fs::path& dir, const std::string& bindir) {
  const std::string d = shell_quote(dir.string());
  return fmt::format(R"SH(# PVM inside the allocation: a virtual machine of the allocated hosts, halted at the end.
set -u
dir={0}
export PVM_ROOT=/usr/lib/pvm3 PVM_TMP=/tmp/copbench-slurm-pvm.$SLURM_JOB_ID PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh
mkdir -p "$PVM_TMP"
cat >"$dir/pvmd-on-host" <<WRAPPER
#!/bin/sh
export PVM_ROOT=$PVM_ROOT PVM_TMP=$PVM_TMP PVM_ALLOW_ROOT=1 PVM_RSH=$PVM_RSH
mkdir -p "\$PVM_TMP"
exec "\$PVM_ROOT/lib/pvmd" "\$@"
WRAPPER
chmod +x "$dir/pvmd-on-host"
hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
want=$(echo "$hosts" | wc -l)
{{ echo "* ep={1}:$PVM_ROOT/lib:$PVM_ROOT/bin/LINUX64 dx=$dir/pvmd-on-host"; echo "$hosts"; }} >"$dir/hostfile"
daemon=$PVM_TMP/pvmd.$(id -u)
# Each host's PVM_TMP lies in that host's own /tmp: removed on every host.
halt() {{
  [ -e "$daemon" ] && echo halt | timeout 10 "$PVM_ROOT/lib/pvm" >/dev/null 2>&1
  [ -n "${{pvmd:-}}" ] && kill "$pvmd" 2>/dev/null
  for h in $hosts; do timeout 20 ssh -o BatchMode=yes "$h" rm -rf "$PVM_TMP" </dev/null >/dev/null 2>&1; done
  rm -rf "$PVM_TMP"
}}
trap halt EXIT
trap 'exit 143' TERM INT
"$dir/pvmd-on-host" "$dir/hostfile" >"$dir/pvmd.log" 2>&1 </dev/null &
pvmd=$!
i=0
# Until every allocated host is in the virtual machine (the console only once the
# daemon is there: without one it would start its own).
until [ -e "$daemon" ] && [ "$(echo conf | timeout 5 "$PVM_ROOT/lib/pvm" 2>/dev/null | grep -o '[0-9]* host' | head -1)" = "$want host" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 $pvmd 2>/dev/null; then
    echo "copbench: the virtual machine of the $want allocated hosts did not come up: $(tail -1 "$dir/pvmd.log")" >&2
    exit 1
  fi
  sleep 0.1
done
)SH", d, bindir);
}

// The first part of cop_in_allocation: the wrapper that starts and stops one host's
// copdrv (written into the job's directory, run on each host over ssh).
std::string copdrv_wrapper(const std::string& bindir) {
  return fmt::format(R"SH(# COP inside the allocation: copd and a copdrv per host of the job, stopped at the end.
cop=/tmp/copbench-slurm-cop.$SLURM_JOB_ID
unset COP_STACK_DIR
for v in $(env | sed -n 's/^\(COP_DRIVER_[0-9]*\)=.*/\1/p'); do unset "$v"; done
# The job's cluster key (cop/link.h "Keys"), as munge's for Slurm: 32 random bytes, mode
# 0600, in the job's directory that every host reads; copd and each copdrv get --key.
key=$dir/cop-cluster.key
if ! (umask 077 && head -c 32 /dev/urandom >"$key.tmp" && mv -f "$key.tmp" "$key"); then
  echo "copbench: cannot write the job's COP key $key" >&2
  exit 1
fi
cat >"$dir/copdrv-on-host" <<WRAPPER
#!/bin/sh
# copdrv-on-host start CHANNEL CONTROLLER | stop: this host's channel driver of job $SLURM_JOB_ID.
cop=$cop
case "\$1" in
start)
  mkdir -p "\$cop" && rm -f "\$cop/copdrv.sock"
  setsid {0}/copdrv --channel "\$2" --controller "\$3" --dir "\$cop" --key "$key" >"\$cop/copdrv.log" 2>&1 </dev/null &
  echo \$! >"\$cop/copdrv.pid"
  i=0
  until [ -S "\$cop/copdrv.sock" ]; do
    i=\$((i + 1))
    if [ \$i -gt 300 ] || ! kill -0 "\$(cat "\$cop/copdrv.pid")" 2>/dev/null; then
      echo "copdrv of channel \$2 on \$(hostname) did not come up: \$(tail -1 "\$cop/copdrv.log")"
      exit 1
    fi
    sleep 0.1
  done ;;
stop)
  p=\$(cat "\$cop/copdrv.pid" 2>/dev/null)
  if [ -n "\$p" ] && tr '\0' ' ' <"/proc/\$p/cmdline" 2>/dev/null | grep -q -- "--dir \$cop"; then
    kill "\$p" 2>/dev/null
    i=0
    while [ -e "/proc/\$p" ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1)); done
    kill -9 "\$p" 2>/dev/null
  fi
  rm -rf "\$cop" ;;
esac
WRAPPER
chmod +x "$dir/copdrv-on-host"
)SH", bindir);
}

// The second part of cop_in_allocation, after start_copd: the controllers (one, or
// level-1 ones under a level 2) and each host's copdrv on its channel.
std::string cop_controllers_and_channels() {
  return fmt::format(R"SH(per=${{COP_PER_CONTROLLER:-64}}
case "$per" in ''|*[!0-9]*) per=0 ;; esac
if [ "$per" -lt 1 ] || [ "$per" -gt 64 ]; then
  echo "copbench: COP_PER_CONTROLLER must be 1..64, got '${{COP_PER_CONTROLLER:-}}'" >&2
  exit 1
fi
ctls=$(( (want + per - 1) / per ))
l2=
controllers=
if [ "$ctls" -gt 1 ]; then
  start_copd copd-l2 --level 2 --channels "$ctls"
  l2=$started
  c=0
  while [ "$c" -lt "$ctls" ]; do
    start_copd "copd$c" --channels "$per" --cntno "$c" --parent "$l2"
    controllers="$controllers $started"
    c=$((c + 1))
  done
else
  start_copd copd --channels "$want"
  controllers=$started
fi
k=0
for h in $hosts; do
  k=$((k + 1))
  controller=$(echo $controllers | cut -d' ' -f$(( (k - 1) / per + 1 )))
  if ! said=$(ssh -o BatchMode=yes "$h" "$dir/copdrv-on-host" start "$(( (k - 1) % per + 1 ))" "$controller" </dev/null 2>&1); then
    echo "copbench: $said" >&2
    exit 1
  fi
done
if [ -n "$l2" ]; then
  echo "copd-l2 $l2, level-1 copd$controllers of $per channels, copdrv on $(echo $hosts)" >"$dir/cop-stack"
else
  echo "copd $controllers, copdrv channels 1..$want on $(echo $hosts)" >"$dir/cop-stack"
fi
export COP_USE_RUNNING=1 COP_DRIVER=$cop COP_PER_CONTROLLER=$per
export PVM_EXPORT="${{PVM_EXPORT:+$PVM_EXPORT:}}COP_DRIVER:COP_PER_CONTROLLER"
)SH");
}

// The job script's start for COP, after pvm_in_allocation: a COP stack private to the
// job (seed 000 ch. IV: one controller node, one channel driver per compute node).
// The controllers run on this host, the job's first, at its address on the COP network
// (COPBENCH_COP_SUBNET; else the address its name resolves to), each on a free port:
// one copd with as many channels as hosts, or, with K = COP_PER_CONTROLLER below the
// host count, ceil(N/K) level-1 copd of K channels under a level-2 copd (Figure 5).
// Then one copdrv per allocated host, the k-th host (the order the hosts joined the
// virtual machine, so PVM host number H drives it: libcop's direct tid mapping) on
// channel (k-1)%K+1 of controller (k-1)/K, each in a directory of that host's own /tmp
// that the tasks there name as COP_DRIVER (one path, exported to every task with
// COP_PER_CONTROLLER through PVM_EXPORT). Every copdrv and copd are stopped, by PID,
// and their directories removed when the script ends, also when Slurm cancels the job
// (SIGTERM), before the virtual machine is halted.
std::string cop_in_allocation(const std::string& bindir) {
  return copdrv_wrapper(bindir) + fmt::format(R"SH(copds=
stop_cop() {{
  for h in $hosts; do timeout 20 ssh -o BatchMode=yes "$h" "$dir/copdrv-on-host" stop </dev/null >/dev/null 2>&1; done
  for p in $copds; do
    kill "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
}}
trap 'stop_cop; halt' EXIT
if [ -n "${{COPBENCH_COP_SUBNET:-}}" ]; then
  addr=$(ip -o -4 addr show | awk '{{print $4}}' | python3 -c 'import ipaddress, sys
net = ipaddress.ip_network(sys.argv[1], strict=False)
for line in sys.stdin:
    a = ipaddress.ip_interface(line.strip())
    if a.ip in net:
        print(a.ip)
        break' "$COPBENCH_COP_SUBNET")
else
  addr=$(getent ahostsv4 "$(echo "$hosts" | head -1)" | awk 'NR == 1 {{print $1}}')
fi
if [ -z "$addr" ]; then
  echo "copbench: $(hostname) has no address on the COP network ${{COPBENCH_COP_SUBNET:-(its name does not resolve)}}" >&2
  exit 1
fi
# start_copd NAME ARG...: a copd on $addr, its address (once it serves) in $started.
start_copd() {{
  name=$1
  shift
  "{0}/copd" --listen "$addr:0" --key "$key" "$@" >"$dir/$name.log" 2>&1 </dev/null &
  pid=$!
  copds="$copds $pid"
  i=0
  started=
  until [ -n "$started" ]; do
    started=$(sed -n 's/.* serving [0-9]* channels on \([0-9.]*:[0-9]*\) .*/\1/p' "$dir/$name.log" | head -1)
    [ -n "$started" ] && break
    i=$((i + 1))
    if [ $i -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "copbench: the job's $name did not come up on $addr: $(tail -1 "$dir/$name.log")" >&2
      exit 1
    fi
    sleep 0.1
  done
}}
)SH", bindir) +
         cop_controllers_and_channels();
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

// job.sh in `dir`: the allocation's set-up for the backend, then the worker. Returns how
// the worker is started, for the result's context.
std::string SlurmLaunch::write_job_script(const fs::path& dir, const BackendSpec& spec, const std::vector<std::string>& argv) {
  std::string started_by;
  std::ofstream script(dir / "job.sh");
  script << "#!/bin/sh\n";
  if (spec.launcher == Launcher::mpirun) {
    script << "# mpirun inside the allocation: Open MPI takes the hosts from Slurm.\nexec";
    started_by = "mpirun inside the allocation (Open MPI reads it)";
  } else {
    script << pvm_in_allocation(dir, executable_dir());
    started_by = "a pvmd of the allocated hosts, started and halted by the job";
    if (spec.launcher == Launcher::cop_master) {
      script << cop_in_allocation(executable_dir());
      started_by += "; a job-private COP stack (copd, one copdrv per host), started and stopped by the job";
    }
  }
  for (const auto& a : argv) script << ' ' << shell_quote(a);
  script << "\n";
  script.close();
  ::chmod((dir / "job.sh").c_str(), 0755);
  return started_by;
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
  if (spec.launcher == Launcher::cop_master) {
    const std::string stack = first_line(read_if_any(dir / "cop-stack"));
    out.context["cop_stack"] = stack.empty() ? "job-private (the job ended before it was up)" : "job-private: " + stack;
  }
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
  const std::string submitted = slurm_command(sbatch, rc);
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
  if (spec.launcher == Launcher::cop_master || starts_pvm())
    sweep_hosts(job, nodes == end.fields.end() ? "" : nodes->second);
  fs::remove_all(dir, ec);
  return out;
}

// The job's script stops its daemons on every host when it ends (its EXIT trap), but
// Slurm kills a script whose trap outlives KillWait, and the copdrv and pvmd it started
// over ssh are not the job's processes. So after every job the runner, too, stops what
// the job may have left on its hosts: the job's copdrv (by its PID file, if its command
// line still names the job's directory) and the job's directories. Best effort: a host
// it cannot reach is passed over.
void SlurmLaunch::sweep_hosts(const std::string& job, const std::string& nodelist) {
  if (nodelist.empty()) return;
  int rc = 0;
  const std::string hosts = slurm_command({"scontrol", "show", "hostnames", nodelist}, rc);
  if (rc != 0) return;
  const std::string cop = "/tmp/copbench-slurm-cop." + job, pvm = "/tmp/copbench-slurm-pvm." + job;
  const std::string cmd = fmt::format(
      "p=$(cat {0}/copdrv.pid 2>/dev/null); "
      "if [ -n \"$p\" ] && tr '\\0' ' ' </proc/$p/cmdline 2>/dev/null | grep -q -- '--dir {0}'; then "
      "kill $p; i=0; while [ -e /proc/$p ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; kill -9 $p 2>/dev/null; fi; "
      "rm -rf {0} {1}; true",
      cop, pvm);
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
