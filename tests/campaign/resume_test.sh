#!/usr/bin/env bash
# resume_test.sh COPBENCH DATA WORK: a campaign killed after two points and resumed
# finishes without running a finished point again and without losing one.
set -euo pipefail
copbench=$1 data=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"

set +e
COPBENCH_CAMPAIGN_KILL_AFTER=2 "$copbench" campaign run "$data/tiny.yml" --results "$work" --quiet >"$work/first.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 137 ] || fail "the killed run exited $rc, expected 137 (SIGKILL)"
dir=$(ls -d "$work"/tiny-*)
[ "$(ls "$dir/raw" | wc -l)" -eq 2 ] || fail "expected 2 finished points, got: $(ls "$dir/raw")"
for f in "$dir"/raw/*.json; do /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))["benchmarks"]' "$f" || fail "$f is not whole"; done
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
[ "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["sessions"]))' "$dir/manifest.json")" -eq 2 ] || fail "manifest should list 2 sessions"

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
echo "ok: killed after 2 points, resumed: 2 ran, 2 kept untouched, 2 not offered"
