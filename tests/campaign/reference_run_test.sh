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
python3 - "$new" "$old" <<'PY'
import json, os, sys
new, old = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(new, "manifest.json")))
assert m.get("reference_campaign") == old, (m.get("reference_campaign"), old)
assert m.get("tolerance") == "25%", m.get("tolerance")
PY
"$copbench" report "$new" >"$work/report.out" 2>&1 || fail "report failed: $(cat "$work/report.out")"
table="$new/tables/reference-campaign.csv"
[ -f "$table" ] || fail "no $table: $(cat "$work/report.out")"
python3 - "$table" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 2, rows
verdicts = {"faster", "slower", "same"}
for r in rows:
    v = [x for x in r.values() if x in verdicts]
    assert v, r
print(f"{len(rows)} points compared with the reference run")
PY
grep -q "reference" "$new/index.md" || fail "index.md does not mention the reference campaign"
echo "ok"
