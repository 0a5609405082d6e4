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
# py FILE <<'PY': a check of a result file, with tests/lib/checks.py's loaders.
py() { PYTHONPATH="$(dirname "$0")/../lib" python3 - "$@"; }

"$copbench" run echo --backend "$backend" --nodes 2 --tasks-per-node 2 --sizes 0,1K "${tiny[@]}" \
  --out "$dir/echo.json" >"$dir/echo.txt"
grep -q '2 nodes x 2 tasks' "$dir/echo.txt" || { echo "table header lacks '2 nodes x 2 tasks':"; cat "$dir/echo.txt"; exit 1; }
py "$dir/echo.json" <<'PY'
import sys
from checks import aggregates, result
j = result(sys.argv[1])
ctx = j["context"]
assert ctx["nodes"] == "2" and ctx["tasks_per_node"] == "2", ctx
points = aggregates(j)
for placement in ["on-host", "inter-host"]:
    for size in [0, 1024]:
        name = f"echo/{placement}/size:{size}"
        assert name in points, (name, sorted(points))
        assert points[name]["label"] == f"placement={placement}", points[name]
        assert points[name]["nodes"] == 2 and points[name]["ranks"] == 4, points[name]
assert len(points) == 4, sorted(points)
PY

if [ "$backend" = mpi ]; then
  # One task per node: the names the suite always had, labelled inter-host.
  "$copbench" run echo --backend mpi --nodes 2 --sizes 8 "${tiny[@]}" --out "$dir/echo1.json" >/dev/null
  py "$dir/echo1.json" <<'PY'
import sys
from checks import aggregates, result
j = result(sys.argv[1])
assert j["context"]["tasks_per_node"] == "1", j["context"]
points = aggregates(j)
assert set(points) == {"echo/size:8"}, sorted(points)
assert points["echo/size:8"]["label"] == "placement=inter-host" and "ranks" not in points["echo/size:8"]
PY
  # A collective spans every rank: the point is named by nodes and counts the ranks.
  # The context records mpi_yield_when_idle as the ranks ran with it.
  "$copbench" run barrier --backend mpi --nodes 2 --tasks-per-node 2 "${tiny[@]}" --out "$dir/barrier.json" >/dev/null
  py "$dir/barrier.json" <<'PY'
import sys
from checks import aggregates, result
j = result(sys.argv[1])
assert j["context"]["mpi_yield_when_idle"] in ("0", "1"), j["context"]
points = aggregates(j)
# Three methods: the window method under the old name, the thesis's sync method and the
# loop method beside it.
assert set(points) == {"barrier/nodes:2", "barrier/method:sync/nodes:2", "barrier/method:loop/nodes:2"}, sorted(points)
for name, method in [("barrier/nodes:2", "window"), ("barrier/method:sync/nodes:2", "sync"),
                     ("barrier/method:loop/nodes:2", "loop")]:
    assert points[name]["ranks"] == 4, points
    assert points[name]["label"] == f"method={method}", points[name]
    assert points[name]["timing_method"].startswith(f"{method} method"), points[name]
# The window point says how many calls it timed and left out, its W and its clock: one
# kernel here, its offsets measured.
w = points["barrier/nodes:2"]
assert w["timed_calls"] > 0 and 0 <= w["invalid_calls"] <= w["timed_calls"], w
assert w["window_us"] > 0 and "one kernel" in w["clock"] and "round trips" in w["clock"], w
PY
  # A hostfile of one host: both tasks on it, so echo has the on-host pair only.
  echo "localhost slots=2" >"$dir/hostfile"
  "$copbench" run echo --backend mpi --hostfile "$dir/hostfile" --nodes 1 --tasks-per-node 2 --sizes 8 "${tiny[@]}" \
    --out "$dir/hostfile.json" >/dev/null
  py "$dir/hostfile.json" <<'PY'
import sys
from checks import aggregates, result
j = result(sys.argv[1])
assert j["context"]["nodes"] == "1" and j["context"]["tasks_per_node"] == "2", j["context"]
points = set(aggregates(j))
assert points == {"echo/on-host/size:8"}, sorted(points)
PY
fi
echo "ok: $backend, 2 nodes x 2 tasks"
