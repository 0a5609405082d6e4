#!/usr/bin/env bash
# tasks_test.sh COPBENCH DATA WORK: a campaign with tasks_per_node [1, 2] (data/tasks.yml)
# runs one point per count (ids of one task per node as always, .t2 otherwise), resumes
# without redoing any, and its report keeps the counts apart: on-host and inter-host echo
# rows with their tasks per node, and curves that say placement and T.
set -euo pipefail
copbench=$1 data=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
ids=$("$copbench" campaign check "$data/tasks.yml")
for id in echo.mpi.n2.native echo.mpi.n2.native.t2 barrier.mpi.n2.native barrier.mpi.n2.native.t2; do
  printf '%s\n' "$ids" | grep -qx "$id" || fail "campaign check does not list point $id: $ids"
done
"$copbench" campaign run "$data/tasks.yml" --results "$work" --quiet >"$work/run.out" 2>&1 || fail "campaign failed: $(cat "$work/run.out")"
grep -q "6 points: 0 already done, 6 ran, 0 not offered, 0 skipped, 0 failed" "$work/run.out" || fail "unexpected: $(cat "$work/run.out")"
dir=$(ls -d "$work"/tasks-*)
raw=$dir/raw/echo.mpi.n2.native.t2.json
grep -q '"tasks_per_node": "2"' "$raw" || fail "the T=2 point did not run with 2 tasks per node"
grep -q '"run_name": "echo/on-host/size:1024"' "$raw" || fail "no on-host echo in $raw"
grep -q '"run_name": "echo/inter-host/size:1024"' "$raw" || fail "no inter-host echo in $raw"
grep -q '"tasks_per_node": "1"' "$dir/raw/echo.mpi.n2.native.json" || fail "the T=1 point did not run with 1 task per node"
grep -q '"tasks_per_node": "2"' "$dir"/raw/echo.cop*.n2.native.t2.json || fail "cop's T=2 echo did not run with 2 tasks per node"
grep -q '"run_name": "echo/on-host/size:1024"' "$dir"/raw/echo.cop*.n2.native.t2.json || fail "no on-host echo on cop"

# Resumed: every point is kept by its id.
"$copbench" campaign run "$data/tasks.yml" --resume "$dir" --quiet >"$work/resume.out" 2>&1 || fail "resume failed: $(cat "$work/resume.out")"
grep -q "6 points: 6 already done, 0 ran" "$work/resume.out" || fail "resume redid points: $(cat "$work/resume.out")"

"$copbench" report "$dir" --out "$work/a" >"$work/report.out" 2>&1 || fail "report failed: $(cat "$work/report.out")"
"$copbench" report "$dir" --out "$work/b" >/dev/null 2>&1 || fail "second report failed"
diff -r -x '*.png' "$work/a" "$work/b" || fail "a second report differs from the first"
summary=$work/a/tables/summary.md
grep -q '^| benchmark | point | nodes | tasks per node |' "$summary" || fail "summary has no tasks per node column: $(head -8 "$summary")"
expect_row() { grep -qE "^\| $1" "$summary" || fail "no row '$1' in the summary: $(cat "$summary")"; }
expect_row 'echo \| echo/size:1024 \| 2 \| 1 \| [^|]+ \| [0-9.]+'
expect_row 'echo \| echo/on-host/size:1024 \| 2 \| 2 \| [^|]+ \| [0-9.]+'
expect_row 'echo \| echo/inter-host/size:1024 \| 2 \| 2 \| [^|]+ \| [0-9.]+'
expect_row 'barrier \| barrier/nodes:2 \| 2 \| 1 \| [^|]+ \| [0-9.]+'
expect_row 'barrier \| barrier/nodes:2 \| 2 \| 2 \| [^|]+ \| [0-9.]+'
# cop's echo (cop_write & cop_read with flag words) has a figure on the T=2 rows too.
expect_row 'echo \| echo/on-host/size:0 \| 2 \| 2 \| [0-9.]+( !)? \| [0-9.]+'
if command -v gnuplot >/dev/null; then
  gp=$work/a/plots/echo-vs-size-n2.gp
  [ -s "$gp" ] || fail "no echo plot"
  for curve in "mpi on-host T=2" "mpi inter-host T=2" "mpi inter-host T=1"; do
    grep -q "title \"$curve\"" "$gp" || fail "echo plot has no curve '$curve': $(grep -o 'title "[^"]*"' "$gp")"
  done
fi
echo "ok: tasks_per_node points run, resume and report apart (on-host and inter-host echo)"
