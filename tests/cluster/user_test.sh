#!/usr/bin/env bash
# user_test.sh BINDIR: a cluster user without root (issue 28, deliverable 3). On a
# cluster of its own (COPBENCH_CLUSTER_ID 5, 3 compute hosts with their own roots:
# scripts/cluster up --own-roots) that an administrator provisioned with site.yml
# (Slurm included), the test
#  - creates the user on every host (useradd inside each host's own root: the overlay,
#    never this machine's /etc/passwd; the same uid everywhere) with one home, a
#    directory under the cluster's state bound at /home/USER on every host (a cluster's
#    NFS home), an ssh key of its own, and hands it the checkout's files (what a clone
#    gives);
#  - as that user, over ssh on node1: scripts/lib/common.sh's ensure_packages says
#    'not root' and installs nothing, apt-get is refused; the user configures and builds
#    in the home only what a campaign needs (copbench, the four workers, copd, copdrv),
#    through ccache with the test's own cache bound read-only where there is one (else a
#    cold build: minutes); then runs a small campaign with --launcher slurm: barrier and
#    echo on mpi, armci, pvm and cop, cop with a job-private COP stack;
#  - asserts every point done and verified (the campaign's checks), every Slurm job the
#    user's (UserId), the user's files the user's, no daemon or job directory of the
#    user left on any host, and no root process started or stopped by the campaign (the
#    root processes on the hosts are the ones site.yml left, before and after);
#  - removes the mounts it made, takes the cluster down (the users go with the
#    overlays) and checks that no mount of its home is left.
# Exits 77 (skip) when not root.
set -uo pipefail
bindir=${1:?directory of the test programs}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster="$repo/scripts/cluster"
[ "$(id -u)" -eq 0 ] || { echo "not root: the emulated cluster needs namespaces; skipped"; exit 77; }

export COPBENCH_CLUSTER_ID=${COPBENCH_USER_TEST_CLUSTER_ID:-5}
# Paths without "..": the hosts see the state directory, but not the build around it.
export COPBENCH_BUILD=${COPBENCH_BUILD:-$(cd "$bindir/.." && pwd)}
export COPBENCH_CLUSTER_STATE=$COPBENCH_BUILD/tests/cluster/user-state
s=$COPBENCH_CLUSTER_STATE
user=copbench-user uid=4728
uhome=/home/$user
home=$s/user-home          # on this machine; at $uhome on every host
ccache_at=/run/copbench-user-ccache
hosts="node1 node2 node3"
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$here/../lib/wait.sh"  # wait_until TIMEOUT_S COMMAND...

init_pid() { (source "$repo/scripts/lib/common.sh" && source "$repo/scripts/lib/cluster.sh" && cluster_load && cluster_init_pid "$1"); }
in_mnt() { local p; p=$(init_pid "$1") || return 1; shift; nsenter -t "$p" -m -p -r -w -- "$@"; }
as_user() { ssh -F "$s/ssh_config" -i "$home/.ssh/id_ed25519" -l "$user" "$@"; }
# Mounts of ours in any mount namespace (one line each; empty when none).
our_mounts() { cat /proc/[0-9]*/mountinfo 2>/dev/null | awk -v h="$uhome" -v c="$ccache_at" '$5 == h || $5 == c {print $5}' | sort -u; }
cleanup() {
  local rc=$? h
  if [ -f "$s/cluster.env" ]; then
    for h in $hosts; do
      in_mnt "$h" umount "$ccache_at" 2>/dev/null
      in_mnt "$h" umount "$uhome" 2>/dev/null
    done
    "$cluster" down >"$s.down.log" 2>&1 || { cat "$s.down.log" >&2; rc=1; }
  fi
  left=$(our_mounts)
  [ -z "$left" ] || { echo "FAIL: mounts left: $left" >&2; rc=1; }
  rm -rf "$home"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$SECONDS
mkdir -p "$s"
"$cluster" up 3 --own-roots >"$s.up.log" 2>&1 || { cat "$s.up.log" >&2; fail "up 3 --own-roots"; }
"$cluster" provision >"$s.site.log" 2>&1 || { tail -30 "$s.site.log" >&2; fail "site.yml (see $s.site.log)"; }
echo "administrator: up 3 --own-roots and site.yml in $((SECONDS - t0)) s"

# --- the user, on every host: in the host's own root only ------------------------------
rm -rf "$home" && mkdir -p "$home/.ssh"
ssh-keygen -q -t ed25519 -N '' -C "$user" -f "$home/.ssh/id_ed25519"
cp "$home/.ssh/id_ed25519.pub" "$home/.ssh/authorized_keys"
cp "$s/known_hosts" "$home/.ssh/known_hosts"   # the hosts' keys, as a site publishes them
# The user's clone of the checkout (a site's users clone from the site's repository); a
# checkout with uncommitted changes is copied over it (its commit then says -dirty).
git clone -q --depth 1 "file://$repo" "$home/copbench" || fail "cloning $repo"
if ! git -C "$repo" diff --quiet HEAD --; then
  git -C "$repo" ls-files -z | (cd "$repo" && tar --null -T - -c) | tar -x -C "$home/copbench" || fail "copying the checkout's changes"
fi
chown -R "$uid:$uid" "$home" && chmod 0700 "$home" "$home/.ssh"
for h in $hosts; do
  [ "$(in_mnt "$h" stat -f -c %T /)" = overlayfs ] || fail "$h has no root of its own: no useradd there"
  [ "$(readlink "/proc/$(init_pid "$h")/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ] || fail "$h shares this mount namespace"
  "$cluster" exec "$h" useradd -M -d "$uhome" -u "$uid" -U -s /bin/bash -p '*' "$user" || fail "useradd on $h"
  in_mnt "$h" mkdir -p "$uhome" && in_mnt "$h" mount --bind "$home" "$uhome" || fail "binding the home on $h"
done
id "$user" >/dev/null 2>&1 && fail "$user exists on this machine: useradd reached the real root"

# The build's compiler cache, read-only for the user (the host's /root is its own, so the
# directory is handed over as a mount: open_tree here, move_mount in node1's namespace).
cache=$(ccache -k cache_dir 2>/dev/null || true)
ccache_env=""
if [ -n "$cache" ] && [ -d "$cache" ]; then
  in_mnt node1 mkdir -p "$ccache_at" &&
  python3 "$here/../lib/checks.py" move-mount "$cache" "$(init_pid node1)" "$ccache_at" && in_mnt node1 mount -o remount,bind,ro "$ccache_at" || fail "binding the compiler cache into node1"
  ccache_env="CCACHE_DIR=$ccache_at CCACHE_READONLY=1 CCACHE_TEMPDIR=/tmp/ccache-$user"
fi

# --- root's processes on the hosts before the campaign -------------------------------
root_procs() {
  local h
  for h in $hosts; do
    echo "$h: $(in_mnt "$h" ps -u 0 -o pid=,comm= | awk '$2 !~ /^(ps|sshd|nsenter)$/ {printf "%s %s; ", $1, $2}')"
  done
}
before=$(root_procs)

# --- as the user --------------------------------------------------------------------
cat >"$home/campaign.yml" <<'YML'
name: user
defaults: {reps: 2, max_reps: 3, iters: 3, warmup: 1, timeout: 120}
runs:
  - {benchmark: barrier, backends: [mpi, armci, pvm, cop], routes: [direct], encoding: raw, nodes: [3]}
  - {benchmark: echo, backends: [mpi, armci, pvm, cop], routes: [direct], encoding: raw, nodes: [2], sizes: [8]}
YML
chown "$uid:$uid" "$home/campaign.yml"
t1=$SECONDS
# LANG as here: ccache hashes it, and the cache was filled under it.
out=$(as_user node1 "env ${LANG:+LANG=$LANG} $ccache_env bash -s" 2>&1 <<'USER'
set -eu
cd ~/copbench
echo "id: $(id -u) $(id -un)"
bash -c 'source scripts/lib/common.sh && ensure_packages'
if apt-get install -y -qq --no-install-recommends hello >/dev/null 2>&1; then echo "apt-get: ran"; else echo "apt-get: refused"; fi
launcher=()
[ -z "${CCACHE_DIR:-}" ] || launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=$HOME/copbench
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >build.log 2>&1 || { tail build.log; exit 1; }
cmake --build build -j "$(nproc)" --target copbench copbench-worker-mpi copbench-worker-armci \
  copbench-worker-pvm copbench-worker-cop copd copdrv >>build.log 2>&1 || { tail build.log; exit 1; }
echo "built in $SECONDS s: $(ls build/bin | tr '\n' ' ')"
cd ~
copbench/build/bin/copbench campaign run campaign.yml --launcher slurm --results results --quiet 2>&1 || true
USER
)
rc=$?
echo "$out"
echo "user: build and campaign in $((SECONDS - t1)) s"
[ $rc -eq 0 ] || fail "the user's session failed (exit $rc)"
grep -qx "id: $uid $user" <<<"$out" || fail "not run as $user"
grep -q "not root: installing nothing" <<<"$out" || fail "ensure_packages did not say 'not root'"
grep -qx "apt-get: refused" <<<"$out" || fail "apt-get was not refused to the user"
grep -q "8 points: 0 already done, 8 ran, 0 not offered, 0 skipped, 0 failed" <<<"$out" || fail "not every point ran"

dir=$(ls -d "$home"/results/user-* 2>/dev/null | head -1)
[ -n "$dir" ] || fail "no results directory"
jobs=$(/usr/bin/python3 "$here/../lib/checks.py" user-campaign "$dir") || fail "the campaign's results: see above"
echo "points: 8 done and verified, Slurm jobs $jobs"
for j in $jobs; do
  got=$("$cluster" exec node1 scontrol show job -o "$j" | grep -o 'UserId=[^ ]*')
  [ "$got" = "UserId=$user($uid)" ] || fail "Slurm job $j: $got, not the user's"
done
others=$(find "$home" ! -uid "$uid" | head -5)
[ -z "$others" ] || fail "files in the user's home not the user's: $others"
# Nothing of the user's jobs stays on any host: no process of the user (its ssh session
# has ended), no job directory of pvmd or the COP stack in any host's /tmp.
leftovers() {
  local h
  for h in $hosts; do
    in_mnt "$h" sh -c "pgrep -u $uid -a | sed 's/^/$h: /'; ls -d /tmp/copbench-slurm-* 2>/dev/null | sed 's/^/$h: /'"
  done
}
nothing_left() { left=$(leftovers); [ -z "$left" ]; }
wait_until 60 nothing_left || fail "left behind: $left"
after=$(root_procs)
[ "$after" = "$before" ] || fail "root processes changed on the hosts: before: $before; after: $after"
echo "no process of the user left; root processes unchanged: $after"
echo "user: ok ($((SECONDS - t0)) s in all)"
