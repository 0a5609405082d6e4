#!/usr/bin/env bash
# smpi_latency_test.sh COPBENCH PLATFORM LATENCY_US: a 0-byte echo between 2 simulated
# nodes of PLATFORM takes exactly the platform's end-to-end latency one way (CM02: latency
# + 0 / bandwidth), within 5 % (SimGrid's cross-traffic, the acknowledgements' share of
# a SHARED link, adds about 3 % here). The time is SimGrid's simulated clock (MPI_Wtime), the same
# on every machine, so this is a check of the clock, not a timing of this machine: a wall
# clock would give microseconds on loopback.
set -u
copbench=$1 platform=$2 want=$3
out=$(mktemp -d /tmp/copbench-smpi-latency.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$copbench" run echo --backend smpi --nodes 2 --platform "$platform" --sizes 0 \
  --reps 2 --max-reps 3 --iters 3 --warmup 1 --timeout 60 --out "$out/point.json" >/dev/null || exit 1
python3 "$(dirname "$0")/../lib/checks.py" median-within "$out/point.json" echo/size:0 "$want" 0.05
