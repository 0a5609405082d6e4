#!/usr/bin/env bash
# cop_vs_pvm_test.sh COPBENCH SOURCE WORK: suite/campaigns/cop-vs-pvm.yml (what `copbench
# cop compare` measured, as campaign runs over the suite's backends) in CI-sized form.
# The file is valid with all its 27 points; then the same runs at 2 nodes, direct only,
# few repetitions (its `nodes`, `routes` and `defaults` lines cut; the two-level run keeps
# its 4 nodes) are run and reported, every exit code checked: the summary's barrier and
# reduce rows have cop, pvm, cop under each group lookup (`env:` COPBENCH_COP_GROUPS),
# cop's modelled time, pvm ÷ cop and the floor with cop ÷ floor; the two-level barrier
# has its column; each point's context says which group lookup its tasks used, and a
# point after an `env:` run has the runner's own environment back.
set -uo pipefail
copbench=$1 src=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
file=$src/suite/campaigns/cop-vs-pvm.yml

out=$("$copbench" campaign check "$file") || fail "campaign check: $out"
grep -q '^campaign cop-vs-pvm: 27 points' <<<"$out" || fail "expected 27 points: $out"
for id in emulation.cop-direct.n4.native barrier.pvm-normal-default.n4.native reduce.cop-normal.n2.native \
          barrier.cop-direct.n4.native.COPBENCH_COP_GROUPS=ask reduce.cop-direct.n2.native.COPBENCH_COP_GROUPS=default \
          barrier.cop-direct.n4.native.k2; do
  grep -qx "$id" <<<"$out" || fail "missing point $id"
done

rm -rf "$work" && mkdir -p "$work"
small=$work/cop-vs-pvm.yml
sed -e 's/^\( *nodes:\) \[2, 4\]$/\1 [2]/' -e 's/^\( *routes:\) \[direct, normal\]$/\1 [direct]/' \
    -e 's/^defaults: .*/defaults: {reps: 2, max_reps: 3, iters: 5, warmup: 1, timeout: 120}/' "$file" >"$small"
[ "$(grep -c 'nodes: \[2\]$' "$small")" = 5 ] || fail "the CI-sized file does not cut every run but the last to 2 nodes"
out=$("$copbench" campaign check "$small") || fail "campaign check of the CI-sized file: $out"
grep -q '^campaign cop-vs-pvm: 10 points' <<<"$out" || fail "expected 10 CI-sized points: $out"
# Nothing running is picked up: a private pvmd and COP stack per point.
env PVM_TMP= COP_STACK_DIR= COP_DRIVER_1= COP_USE_RUNNING= COPBENCH_COP_GROUPS= \
  "$copbench" campaign run "$small" --cluster local --results "$work/results" --quiet || fail "campaign run exited $?"
dir=$(ls -d "$work"/results/cop-vs-pvm-* 2>/dev/null | head -1)
[ -d "$dir" ] || fail "no results directory"
[ -z "$(ls "$dir/status" 2>/dev/null)" ] || fail "points did not run: $(cat "$dir"/status/*.json)"
"$copbench" report "$dir" --out "$work/report" --no-plots >/dev/null || fail "copbench report exited $?"

python3 - "$dir/raw" "$work/report/tables/summary.csv" <<'EOF' || exit 1
import csv, json, os, sys
raw, summary = sys.argv[1], sys.argv[2]
def ctx(point):
    return json.load(open(os.path.join(raw, point + ".json")))["context"]
# The lookup each point's tasks were told (rank 0's reading; the tasks get the same
# variable through PVM_EXPORT) and the runner's record of the run's env.
for point, groups, env in [("barrier.cop-direct.n2.native", "static", None),
                           ("barrier.cop-direct.n2.native.COPBENCH_COP_GROUPS=default", "default", "COPBENCH_COP_GROUPS=default"),
                           ("reduce.cop-direct.n2.native.COPBENCH_COP_GROUPS=ask", "ask", "COPBENCH_COP_GROUPS=ask"),
                           ("barrier.cop-direct.n4.native.k2", "static", None)]:  # after the env runs
    c = ctx(point)
    if c.get("cop_groups") != groups or c.get("campaign_env") != env:
        sys.exit(f"FAIL: {point}: cop_groups {c.get('cop_groups')!r}, campaign_env {c.get('campaign_env')!r}; "
                 f"expected {groups!r}, {env!r}")
rows = list(csv.DictReader(open(summary)))
def num(r, k):
    v = (r.get(k) or "").replace(" !", "").rstrip("x")
    try:
        return float(v)
    except ValueError:
        sys.exit(f"FAIL: summary: {k} is {r.get(k)!r} at {r['nodes']} nodes, {r['point']}")
cols = ["cop/direct µs", "cop/direct+COPBENCH_COP_GROUPS=default µs", "cop/direct+COPBENCH_COP_GROUPS=ask µs",
        "pvm/direct µs", "cop modelled µs", "pvm ÷ cop", "cop floor µs", "cop ÷ floor"]
for point in ("barrier/nodes:2", "reduce/double/size:8"):
    rs = [r for r in rows if r["point"] == point and r["nodes"] == "2"]
    if len(rs) != 1:
        sys.exit(f"FAIL: summary: {len(rs)} rows for {point} at 2 nodes")
    for k in cols:
        if not num(rs[0], k) > 0:
            sys.exit(f"FAIL: summary: {k} = {rs[0][k]} for {point}")
    print(point, {k: rs[0][k] for k in cols})
rs = [r for r in rows if r["point"] == "barrier/nodes:4" and r["nodes"] == "4"]
if len(rs) != 1 or not num(rs[0], "cop/direct+2level µs") > 0:
    sys.exit(f"FAIL: summary: no two-level barrier at 4 nodes: {rs}")
EOF
echo "cop-vs-pvm.yml: 27 points; CI-sized (10 points) run and reported with cop, pvm, each group lookup, modelled, floor and two levels"
