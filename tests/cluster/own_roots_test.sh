#!/usr/bin/env bash
# cluster.own_roots (copy) and cluster.own_roots_build (build): the real-cluster path
# on a cluster of its own whose 3 hosts (+ copctl) each have their own root filesystem
# (scripts/cluster up --own-roots; inventory from ansible/inventory/example-cluster.yml).
# Asserts, in order:
#   - the hosts' roots are separate: a file written in one host's /usr/local and /opt
#     is on no other host and not on this machine; the checkout and the build are not
#     visible on the hosts (so the suite is there only where site.yml put it);
#   - site.yml in install mode MODE (copy: the inventory's default; build) succeeds,
#     and every host records MODE and the commit of this build (copbench-install.json);
#     the programs it put on the hosts are not on this machine;
#   - a campaign (barrier and reduce on cop and mpi, 3 hosts) on the head node, run with
#     the copbench site.yml put there, finishes every point, and its manifest records
#     MODE and that commit for every host;
#   - a second site.yml run changes nothing;
#   - a host whose install record names another commit makes the campaign fail before
#     any point (no results directory), naming that host;
#   - down leaves no mount of the roots in any mount namespace, no namespace, link,
#     host process or root directory.
# Usage: own_roots_test.sh copy|build BINDIR. Exits 77 (skip) when not root; build
# (every host compiles the suite: about 55 minutes on 2 shared cores, ansible/README.md)
# also unless COPBENCH_SLOW_TESTS=1.
set -uo pipefail

mode=${1:?copy or build}
bindir=${2:?directory of copbench}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster="$repo/scripts/cluster"
hosts="node1 node2 node3 copctl"

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "not root: the emulated cluster needs namespaces; skipped"; exit 77; }
if [ "$mode" = build ] && [ "${COPBENCH_SLOW_TESTS:-0}" != 1 ]; then
  echo "build mode compiles the suite on every host (about 55 minutes): set COPBENCH_SLOW_TESTS=1 to run it; skipped"
  exit 77
fi

# A cluster of its own (id 6 unless COPBENCH_OWN_ROOTS_TEST_ID), beside the others' 7 and 8.
export COPBENCH_CLUSTER_ID=${COPBENCH_OWN_ROOTS_TEST_ID:-6}
work="$bindir/../tests/cluster/own-roots-$mode"
export COPBENCH_CLUSTER_STATE="$work/cluster-state"
export COPBENCH_BUILD=${COPBENCH_BUILD:-$(cd "$bindir/.." && pwd)}
prefix=cb$COPBENCH_CLUSTER_ID
rm -rf "$work/results"
mkdir -p "$work"

on() { local h=$1; shift; "$cluster" ssh "$h" "$@"; }
down_checked=0
cleanup() { [ $down_checked = 1 ] || "$cluster" down >"$work/down.log" 2>&1 || echo "cluster down failed (see $work/down.log)" >&2; }
trap cleanup EXIT

"$cluster" up 3 --own-roots >"$work/up.log" 2>&1 || fail "cluster up 3 --own-roots failed (see $work/up.log)"
grep -qx 'CLUSTER_ROOTS=own' "$COPBENCH_CLUSTER_STATE/cluster.env" || fail "cluster.env does not record own roots"
inv="$COPBENCH_CLUSTER_STATE/inventory.yml"
python3 "$here/../lib/checks.py" inventory-like-example "$inv" "$repo/ansible/inventory/example-cluster.yml" || fail "the inventory is not example-cluster.yml with the cluster filled in"
checkout=$(sed -n 's/^    copbench_checkout: //p' "$inv")
build=$(sed -n 's/^    copbench_build: //p' "$inv")
[ -n "$checkout" ] && [ -n "$build" ] || fail "the inventory names no copbench_checkout / copbench_build"

# Separate roots: what one host writes, only it has.
marker="own-roots-test.$$"
on node1 "echo node1 >/usr/local/$marker && mkdir -p /opt/$marker && echo node1 >/opt/$marker/file" ||
  fail "cannot write in node1's /usr/local and /opt"
on node1 "cat /usr/local/$marker /opt/$marker/file" | grep -c node1 | grep -qx 2 || fail "node1 does not read back its own files"
for h in node2 node3 copctl; do
  on "$h" "test ! -e /usr/local/$marker && test ! -e /opt/$marker" || fail "$h sees the files node1 wrote"
done
[ ! -e "/usr/local/$marker" ] && [ ! -e "/opt/$marker" ] || fail "this machine sees the files node1 wrote"
on node2 "test ! -e $repo/CMakeLists.txt && test ! -e $COPBENCH_BUILD/bin/copbench" ||
  fail "node2 sees the checkout or the build at their paths on this machine (copy mode would prove nothing)"
on node2 'test ! -e /root/.copbench' || fail "node2's home is not empty before site.yml"

# site.yml in this mode.
extra=()
[ "$mode" = copy ] || extra=(-e "copbench_suite_install=$mode")
t0=$SECONDS
"$cluster" provision "${extra[@]}" >"$work/site.yml.log" 2>&1 || fail "site.yml ($mode) failed (see $work/site.yml.log)"
echo "site.yml ($mode, 3 hosts + copctl with their own roots): $((SECONDS - t0)) s; disk per host: $(du -sh "$COPBENCH_CLUSTER_STATE/roots/node2" | cut -f1)"
# copy: this build's commit stamp; build: the commit the hosts cloned (HEAD at up).
if [ "$mode" = build ]; then
  commit=$(git -C "$repo" rev-parse --short=12 HEAD)
else
  commit=$(sed -n 's/^#define COPBENCH_COMMIT "\(.*\)"$/\1/p' "$COPBENCH_BUILD/suite/generated/copbench/source_commit.h")
fi
for h in $hosts; do
  rec=$(on "$h" cat "$build/copbench-install.json") || fail "$h has no install record ($build/copbench-install.json)"
  python3 "$here/../lib/checks.py" install-record "$rec" "$mode" "$commit" || fail "$h's install record is not mode $mode, commit $commit: $rec"
done
[ ! -e "$build/bin/copbench" ] || fail "$build/bin/copbench exists on this machine: the hosts' copies are not theirs alone"
on node1 "test -e /root/.copbench/env.sh" && on node2 "test -e /root/.copbench/env.sh" ||
  fail "site.yml did not write each host's own home (~/.copbench/env.sh)"

# A campaign with the copbench site.yml put on the head node.
cop_subnet=$(sed -n 's/^ *copbench_cop_subnet: *//p' "$inv" | head -1)
cat >"$COPBENCH_CLUSTER_STATE/own-roots.yml" <<'YML'
name: own-roots
description: Barrier and reduce on cop and mpi across the 3 hosts with their own roots.
profiles: [native]
defaults: {reps: 1, max_reps: 1, iters: 2, warmup: 1, timeout: 120}
runs:
  - benchmark: barrier
    backends: [cop, mpi]
    routes: [direct]
    encoding: raw
    nodes: 3
  - benchmark: reduce
    backends: [cop, mpi]
    routes: [direct]
    encoding: raw
    nodes: 3
    sizes: [8]
YML
run_campaign() {
  on node1 "cd /root && COPBENCH_COP_SUBNET=$cop_subnet $build/bin/copbench campaign run $COPBENCH_CLUSTER_STATE/own-roots.yml --cluster $inv --results /root/results-$1 --quiet"
}
# The campaign's log and statuses lie in node1's own root, gone at down: kept beside campaign.out.
run_campaign ok >"$work/campaign.out" 2>&1 || {
  on node1 'tail -n 40 /root/results-ok/*/campaign.log; cat /root/results-ok/*/status/*.json' >"$work/campaign.log" 2>&1
  cat "$work/campaign.log" >&2
  fail "the campaign failed (see $work/campaign.out and campaign.log)"
}
on node1 'cat /root/results-ok/*/manifest.json' >"$work/manifest.json" || fail "no manifest on node1"
on node1 'ls /root/results-ok/*/raw' >"$work/raw.txt"
[ "$(grep -c '\.json$' "$work/raw.txt")" = 4 ] || fail "not every point has a result: $(tr '\n' ' ' <"$work/raw.txt")"
python3 "$here/../lib/checks.py" install-manifest "$work/manifest.json" "$mode" "$hosts" || fail "the manifest does not record the install mode and every host's commit"

# Idempotent: nothing changes on a second run.
"$cluster" provision "${extra[@]}" >"$work/site.yml.2.log" 2>&1 || fail "the second site.yml run failed (see $work/site.yml.2.log)"
grep -E '^[a-z0-9]+ +: ok=' "$work/site.yml.2.log" | grep -v ' changed=0 ' &&
  fail "the second site.yml run changed something (see $work/site.yml.2.log)"

# A host with another commit: refused before any point, naming the host.
on node2 "sed -i 's/\"commit\": \"[^\"]*\"/\"commit\": \"0000000000aa\"/' $build/copbench-install.json" || fail "cannot edit node2's record"
run_campaign refused >"$work/refused.out" 2>&1 && fail "the campaign ran with node2 on another commit"
grep -q 'host node2 runs copbench 0000000000aa' "$work/refused.out" || fail "the refusal does not name node2: $(cat "$work/refused.out")"
on node1 'test ! -e /root/results-refused' || fail "the refused campaign made a results directory (points may have run)"

# Down: nothing left.
inits=$(cat "$COPBENCH_CLUSTER_STATE"/pids/*.pid)
down_checked=1
"$cluster" down >"$work/down.log" 2>&1 || fail "cluster down failed (see $work/down.log)"
left=$(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -F "$COPBENCH_CLUSTER_STATE/roots" | head -3)
[ -z "$left" ] || fail "mounts of the roots left: $left"
[ ! -e "$COPBENCH_CLUSTER_STATE/roots" ] || fail "$COPBENCH_CLUSTER_STATE/roots left"
! ip netns list | grep -q "^$prefix-" || fail "namespaces left: $(ip netns list | grep "^$prefix-")"
! ip -o link show | grep -q ": $prefix-" || fail "links left"
for pid in $inits; do
  [ ! -e "/proc/$pid" ] || ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q cluster-init || fail "host process $pid left"
done
echo "own roots, $mode mode: ok"
