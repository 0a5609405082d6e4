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
python3 - "$work/list.json" >"$work/every_microbenchmark.yml" <<'EOF' || fail "cannot write the campaign from copbench list --json"
import json, sys
workloads = [w for w in json.load(open(sys.argv[1]))["workloads"] if w["kind"] == "benchmark"]
print("# Written by tests/cluster/every_microbenchmark_test.sh from `copbench list --json`.")
print("name: every-microbenchmark")
print("description: Every microbenchmark once on cop, pvm, mpi and armci at 16 emulated hosts.")
print("profiles: [native]")
print("defaults: {reps: 1, max_reps: 1, iters: 2, warmup: 1, timeout: 240}")
print("runs:")
for w in workloads:
    print(f"  - benchmark: {w['name']}")
    print("    backends: [cop, pvm, mpi, armci]")
    print("    routes: [direct]")
    print("    encoding: raw")
    print("    nodes: 16")
    if w["smoke"]["sizes"]:
        print(f"    sizes: {json.dumps(w['smoke']['sizes'])}")
EOF

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
python3 - "$dir" "$work/list.json" <<'EOF' || fail "the points do not match what the backends offer"
import glob, json, os, sys
directory, listing = sys.argv[1], sys.argv[2]
catalog = json.load(open(listing))
offered = {(w["name"], b["name"]): b["name"] in w["offered_by"]
           for w in catalog["workloads"] if w["kind"] == "benchmark" for b in catalog["backends"]}
problems, done, not_offered = [], 0, 0
campaign = {}
for path in glob.glob(os.path.join(directory, "status", "*.json")) + glob.glob(os.path.join(directory, "raw", "*.json")):
    point = os.path.basename(path)[:-5]
    data = json.load(open(path))
    if "/raw/" in path:
        campaign[point] = ("done", data)
    elif point not in campaign:
        campaign[point] = (data["status"], data)
for point, (status, data) in sorted(campaign.items()):
    bench, backend = point.split(".")[0], point.split(".")[1].split("-")[0]
    if (bench, backend) not in offered:
        problems.append(f"{point}: {bench} on {backend} is not in copbench list")
    elif status == "done":
        done += 1
        if not offered[(bench, backend)]:
            problems.append(f"{point}: ran, but {backend} does not offer {bench}")
        if not data.get("benchmarks"):
            problems.append(f"{point}: no benchmark results in raw/{point}.json")
    elif status == "not offered":
        not_offered += 1
        if offered[(bench, backend)]:
            problems.append(f"{point}: not offered, but copbench list offers {bench} on {backend}")
    else:
        problems.append(f"{point}: {status}: {data.get('reason', '')}")
want = {(b, k) for (b, k), o in offered.items() if o and k in ("cop", "pvm", "mpi", "armci")}
ran = {(p.split(".")[0], p.split(".")[1].split("-")[0]) for p, (s, _) in campaign.items() if s == "done"}
benches = {p.split(".")[0] for p in campaign}
for b, k in sorted(want):
    if b in benches and (b, k) not in ran:
        problems.append(f"{b} on {k} is offered but did not run")
print(f"{len(campaign)} points: {done} done, {not_offered} not offered")
for p in problems:
    print("  " + p)
sys.exit(1 if problems or done == 0 else 0)
EOF
echo "every microbenchmark at $nodes hosts: ok (results in $dir)"
