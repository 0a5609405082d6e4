#!/usr/bin/env bash
# workload_test.sh COPBENCH DATA WORK: README's worked example (allreduce) is listed by
# `copbench list`, accepted in a campaign file and measured by `campaign run`.
set -euo pipefail
copbench=$1 data=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
list=$("$copbench" list)
printf "%s\n" "$list" | grep -Eq '^allreduce +offered +offered +offered' || fail "allreduce not in copbench list as offered by pvm, mpi, armci"
cat >"$work/example.yml" <<'YML'
name: example
runs:
  - benchmark: allreduce
    backends: [mpi]
    nodes: [2, 3]
    sizes: [8, 8K]
    reps: 2
    max_reps: 3
    iters: 3
    warmup: 1
YML
"$copbench" campaign run "$work/example.yml" --results "$work" --quiet >"$work/run.out" 2>&1 || fail "campaign failed: $(cat "$work/run.out")"
grep -q "2 points: 0 already done, 2 ran, 0 not offered" "$work/run.out" || fail "unexpected: $(cat "$work/run.out")"
dir=$(ls -d "$work"/example-*)
grep -q '"run_name": "allreduce/size:8192"' "$dir/raw/allreduce.mpi.n3.native.json" || fail "no allreduce point in the results"
"$copbench" report "$dir" --no-plots >/dev/null || fail "report failed"
grep -q "allreduce/size:8192" "$dir/tables/summary.md" || fail "allreduce missing from the report"
echo "ok: allreduce listed, run in a campaign and reported"
