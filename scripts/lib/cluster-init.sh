#!/bin/bash
# PID 1 of one emulated host (started by scripts/lib/cluster.sh inside the host's
# network namespace under unshare --pid --mount --uts --ipc). It gives the host
# its own /run, /tmp and /dev/shm, its hostname and /etc/hosts, the cluster's one
# home at /root (STATEDIR/home, shared by every host as a cluster's NFS home would
# be: provisioning writes the per-user files once, not 64 times), runs sshd
# in the foreground and reaps orphans (pvmd, orted and their children are
# re-parented to it). When it dies the kernel kills everything in the host.
# With ROOTS=own (scripts/cluster up --own-roots) the host gets its own root
# filesystem first (scripts/lib/cluster-roots.sh, cluster_roots_enter): an overlay
# over this machine's / and a home of its own; BUILD is then hidden like CHECKOUT.
# Usage: cluster-init.sh NAME STATEDIR CHECKOUT [ROOTS BUILD]
set -u
name=$1 state=$2 checkout=$3 roots=${4:-shared} build=${5:-}

fail() { echo "cluster-init[$name]: $*" >&2; exit 1; }

# The shared root (default): the host sees this machine's tree except its own /run,
# /tmp, /dev/shm and the cluster's one home at /root.
shared_root() {
  # The checkout must stay visible at the same path so binaries in build/ run here.
  # If it lives under /tmp or /root, carry it across the tmpfs that covers them.
  mount -t tmpfs -o mode=0755,size=64m tmpfs /run || fail "cannot mount /run"
  # So must the state directory (COPBENCH_CLUSTER_STATE) where it is not in the checkout.
  local carry="" carry_state=""
  case "$checkout/" in
    /tmp/*|/root/*) carry=/run/.copbench-checkout
                    mkdir -p "$carry" && mount --bind "$checkout" "$carry" || fail "cannot carry $checkout" ;;
  esac
  case "$state/" in
    "$checkout"/*) ;;
    /tmp/*|/root/*) carry_state=/run/.copbench-state
                    mkdir -p "$carry_state" && mount --bind "$state" "$carry_state" || fail "cannot carry $state" ;;
  esac
  # The home is taken while STATEDIR is still reachable (it may live under /tmp or /root,
  # which the next mounts cover), then moved to /root.
  mkdir -p /run/.copbench-home && mount --bind "$state/home" /run/.copbench-home ||
    fail "cannot bind $state/home"
  mount -t tmpfs -o mode=1777 tmpfs /tmp || fail "cannot mount /tmp"
  mount --move /run/.copbench-home /root || fail "cannot bind $state/home at /root"
  mount -t tmpfs -o mode=1777 tmpfs /dev/shm || fail "cannot mount /dev/shm"
  if [ -n "$carry" ]; then
    mkdir -p "$checkout" && mount --move "$carry" "$checkout" || fail "cannot restore $checkout"
  fi
  if [ -n "$carry_state" ]; then
    mkdir -p "$state" && mount --move "$carry_state" "$state" || fail "cannot restore $state"
  fi
  mount --bind "$state/hosts" /etc/hosts || fail "cannot bind /etc/hosts"
}

if [ "$roots" = own ]; then
  # shellcheck source=scripts/lib/cluster-roots.sh
  source "$(dirname "${BASH_SOURCE[0]}")/cluster-roots.sh"
  cluster_roots_enter "$name" "$state" "$checkout" "$build" || fail "cannot enter its own root (see above)"
else
  shared_root
fi
mkdir -p /run/sshd /run/copbench
hostname "$name"

/usr/sbin/sshd -D -e -f "$state/sshd_config" -h "$state/keys/$name.host_ed25519" \
  -E "$state/log/$name.sshd.log" &
sshd=$!

# A child's death interrupts wait; bash reaps every exited child, not only sshd.
# Without sshd the host is unreachable: end it (the kernel kills the rest).
while kill -0 "$sshd" 2>/dev/null; do
  wait "$sshd"
done
echo "cluster-init[$name]: sshd exited, host stops" >&2
