#!/usr/bin/env bash
# cluster.every_microbenchmark: every microbenchmark once on cop, pvm, mpi and armci at
# 16 emulated hosts on a cluster of its own: up 16, site.yml, the campaign on the head
# node, down (also when a step fails). The campaign file is written here from `copbench
# list --json` (every workload of kind "benchmark", at its smoke sizes), so a new
# microbenchmark joins it with no line anywhere.
# Asserts: the campaign exits 0; every point is either done, with a result for each of
# its benchmarks (the workers check every result against a local computation and fail
# the point otherwise), or "not offered" where `copbench list` says the backend does
# not offer the benchmark, and no point the catalog offers is missing or failed.
# Usage: every_microbenchmark_test.sh BINDIR. Exits 77 (skip) when not root.
set -uo pipefail

bindir=${1:?directory of copbench}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster="$repo/scripts/cluster"
nodes=16

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "not root: the emulated cluster needs network namespaces; skipped"; exit 77; }

# Beside the lifecycle test's cluster (COPBENCH_CLUSTER_TEST_ID, default 7): the next id.
export COPBENCH_CLUSTER_ID=$(((${COPBENCH_CLUSTER_TEST_ID:-7} + 1) % 10))
work="$bindir/../tests/cluster/every-microbenchmark"
export COPBENCH_CLUSTER_STATE="$work/cluster-state"
export COPBENCH_BUILD=${COPBENCH_BUILD:-$(cd "$bindir/.." && pwd)}
rm -rf "$work/results"
mkdir -p "$work/results"

# The campaign: one run per microbenchmark, one repetition of few iterations (the test
# asks that each works, not how fast); what a backend does not offer is recorded "not
# offered", all else must run to the end.
"$bindir/copbench" list --json >"$work/list.json" || fail "copbench list --json failed"
python3 "$here/../lib/checks.py" every-microbenchmark-campaign "$work/list.json" >"$work/every_microbenchmark.yml" || fail "cannot write the campaign from copbench list --json"

trap '"$cluster" down >"$work/down.log" 2>&1 || echo "cluster down failed (see $work/down.log)" >&2' EXIT
"$cluster" up "$nodes" >"$work/up.log" 2>&1 || fail "cluster up $nodes failed (see $work/up.log)"
"$cluster" provision >"$work/site.yml.log" 2>&1 || fail "site.yml failed (see $work/site.yml.log)"
# A cop point's copd listens on the COP network (as scripts/bench runs a campaign).
cop_subnet=$(sed -n 's/^ *copbench_cop_subnet: *//p' "$COPBENCH_CLUSTER_STATE/inventory.yml" | head -1)
[ -n "$cop_subnet" ] || fail "the cluster's inventory names no copbench_cop_subnet"

"$cluster" exec node1 env COPBENCH_COP_SUBNET="$cop_subnet" "$bindir/copbench" campaign run \
  "$work/every_microbenchmark.yml" --cluster "$COPBENCH_CLUSTER_STATE/inventory.yml" --results "$work/results" \
  >"$work/campaign.out" 2>&1
rc=$?
tail -3 "$work/campaign.out"
dir=$(sed -n 's/^results: //p' "$work/campaign.out" | tail -1)
[ -n "$dir" ] && [ -d "$dir" ] || fail "the campaign wrote no results directory (exit $rc; see $work/campaign.out)"
grep -E ' (failed|skipped) ' "$dir/campaign.log" >&2
[ $rc -eq 0 ] || fail "the campaign exited with $rc (see $dir/campaign.log)"

# What the catalog offers, from `copbench list --json`, against what ran.
python3 "$here/../lib/checks.py" every-microbenchmark-points "$dir" "$work/list.json" || fail "the points do not match what the backends offer"
echo "every microbenchmark at $nodes hosts: ok (results in $dir)"
