#!/usr/bin/env bash
# resume_test.sh COPBENCH DATA WORK: a campaign killed (SIGKILL, from outside) while its
# third point runs, two points finished, and resumed: it finishes without running a
# finished point again and without losing one. The first run uses tiny-long.yml (same
# name and points as tiny.yml; its third point runs long), the resumes tiny.yml.
set -euo pipefail
copbench=$1 data=$2 work=$3
. "$(dirname "$0")/run_lib.sh"
rm -rf "$work" && mkdir -p "$work"
export COPBENCH_STATE_DIR=$work/state
runner= token=
# On any exit: the runner and whatever carries its run's tag are stopped.
cleanup() {
  set +e
  [ -n "$runner" ] && kill -KILL "$runner" 2>/dev/null
  [ -n "$token" ] && tagged "$token" | while read -r p _; do kill -KILL "$p" 2>/dev/null; done
}
trap cleanup EXIT
long=barrier.mpi.n3.native
# The long point runs: its status says so and the run's record names its worker.
long_point_running() {
  local d
  d=$(ls -d "$work"/tiny-* 2>/dev/null) || return 1
  grep -q '"running"' "$d/status/$long.json" 2>/dev/null &&
    [ "$(checks field "$d/runner.json" worker_pid 2>/dev/null)" -gt 0 ] 2>/dev/null
}

"$copbench" campaign run "$data/tiny-long.yml" --results "$work" --quiet >"$work/first.out" 2>&1 &
runner=$!
wait_until 120 long_point_running || fail "the third point never ran: $(cat "$work/first.out")"
token=$(token_of "$(ls -d "$work"/tiny-*)/runner.json")
kill -KILL "$runner"
set +e
wait "$runner"
rc=$?
set -e
runner=
[ "$rc" -eq 137 ] || fail "the killed run exited $rc, expected 137 (SIGKILL)"
dir=$(ls -d "$work"/tiny-*)
[ "$(ls "$dir/raw" | wc -l)" -eq 2 ] || fail "expected 2 finished points, got: $(ls "$dir/raw")"
checks whole "$dir"/raw/*.json || fail "a finished point's result is not whole"
ls -la "$dir/raw" | grep -q '\.tmp' && fail "a temporary file was left behind"
before=$(cd "$dir/raw" && stat -c '%n %i %Y' ./*.json && md5sum ./*.json)

"$copbench" campaign run "$data/tiny.yml" --resume "$dir" --quiet >"$work/second.out" 2>&1 || fail "resume failed: $(cat "$work/second.out")"
grep -q "6 points: 2 already done, 2 ran, 2 not offered, 0 skipped, 0 failed" "$work/second.out" || fail "resume summary: $(cat "$work/second.out")"
after=$(cd "$dir/raw" && stat -c '%n %i %Y' $(cd "$dir/raw" && echo "$before" | awk 'NR<=2{print $1}') && md5sum $(echo "$before" | awk 'NR<=2{print $1}'))
[ "$before" = "$after" ] || fail "a finished point was rewritten: before $before after $after"
[ "$(ls "$dir/raw" | wc -l)" -eq 4 ] || fail "expected 4 finished points after resume"
[ "$(ls "$dir/status" | wc -l)" -eq 2 ] || fail "expected 2 not-offered points (armci multicast)"
grep -q "not offered" "$dir/status/multicast.armci.n2.native.json" || fail "armci multicast not recorded as not offered"
grep -q "2 points already done, not run again" "$dir/campaign.log" || fail "log does not say what was skipped"
grep -q "cleaned up after killed run pid [0-9]* ($dir): stopped [1-9][0-9]* leftover process(es).*, point $long pending" "$dir/campaign.log" ||
  fail "the resume does not say it stopped the killed run's worker: $(cat "$dir/campaign.log")"
left=$(tagged "$token")
[ -z "$left" ] || fail "processes of the killed run left after the resume: $left"
[ "$(checks length "$dir/manifest.json" sessions)" -eq 2 ] || fail "manifest should list 2 sessions"

"$copbench" campaign run "$data/tiny.yml" --resume "$dir" --quiet >"$work/third.out" 2>&1 || fail "second resume failed"
grep -q "4 already done, 0 ran" "$work/third.out" || fail "second resume ran something: $(cat "$work/third.out")"

# A resume with another campaign's file is refused and changes nothing.
snapshot=$(cd "$dir" && find . -type f -newer manifest.json | sort; md5sum raw/*.json manifest.json)
set +e
"$copbench" campaign run "$data/sample.yml" --resume "$dir" >"$work/wrong.out" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "resume with another campaign was accepted"
grep -q "holds campaign 'tiny', not 'sample'" "$work/wrong.out" || fail "unclear refusal: $(cat "$work/wrong.out")"
[ "$snapshot" = "$(cd "$dir" && find . -type f -newer manifest.json | sort; md5sum raw/*.json manifest.json)" ] || fail "a refused resume changed the directory"
echo "ok: killed while its third point ran, resumed: its worker stopped, 2 ran, 2 kept untouched, 2 not offered"
