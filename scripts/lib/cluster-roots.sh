# Hosts with their own root filesystem (scripts/cluster up --own-roots).
#
# Each host's root is an overlay over this machine's /: the lower layer is this
# machine's root filesystem as it is (the kernel, and every package already installed,
# stay shared and cost nothing), the upper layer STATE/roots/HOST/upper takes every
# file the host writes (apt, copies, builds: what Ansible does on one host is on no
# other). Its home is STATE/roots/HOST/home at /root, empty at up. The overlay exists
# only in the host's own mount namespace (cluster-init.sh mounts it and pivots into
# it), so it goes with the host's last process; down then removes STATE/roots.
# Only the root filesystem is the lower layer: file systems mounted below / on this
# machine are not in it. The checkout and the build are hidden (an empty read-only
# tmpfs at their path), so a host has the suite only where provisioning put it.
# The state directory stays at its path (sshd's configuration and host keys), its
# roots/ hidden: no host sees another's files.
# Sourced by scripts/lib/cluster.sh (the control side) and by cluster-init.sh inside
# a host (cluster_roots_enter, which needs nothing else).

# Inside the host (PID 1, its own mount namespace, private propagation): build the
# root at STATE/roots/NAME/merged and pivot into it. Usage: NAME STATE CHECKOUT BUILD
cluster_roots_enter() {
  local name=$1 state=$2 checkout=$3 build=$4 r new d
  r=$state/roots/$name
  new=$r/merged
  mkdir -p "$r/upper" "$r/work" "$r/home" "$new" || return 1
  mount -t overlay overlay -o "lowerdir=/,upperdir=$r/upper,workdir=$r/work" "$new" || return 1
  mount --rbind /dev "$new/dev" &&
    mount -t tmpfs -o mode=1777 tmpfs "$new/dev/shm" &&
    mount -t proc proc "$new/proc" &&
    mount --rbind /sys "$new/sys" &&
    mount -t tmpfs -o mode=0755,size=64m tmpfs "$new/run" &&
    mount -t tmpfs -o mode=1777 tmpfs "$new/tmp" &&
    mount --bind "$r/home" "$new/root" || return 1
  for d in "$checkout" "$build"; do
    if [ -n "$d" ] && [ -d "$new$d" ]; then
      mount -t tmpfs -o mode=0755,size=1m tmpfs "$new$d" || return 1
    fi
  done
  mkdir -p "$new$state" && mount --bind "$state" "$new$state" &&
    mount -t tmpfs -o ro,mode=0755,size=1m tmpfs "$new$state/roots" || return 1
  for d in "$checkout" "$build"; do
    if [ -n "$d" ] && mountpoint -q "$new$d"; then
      mount -o remount,ro "$new$d" || return 1
    fi
  done
  mount --bind "$state/hosts" "$new/etc/hosts" || return 1
  # The old root is stacked on the new one, then detached: nothing of this machine's
  # mount tree is left in the host's namespace.
  cd "$new" && pivot_root . . && umount -l . && cd / || return 1
}

# ---------------------------------------------------------------- control side

# Fresh upper, work and home directories for each host, and the repository the hosts
# clone in build mode (copbench_git_url): this checkout's commits, in the state
# directory the hosts see.
cluster_roots_prepare() {
  local name
  rm -rf "$CLUSTER_STATE/roots" "$CLUSTER_STATE/git"
  git clone -q --bare "$COPBENCH_ROOT" "$CLUSTER_STATE/git/copbench.git" ||
    die "cannot make $CLUSTER_STATE/git/copbench.git from $COPBENCH_ROOT (a git checkout)"
  for name in "$@"; do
    mkdir -p "$CLUSTER_STATE/roots/$name/upper" "$CLUSTER_STATE/roots/$name/work" &&
      mkdir -m 0700 "$CLUSTER_STATE/roots/$name/home" || die "cannot make $CLUSTER_STATE/roots/$name"
  done
}

# Mounts of this cluster's roots still in any mount namespace (one line each; empty
# when none). Every process's mountinfo is read: a host's mounts are only in its own.
cluster_roots_mounts() {
  cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -F -- "$CLUSTER_STATE/roots/" |
    awk '{print $5}' | sort -u
}

# After every host's processes are gone (their mount namespaces with them).
cluster_roots_remove() {
  rm -rf "$CLUSTER_STATE/git"
  [ -d "$CLUSTER_STATE/roots" ] || return 0
  [ -z "$(cluster_roots_mounts)" ] || return 0   # named by cluster_leftovers
  rm -rf "$CLUSTER_STATE/roots"
}
