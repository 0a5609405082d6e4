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
python3 - "$out/point.json" "$want" <<'PY'
import json, sys
points = json.load(open(sys.argv[1]))["benchmarks"]
want = float(sys.argv[2])
median = [p["real_time"] for p in points if p.get("aggregate_name") == "median" and "size:0" in p["name"]]
if not median:
    sys.exit("no echo/size:0 median in the result")
got = median[0]
print(f"simulated one-way latency {got:.3f} us, platform {want} us")
sys.exit(0 if abs(got - want) <= 0.05 * want else f"{got} us is not the platform's {want} us")
PY
