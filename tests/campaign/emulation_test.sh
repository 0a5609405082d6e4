#!/usr/bin/env bash
# emulation_test.sh COPBENCH SOURCE WORK: suite/campaigns/emulation.yml in CI-sized form.
# The file is valid at its 2-15 nodes (every point); then the same runs at 2 and 4 nodes,
# cop alone, few repetitions (its `nodes`, `backends` and `defaults` lines cut) are run
# and reported: the emulation table has every operation at both node counts with cop,
# floor and cop ÷ floor above 0 and both CPU figures; the summary has the floor beside
# cop; the plots exist (the cop ÷ floor plot, a floor curve in the barrier plot).
set -uo pipefail
copbench=$1 src=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
file=$src/suite/campaigns/emulation.yml

out=$("$copbench" campaign check "$file" --nodes 15) || fail "campaign check --nodes 15: $out"
for n in 2 4 8 15; do
  grep -qx "emulation.cop-direct.n$n.native" <<<"$out" || fail "missing point emulation.cop-direct.n$n.native"
  for b in barrier reduce broadcast; do
    for m in cop-direct pvm-direct-raw mpi; do
      grep -qx "$b.$m.n$n.native" <<<"$out" || fail "missing point $b.$m.n$n.native"
    done
  done
done

rm -rf "$work" && mkdir -p "$work"
small=$work/emulation.yml
sed -e 's/^\( *nodes:\) \[2, 4, 8, 15\]$/\1 [2, 4]/' -e 's/^\( *backends:\) \[cop, pvm, mpi\]$/\1 [cop]/' \
    -e 's/^defaults: .*/defaults: {reps: 2, max_reps: 3, iters: 5, warmup: 1, timeout: 120}/' "$file" >"$small"
[ "$(grep -c 'nodes: \[2, 4\]$' "$small")" = 4 ] || fail "the CI-sized file does not cut every run to 2 and 4 nodes"
# Nothing running is picked up: a private pvmd and COP stack per point. The tag finds
# what the run started (rank 0's floor controller inherits it).
tag=copbench-emulation-test-$$-$RANDOM
env PVM_TMP= COP_STACK_DIR= COP_DRIVER_1= COP_USE_RUNNING= COPBENCH_EMULATION_TEST=$tag \
  "$copbench" campaign run "$small" --cluster local --results "$work/results" --quiet || {
  # What failed, for a CI log that keeps only this test's output.
  for d in "$work"/results/emulation-*; do tail -n 60 "$d/campaign.log"; cat "$d"/status/*.json 2>/dev/null; done
  fail "campaign run failed"
}
left=$(grep -lzxF "COPBENCH_EMULATION_TEST=$tag" /proc/[0-9]*/environ 2>/dev/null | while read -r e; do
  p=${e#/proc/}; p=${p%/environ}
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = copbench-cop-fl ] && echo "$p"
done)
[ -z "$left" ] || fail "floor controllers left running after the run (stopped by PID at each point's end): $left"
dir=$(ls -d "$work"/results/emulation-* 2>/dev/null | head -1)
[ -d "$dir" ] || fail "no results directory"
[ -z "$(ls "$dir/status" 2>/dev/null)" ] || fail "points did not run: $(cat "$dir"/status/*.json)"
"$copbench" report "$dir" --out "$work/report" >/dev/null || fail "copbench report failed"

table=$work/report/tables/emulation.csv
[ -f "$table" ] || fail "no tables/emulation.csv"
python3 "$(dirname "$0")/../lib/checks.py" emulation-report "$table" "$work/report/tables/summary.csv" || exit 1
for p in emulation-cop-over-floor barrier-vs-nodes emulation-barrier-vs-nodes; do
  [ -s "$work/report/plots/$p.png" ] || fail "no plot $p.png"
done
grep -q '^# cop/direct floor$' "$work/report/plots/barrier-vs-nodes.dat" || fail "the barrier plot has no floor curve"
grep -q 'tables/emulation' "$work/report/index.md" || fail "index.md does not list the emulation table"
echo "emulation.yml: 40 points at 2-15 nodes; at 2 and 4 nodes every operation has cop, floor, cop ÷ floor and both CPU figures"
