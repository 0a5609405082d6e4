#!/usr/bin/env bash
# reference_run_test.sh COPBENCH WORK: a campaign naming an earlier run with `reference:`.
# The run records the resolved directory and the tolerance in its manifest, and its report
# compares every point with the earlier run's (tables/reference-campaign.csv), one row per
# point of the two, each with a verdict.
set -euo pipefail
copbench=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
cat >"$work/old.yml" <<'YAML'
name: ref-old
defaults: {reps: 2, max_reps: 3, iters: 3, warmup: 1, timeout: 120}
runs:
  - {benchmark: barrier, backends: [mpi], nodes: 1-2}
YAML
"$copbench" campaign run "$work/old.yml" --results "$work/old" --quiet >"$work/old.out" 2>&1 ||
  fail "the reference run failed: $(cat "$work/old.out")"
old=$(sed -n 's/^results: //p' "$work/old.out")
[ -d "$old" ] || fail "no results directory in: $(cat "$work/old.out")"
sed -e 's/^name: ref-old/name: ref-new/' "$work/old.yml" >"$work/new.yml"
printf 'reference: %s\ntolerance: 25%%\n' "${old#"$work"/}" >>"$work/new.yml"
"$copbench" campaign run "$work/new.yml" --results "$work/new" --quiet >"$work/new.out" 2>&1 ||
  fail "the run naming a reference failed: $(cat "$work/new.out")"
new=$(sed -n 's/^results: //p' "$work/new.out")
[ -d "$new" ] || fail "no results directory in: $(cat "$work/new.out")"
python3 "$(dirname "$0")/../lib/checks.py" reference-manifest "$new" "$old"
"$copbench" report "$new" >"$work/report.out" 2>&1 || fail "report failed: $(cat "$work/report.out")"
table="$new/tables/reference-campaign.csv"
[ -f "$table" ] || fail "no $table: $(cat "$work/report.out")"
python3 "$(dirname "$0")/../lib/checks.py" reference-verdicts "$table"
grep -q "reference" "$new/index.md" || fail "index.md does not mention the reference campaign"
echo "ok"
