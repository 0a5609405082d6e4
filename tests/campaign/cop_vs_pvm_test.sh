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

python3 "$(dirname "$0")/../lib/checks.py" cop-vs-pvm-report "$dir/raw" "$work/report/tables/summary.csv" || exit 1
echo "cop-vs-pvm.yml: 27 points; CI-sized (10 points) run and reported with cop, pvm, each group lookup, modelled, floor and two levels"
