#!/usr/bin/env bash
# tasks_per_node_test.sh COPBENCH BACKEND DIR: `--tasks-per-node 2` on 2 nodes gives echo
# points for both placements (rank 0 <-> 1 on-host, rank 0 <-> 2 inter-host), and the
# result's context says 2 nodes x 2 tasks. With mpi it also checks that one task per node
# keeps the old point names, that a collective spans all 4 ranks, and that a hostfile run
# maps the tasks per host (--map-by ppr:T:node). Asserts behaviour, never timings.
set -euo pipefail
copbench=$1
backend=$2
dir=$3
rm -rf "$dir" && mkdir -p "$dir"
tiny=(--reps 2 --max-reps 3 --iters 3 --warmup 1 --timeout 150)
# checks COMMAND RESULT: a check of a result file (tests/lib/checks.py).
checks() { python3 "$(dirname "$0")/../lib/checks.py" "$@"; }

"$copbench" run echo --backend "$backend" --nodes 2 --tasks-per-node 2 --sizes 0,1K "${tiny[@]}" \
  --out "$dir/echo.json" >"$dir/echo.txt"
grep -q '2 nodes x 2 tasks' "$dir/echo.txt" || { echo "table header lacks '2 nodes x 2 tasks':"; cat "$dir/echo.txt"; exit 1; }
checks echo-placements "$dir/echo.json"

if [ "$backend" = mpi ]; then
  # One task per node: the names the suite always had, labelled inter-host.
  "$copbench" run echo --backend mpi --nodes 2 --sizes 8 "${tiny[@]}" --out "$dir/echo1.json" >/dev/null
  checks one-task-per-node "$dir/echo1.json"
  # A collective spans every rank: the point is named by nodes and counts the ranks.
  # The context records mpi_yield_when_idle as the ranks ran with it.
  "$copbench" run barrier --backend mpi --nodes 2 --tasks-per-node 2 "${tiny[@]}" --out "$dir/barrier.json" >/dev/null
  checks barrier-methods "$dir/barrier.json"
  # A hostfile of one host: both tasks on it, so echo has the on-host pair only.
  echo "localhost slots=2" >"$dir/hostfile"
  "$copbench" run echo --backend mpi --hostfile "$dir/hostfile" --nodes 1 --tasks-per-node 2 --sizes 8 "${tiny[@]}" \
    --out "$dir/hostfile.json" >/dev/null
  checks hostfile-placement "$dir/hostfile.json"
fi
echo "ok: $backend, 2 nodes x 2 tasks"
