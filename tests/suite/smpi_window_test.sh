#!/usr/bin/env bash
# smpi_window_test.sh COPBENCH MAX_NODES: the window method (issue 35) on SimGrid's
# `present` platform, where every time is simulated and the clock global. For the 8 B
# broadcast, the barrier and the 8 B reduce at 2, 4, ..., MAX_NODES nodes:
#   - the barrier and the 8 B reduce never get faster as the nodes double (their
#     default, window points); the sync method's 8 B reduce did (16.06 us at 256 nodes,
#     after 7.01 at 128... and 3.01 at 4 after 1.00 at 2: its barrier's release skew);
#   - the 8 B broadcast never takes less than one hop (the 2-node broadcast), and at N >=
#     1024 nodes, where SMPI runs the binomial tree (binomial_tree named from 1024 ranks,
#     baselines/backends.json), at least ceil(log2 N) hops. Below 1024 Open MPI's
#     selector picks other trees, whose 8 B times are not monotonic in N on `present`
#     (2.03 us at 16 nodes after 3.02 at 8, window and sync alike: the algorithm, not the
#     method); the sync method read 1.02 us (one hop) at 256 nodes, the window 4.07;
#   - no call was invalid (a simulated wait is exact).
set -u
copbench=$1 max=$2
out=$(mktemp -d /tmp/copbench-smpi-window.XXXXXX)
trap 'rm -rf "$out"' EXIT
n=2
while [ "$n" -le "$max" ]; do
  for bench in broadcast barrier reduce; do
    sizes=(); [ "$bench" = barrier ] || sizes=(--sizes 8)
    "$copbench" run "$bench" --backend smpi --nodes "$n" --platform present "${sizes[@]}" --reps 1 --iters 1 \
      --timeout 300 --out "$out/$bench.$n.json" >/dev/null || { echo "FAIL: $bench at $n nodes did not run"; exit 1; }
  done
  n=$((n * 2))
done
python3 "$(dirname "$0")/../lib/checks.py" smpi-window "$out" "$max"
