#!/usr/bin/env bash
# cleanup_test.sh COPBENCH DATA WORK term|kill: a campaign whose runner is killed while
# a pvm point runs (private pvmd, pvmgs, pvm worker and tasks).
#   term: SIGTERM; the runner itself leaves no process of its run and no temporary
#         directory; the finished point is kept, the interrupted one is pending.
#   kill: SIGKILL leaves them behind; the next `--resume` of the directory stops them,
#         removes the directories, says so in one log line and finishes the campaign.
# A run's processes are those whose environment carries its COPBENCH_CAMPAIGN_RUN tag
# (the token in its runner.json); every wait polls a condition, bounded.
set -euo pipefail
copbench=$1 data=$2 work=$3 mode=$4
. "$(dirname "$0")/run_lib.sh"
rm -rf "$work" && mkdir -p "$work/nopvm"
# A short temporary directory: pvmd's socket path must fit a sockaddr_un.
tmp=$(mktemp -d /tmp/copbench-cleanup-test.XXXXXX)
export TMPDIR=$tmp PVM_TMP=$work/nopvm COPBENCH_STATE_DIR=$work/state
runner= tokens=()

# On any exit: nothing of ours stays, whatever the test found.
cleanup() {
  set +e
  [ -n "$runner" ] && kill -KILL "$runner" 2>/dev/null
  if [ "${#tokens[@]}" -gt 0 ]; then
    tagged "${tokens[@]}" | while read -r p _; do kill -KILL "$p" 2>/dev/null; done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
pvm_point=barrier.pvm-normal-default.n2.native mpi_point=barrier.mpi.n1.native
pvm_running() { compgen -G "$work/res/cleanup-*/status/$pvm_point.json" >/dev/null && grep -q '"running"' "$work"/res/cleanup-*/status/$pvm_point.json; }
has() { tagged "${tokens[@]}" | grep " $1" >/dev/null; }  # not -q: pipefail and SIGPIPE
temp_dirs() { find "$tmp" -mindepth 1 -maxdepth 1 -name 'copbench-*' ! -name 'copbench-campaign-runs.*' | sort; }

"$copbench" campaign run "$data/cleanup-long.yml" --results "$work/res" --quiet >"$work/first.out" 2>&1 &
runner=$!
wait_until 120 pvm_running || fail "the pvm point never started: $(cat "$work/first.out")"
dir=$(ls -d "$work"/res/cleanup-*)
[ -f "$dir/runner.json" ] || fail "the run wrote no runner.json"
tokens=("$(token_of "$dir/runner.json")")
wait_until 120 eval 'has pvmd && has pvmgs && has copbench-worke' || fail "the run's pvmd, pvmgs and pvm worker never all ran"
[ -n "$(temp_dirs)" ] || fail "no temporary directory of the run found in $tmp"
echo "running: $(tagged "${tokens[@]}" | awk '{print $2}' | sort | uniq -c | xargs)"

# A --resume of the directory while its runner is alive is refused and stops nothing.
set +e
"$copbench" campaign run "$data/cleanup.yml" --resume "$dir" --quiet >"$work/busy.out" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a --resume of a directory whose run is alive was accepted"
grep -q "still running in that directory" "$work/busy.out" || fail "unclear refusal: $(cat "$work/busy.out")"
has pvmd && kill -0 "$runner" || fail "the refused --resume stopped something of the live run"

if [ "$mode" = term ]; then
  kill -TERM "$runner"
  set +e; wait "$runner"; rc=$?; set -e
  runner=
  [ "$rc" -ne 0 ] || fail "the interrupted run exited 0"
  left=$(tagged "${tokens[@]}")
  [ -z "$left" ] || fail "processes of the run left after SIGTERM: $left"
  [ -z "$(temp_dirs)" ] || fail "temporary directories left after SIGTERM: $(temp_dirs)"
  [ ! -e "$dir/runner.json" ] || fail "runner.json left after a clean stop"
  [ -z "$(ls -A "$work/state" 2>/dev/null)" ] || fail "a run record left in the state directory"
  checks whole "$dir/raw/$mpi_point.json" ||
    fail "the finished point's result is not kept whole"
  grep -q '"pending"' "$dir/status/$pvm_point.json" || fail "the interrupted point is not pending: $(cat "$dir/status/$pvm_point.json")"
  [ ! -e "$dir/raw/$pvm_point.json" ] || fail "the interrupted point has a result"
  grep -q "interrupted after 1 of 2 points: stopped [0-9]* process(es) of this run" "$dir/campaign.log" ||
    fail "the log does not say what was stopped: $(cat "$dir/campaign.log")"
  echo "ok: SIGTERM: no process or temporary directory of the run left; finished point kept, interrupted one pending"
  exit 0
fi

kill -KILL "$runner"
set +e; wait "$runner"; set -e
runner=
# What a SIGKILL leaves: the private pvmd (and what it runs), the temporary directories.
has pvmd || fail "expected the killed run's pvmd to be left running (nothing to clean up?)"
left_dirs=$(temp_dirs)
[ -n "$left_dirs" ] || fail "expected the killed run's temporary directories to be left"
[ -f "$dir/runner.json" ] || fail "the killed run left no runner.json"

"$copbench" campaign run "$data/cleanup.yml" --resume "$dir" --quiet >"$work/second.out" 2>&1 ||
  fail "the resume failed: $(cat "$work/second.out")"
grep -q "cleaned up after killed run pid [0-9]* ($dir): stopped [1-9][0-9]* leftover process(es), removed [1-9][0-9]* temporary director" \
  "$dir/campaign.log" || fail "the resume's log does not say what it cleaned: $(cat "$dir/campaign.log")"
[ "$(grep -c "cleaned up after killed run" "$dir/campaign.log")" -eq 1 ] || fail "expected one cleanup line"
left=$(tagged "${tokens[@]}")
[ -z "$left" ] || fail "processes of the killed run left after the resume: $left"
for d in $left_dirs; do [ ! -e "$d" ] || fail "$d left after the resume"; done
[ -z "$(temp_dirs)" ] || fail "temporary directories left after the resume: $(temp_dirs)"
grep -q "2 points: 1 already done, 1 ran, 0 not offered, 0 skipped, 0 failed" "$work/second.out" ||
  fail "resume summary: $(cat "$work/second.out")"
[ ! -e "$dir/runner.json" ] && [ -z "$(ls -A "$work/state" 2>/dev/null)" ] || fail "a run record left after the resume"
echo "ok: SIGKILL left $(echo "$left_dirs" | wc -l) directories and the pvmd; the resume cleaned them and finished"
