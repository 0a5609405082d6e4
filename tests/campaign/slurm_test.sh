#!/usr/bin/env bash
# slurm_test.sh COPBENCH CAMPAIGN WORK [INVENTORY]: a campaign through --launcher slurm.
#  - its first job is held PENDING (Reason=Resources) and cancelled with scancel: that
#    point is recorded failed with Slurm's words (CANCELLED), nothing is lost;
#  - every other point (mpi, armci, pvm, cop barrier) is done as a Slurm job: its
#    result's context says launcher slurm, its job id and who started the ranks (mpirun
#    inside the allocation; for pvm and cop a pvmd of the allocated hosts; for cop also
#    a job-private COP stack: copd at an address of the COP network, channels 1..n on
#    the job's n hosts), and the manifest and the log name the same job ids (cop's echo
#    is cop_write & cop_read); no job's files, pvmd, copd or copdrv stay behind on any host;
#  - a cop job cancelled while it runs (scancel) fails with Slurm's reason and leaves
#    no copd, copdrv or directory of its stack on any host;
#  - --resume --launcher slurm runs the cancelled point again and completes it;
#  - a cop point with per_controller 2 runs on a job-private stack of two level-1 copd
#    under a level-2 copd (its context says so), and leaves nothing behind;
#  - the same campaign without --launcher slurm gives the same points, in kind: the same
#    benchmarks in each result, every sample verified.
# It runs against a real Slurm (the emulated cluster's, from the cluster test): a job
# occupying every node of the partition holds the first job PENDING.
set -euo pipefail
copbench=$1 campaign=$2 work=$3 inventory=${4:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/../lib/wait.sh"  # wait_until TIMEOUT_S COMMAND...
# Waits for the campaign runner started in the background; its exit status in rc.
wait_runner() {
  set +e
  wait "$runner"
  rc=$?
  runner=
  set -e
}
rm -rf "$work" && mkdir -p "$work"
cluster=()
[ -z "$inventory" ] || cluster=(--cluster "$inventory")
# The job-private copd listens on the COP network of the inventory.
[ -z "$inventory" ] || export COPBENCH_COP_SUBNET=${COPBENCH_COP_SUBNET:-$(sed -n 's/^ *copbench_cop_subnet: *//p' "$inventory" | head -1)}
[ -n "${COPBENCH_COP_SUBNET:-}" ] || fail "no COP network (COPBENCH_COP_SUBNET, or copbench_cop_subnet in the inventory)"
first=barrier.mpi.n2.native
held=copbench-$first

blocker=
cleanup() {
  [ -z "$blocker" ] || scancel "$blocker" 2>/dev/null || true
  [ -z "${runner:-}" ] || kill "$runner" 2>/dev/null || true
}
trap cleanup EXIT
nodes=$(sinfo -h -o %D | awk '{s += $1} END {print s}')
blocker=$(sbatch --parsable --nodes="$nodes" --exclusive --job-name=copbench-test-blocker --time=5 --output=/dev/null --wrap 'sleep 300')
blocker=${blocker%%;*}

"$copbench" campaign run "$campaign" "${cluster[@]}" --launcher slurm --results "$work" --quiet >"$work/first.out" 2>&1 &
runner=$!
# Wait for the condition (the held job pending for resources), bounded; or the runner gone.
job=
held_pending() {
  local line
  line=$(squeue -h -n "$held" -o '%i %T %r' | head -1)
  if [[ $line == *" PENDING "* ]]; then job=${line%% *}; return 0; fi
  ! kill -0 "$runner" 2>/dev/null
}
wait_until 60 held_pending || true
[ -n "$job" ] || fail "no pending job $held appeared: $(cat "$work/first.out")"
scancel "$job"
[ -z "$blocker" ] || { scancel "$blocker"; blocker=; }
wait_runner
[ "$rc" -ne 0 ] || fail "a campaign with a cancelled job and refused points exited 0"
dir=$(ls -d "$work"/slurm-*)
py() { /usr/bin/python3 - "$dir" "$@"; }

py "$job" <<'PY' || fail "first run: see above"
import json, os, sys
d, job = sys.argv[1], sys.argv[2]
m = json.load(open(f"{d}/manifest.json"))
st = json.load(open(f"{d}/status/barrier.mpi.n2.native.json"))
assert st["status"] == "failed", st
assert st["reason"].startswith(f"Slurm job {job} CANCELLED"), st["reason"]
assert m["jobs"]["barrier.mpi.n2.native"] == [job], m.get("jobs")
assert m["sessions"][0]["launcher"] == "slurm", m["sessions"]
log = open(f"{d}/campaign.log").read()
done = sorted(f[:-5] for f in os.listdir(f"{d}/raw"))
want = sorted(f"{b}.{k}.n{n}.native" for b in ("barrier", "echo") for k in ("mpi", "armci", "pvm-direct-raw")
              for n in (2, 3) if (b, k, n) != ("barrier", "mpi", 2))
cop = sorted(p for p in done if ".cop-" in p)
assert [(p.split(".")[0], p.split(".")[2]) for p in cop] == [("barrier", "n2"), ("barrier", "n3"), ("echo", "n2"),
                                                              ("echo", "n3")], cop
assert sorted(set(done) - set(cop)) == want, (done, want)
subnet = os.environ["COPBENCH_COP_SUBNET"]
for p in done:
    r = json.load(open(f"{d}/raw/{p}.json"))
    c = r["context"]
    by = "a pvmd of the allocated hosts" if ".pvm-" in p or ".cop-" in p else "mpirun inside the allocation"
    assert c["launcher"] == "slurm" and c["slurm_started_by"].startswith(by), c
    assert m["jobs"][p] == [c["slurm_job"]], (p, m["jobs"].get(p), c["slurm_job"])
    assert f"slurm job {c['slurm_job']}: point {p}" in log, p
    if ".cop" in p:
        import ipaddress, re
        n = int(p.split(".")[2][1:])
        s = re.fullmatch(r"job-private: copd ([0-9.]+):([0-9]+), copdrv channels 1\.\.(\d+) on (.*)", c["cop_stack"])
        assert s and ipaddress.ip_address(s[1]) in ipaddress.ip_network(subnet), (c, subnet)
        assert int(s[3]) == n and len(s[4].split()) == n, c
        assert "job-private COP stack" in c["slurm_started_by"], c
        for x in r["benchmarks"]:
            assert x.get("error_occurred") is not True, (p, x)
for p in os.listdir(f"{d}/status"):
    s = json.load(open(f"{d}/status/{p}"))
    assert p == "barrier.mpi.n2.native.json", s
print("first run: cancelled point failed with Slurm's reason; 15 mpi/armci/pvm/cop points done as Slurm jobs")
PY

set +e
"$copbench" campaign run "$campaign" "${cluster[@]}" --launcher slurm --resume "$dir" --quiet >"$work/second.out" 2>&1
set -e
grep -q "16 points: 15 already done, 1 ran, 0 not offered, 0 skipped, 0 failed" "$work/second.out" ||
  fail "resume: $(cat "$work/second.out")"
py "$job" <<'PY' || fail "resume: see above"
import json, os, sys
d, job = sys.argv[1], sys.argv[2]
m = json.load(open(f"{d}/manifest.json"))
r = json.load(open(f"{d}/raw/barrier.mpi.n2.native.json"))
jobs = m["jobs"]["barrier.mpi.n2.native"]
assert len(jobs) == 2 and jobs[0] == job and r["context"]["slurm_job"] == jobs[1], (jobs, r["context"])
assert not os.path.exists(f"{d}/status/barrier.mpi.n2.native.json")
assert not [f for f in os.listdir(f"{d}/jobs")], os.listdir(f"{d}/jobs")  # the jobs' files are removed
print("resume: the cancelled point ran again as job", jobs[1])
PY
# Nothing of a job stays on any host: no pvmd or COP stack directory (each host has its
# own /tmp), no job's copd (--listen ADDR:0) or copdrv (--dir /tmp/copbench-slurm-cop.*).
leftovers() {
  local h
  for h in $(sinfo -h -N -o %N | sort -u); do
    ssh -o BatchMode=yes "$h" 'ls -d /tmp/copbench-slurm-* 2>/dev/null; ps -eo pid,args | grep -e "[c]opdrv .*copbench-slurm-cop" -e "[c]opd --listen [0-9.]*:0 "; true' </dev/null |
      sed "s/^/$h: /"
  done
}
left=$(leftovers)
[ -z "$left" ] || fail "a job's daemons or directories are left: $left"

# A cop job cancelled while it runs (its COP stack up): failed with Slurm's reason,
# and its copd, copdrv and directories are gone from every host.
cat >"$work/cancel.yml" <<'YML'
name: cancel
defaults: {reps: 1, max_reps: 1, iters: 2000000, warmup: 1, timeout: 240}
runs:
  - {benchmark: barrier, backends: [cop], routes: [direct], encoding: raw, nodes: [3]}
YML
"$copbench" campaign run "$work/cancel.yml" "${cluster[@]}" --launcher slurm --results "$work/cancel" --quiet >"$work/cancel.out" 2>&1 &
runner=$!
up=
stack_up_or_runner_gone() {
  up=$(ls "$work"/cancel/cancel-*/jobs/*/cop-stack 2>/dev/null | head -1 || true)
  [ -n "$up" ] || ! kill -0 "$runner" 2>/dev/null
}
wait_until 120 stack_up_or_runner_gone || true
[ -n "$up" ] || fail "the cop job's stack never came up: $(cat "$work/cancel.out")"
job=$(squeue -h -n copbench-barrier.cop-direct-raw.n3.native -o %i | head -1)
[ -n "$job" ] || job=$(squeue -h -o '%i %j' | awk '$2 ~ /cop/ {print $1; exit}')
[ -n "$job" ] || fail "the running cop job is not in the queue: $(squeue -h -o '%i %j %T')"
scancel "$job"
wait_runner
[ "$rc" -ne 0 ] || fail "a campaign whose cop job was cancelled exited 0"
/usr/bin/python3 - "$work"/cancel/cancel-* "$job" <<'PY' || fail "cancelled cop job: see above"
import json, os, sys
d, job = sys.argv[1], sys.argv[2]
st = [json.load(open(f"{d}/status/{f}")) for f in os.listdir(f"{d}/status")]
assert len(st) == 1 and st[0]["status"] == "failed", st
assert st[0]["reason"].startswith(f"Slurm job {job} CANCELLED"), st[0]["reason"]
print("cancelled cop job", job, "failed:", st[0]["reason"])
PY
# The job's script stops them on SIGTERM (within Slurm's KillWait): wait for that, bounded.
nothing_left() { left=$(leftovers); [ -z "$left" ]; }
WAIT_EVERY_S=0.2 wait_until 60 nothing_left || fail "the cancelled cop job left daemons or directories: $left"

# Two levels in a job (seed 000 ch. IV, Figure 5): per_controller 2 on 3 hosts, two
# level-1 copd (channels 1-2 and 1) under a level-2 copd, all private to the job; the
# barrier's samples verified, nothing left behind.
cat >"$work/two-level.yml" <<'YML'
name: two-level
defaults: {reps: 2, max_reps: 3, iters: 3, warmup: 1, timeout: 120}
runs:
  - {benchmark: barrier, backends: [cop], routes: [direct], encoding: raw, nodes: [3], per_controller: 2}
YML
"$copbench" campaign run "$work/two-level.yml" "${cluster[@]}" --launcher slurm --results "$work/two-level" --quiet \
  >"$work/two-level.out" 2>&1 || fail "two levels in a Slurm job: $(cat "$work/two-level.out")"
/usr/bin/python3 - "$work"/two-level/two-level-* <<'PY' || fail "two levels in a Slurm job: see above"
import ipaddress, json, os, re, sys
d = sys.argv[1]
subnet = ipaddress.ip_network(os.environ["COPBENCH_COP_SUBNET"])
r = json.load(open(f"{d}/raw/barrier.cop-direct.n3.native.k2.json"))
c = r["context"]
s = re.fullmatch(r"job-private: copd-l2 ([0-9.]+):\d+, level-1 copd ([0-9.]+):\d+ ([0-9.]+):\d+ of 2 channels, copdrv on (.*)",
                 c["cop_stack"])
assert s and all(ipaddress.ip_address(s[i]) in subnet for i in (1, 2, 3)) and len(s[4].split()) == 3, c
assert c["cop_per_controller"] == 2 and c["launcher"] == "slurm", c
assert r["benchmarks"] and all(x.get("error_occurred") is not True for x in r["benchmarks"]), r["benchmarks"]
print("two levels in a Slurm job:", c["cop_stack"])
PY
left=$(leftovers)
[ -z "$left" ] || fail "the two-level cop job left daemons or directories: $left"

# The same campaign without Slurm: the same points, in kind.
"$copbench" campaign run "$campaign" "${cluster[@]}" --results "$work/direct" --quiet >"$work/direct.out" 2>&1 ||
  fail "without --launcher slurm: $(cat "$work/direct.out")"
/usr/bin/python3 - "$dir" "$work"/direct/slurm-* <<'PY' || fail "kind: see above"
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
n = 0
for p in sorted(os.listdir(f"{a}/raw")):
    ra, rb = json.load(open(f"{a}/raw/{p}")), json.load(open(f"{b}/raw/{p}"))
    assert rb["context"].get("launcher") != "slurm"
    na = sorted(x["name"] for x in ra["benchmarks"])
    nb = sorted(x["name"] for x in rb["benchmarks"])
    assert na == nb and na, (p, na, nb)
    for x in ra["benchmarks"] + rb["benchmarks"]:
        assert x.get("error_occurred") is not True, (p, x)
    n += 1
assert len(os.listdir(f"{b}/raw")) == 16, os.listdir(f"{b}/raw")  # every point
print(f"in kind: {n} points through Slurm match the same points without it; all 16 points run without it")
PY
echo "ok"
