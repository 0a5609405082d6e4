#!/usr/bin/env bash
# clock_skew_test.sh COPBENCH: the common clock's estimation on real ranks (issue 35).
# With COPBENCH_CLOCK_SKEW=0.01,100 every mpi rank's clock is offset by up to 10 ms and
# drifts by up to 100 ppm (a test setting, suite/timing/clock.cpp), so the ranks are
# treated as separate machines: each one's offset and drift to rank 0 are estimated by
# min-RTT round trips and a fitted line. The truth is known, and each window point
# records its maps' largest true error beside the bound it reports: the error must be
# within the bound. Without the setting the ranks share one kernel's clock.
set -u
copbench=$1
out=$(mktemp -d /tmp/copbench-clock-skew.XXXXXX)
trap 'rm -rf "$out"' EXIT
tiny=(--reps 2 --max-reps 4 --iters 5 --warmup 1 --timeout 120)
COPBENCH_CLOCK_SKEW=0.01,100 "$copbench" run barrier --backend mpi --nodes 3 "${tiny[@]}" --out "$out/skew.json" >/dev/null ||
  { echo "FAIL: the run with an injected skew failed"; exit 1; }
"$copbench" run barrier --backend mpi --nodes 3 "${tiny[@]}" --out "$out/plain.json" >/dev/null ||
  { echo "FAIL: the run without a skew failed"; exit 1; }
python3 "$(dirname "$0")/../lib/checks.py" clock-skew "$out"
