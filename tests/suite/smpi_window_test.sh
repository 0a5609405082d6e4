#!/usr/bin/env bash
# smpi_window_test.sh COPBENCH MAX_NODES [BENCH...]: the window method (issue 35) on
# SimGrid's `present` platform, where every time is simulated and the clock global: the 8 B
# broadcast, the barrier and the 8 B reduce (or the BENCHes named) at 2, 4, ..., MAX_NODES
# nodes, and the 8 B echo at 2 nodes (one hop); tests/lib/checks.py smpi-window checks them:
#   - none gets faster as the nodes double;
#   - the 8 B broadcast, SMPI's binomial tree at every node count (baselines/backends.json),
#     takes at least ceil(log2 N) one-hop times at N nodes;
#   - no call was invalid (a simulated wait is exact).
# Before the smpi backend named its barrier and broadcast algorithms (SMPI's Open MPI
# selector chose them by communicator size), this failed: the 8 B broadcast read 3.02 us
# at 8 nodes and 2.03 at 16 (binary tree, then a radix-4 knomial), the barrier 16.06 us at
# 256 and 9.02 at 512 (tree, then Bruck's), window and sync method alike.
set -u
copbench=$1 max=$2
shift 2
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(broadcast barrier reduce)
out=$(mktemp -d /tmp/copbench-smpi-window.XXXXXX)
trap 'rm -rf "$out"' EXIT
run() {  # BENCH NODES [SIZES]
  local sizes=()
  [ $# -lt 3 ] || sizes=(--sizes "$3")
  "$copbench" run "$1" --backend smpi --nodes "$2" --platform present "${sizes[@]}" --reps 1 --iters 1 \
    --timeout 600 --out "$out/$1.$2.json" >/dev/null || { echo "FAIL: $1 at $2 nodes did not run"; exit 1; }
}
run echo 2 8
n=2
while [ "$n" -le "$max" ]; do
  for bench in "${benches[@]}"; do
    if [ "$bench" = barrier ]; then run barrier "$n"; else run "$bench" "$n" 8; fi
  done
  n=$((n * 2))
done
python3 "$(dirname "$0")/../lib/checks.py" smpi-window "$out" "$max" "${benches[@]}"
