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
# checks COMMAND ARGS...: tests/lib/checks.py with Debian's python3 (/usr/bin), as before.
checks() { /usr/bin/python3 "$(dirname "$0")/../lib/checks.py" "$@"; }

checks slurm-first-run "$dir" "$job" || fail "first run: see above"

set +e
"$copbench" campaign run "$campaign" "${cluster[@]}" --launcher slurm --resume "$dir" --quiet >"$work/second.out" 2>&1
set -e
grep -q "16 points: 15 already done, 1 ran, 0 not offered, 0 skipped, 0 failed" "$work/second.out" ||
  fail "resume: $(cat "$work/second.out")"
checks slurm-resume "$dir" "$job" || fail "resume: see above"
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
checks slurm-cancelled "$work"/cancel/cancel-* "$job" || fail "cancelled cop job: see above"
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
checks slurm-two-level "$work"/two-level/two-level-* || fail "two levels in a Slurm job: see above"
left=$(leftovers)
[ -z "$left" ] || fail "the two-level cop job left daemons or directories: $left"

# The same campaign without Slurm: the same points, in kind.
"$copbench" campaign run "$campaign" "${cluster[@]}" --results "$work/direct" --quiet >"$work/direct.out" 2>&1 ||
  fail "without --launcher slurm: $(cat "$work/direct.out")"
checks slurm-in-kind "$dir" "$work"/direct/slurm-* || fail "kind: see above"
echo "ok"
