# The local emulated cluster: hosts as network namespaces on two bridges.
# Sourced by scripts/cluster after common.sh; every function here is cluster_*.
#
# One cluster per COPBENCH_CLUSTER_ID (0-9, default 0). The id is part of every
# kernel object's name (namespaces cb<id>-<host>, bridges cb<id>-pri/cb<id>-cop,
# veths cb<id>-<host>-p/-c) and the third octet of its addresses, so a test
# cluster can run beside a user's cluster. Everything the cluster is lives in its
# state directory: keys (kept across up/down), the generated ssh config, hosts
# file, inventory, PID files and logs.

# shellcheck source=scripts/lib/cluster-profiles.sh
source "$COPBENCH_ROOT/scripts/lib/cluster-profiles.sh"
# The files up writes for the hosts, ssh and Ansible (cluster_write_config,
# cluster_write_inventory); exec and status (cluster_exec, cluster_status).
# shellcheck source=scripts/lib/cluster-config.sh
source "$COPBENCH_ROOT/scripts/lib/cluster-config.sh"
# shellcheck source=scripts/lib/cluster-status.sh
source "$COPBENCH_ROOT/scripts/lib/cluster-status.sh"
# Hosts with their own root filesystem (up --own-roots).
# shellcheck source=scripts/lib/cluster-roots.sh
source "$COPBENCH_ROOT/scripts/lib/cluster-roots.sh"

CLUSTER_ID=${COPBENCH_CLUSTER_ID:-0}
[[ $CLUSTER_ID =~ ^[0-9]$ ]] || die "COPBENCH_CLUSTER_ID must be one digit 0-9, got '$CLUSTER_ID'"
CLUSTER_PREFIX="cb$CLUSTER_ID"
if [ "$CLUSTER_ID" = 0 ]; then
  CLUSTER_STATE=${COPBENCH_CLUSTER_STATE:-$COPBENCH_ROOT/.cluster}
else
  CLUSTER_STATE=${COPBENCH_CLUSTER_STATE:-$COPBENCH_ROOT/.cluster-$CLUSTER_ID}
fi
CLUSTER_PRIMARY_NET="198.18.$CLUSTER_ID"   # /24: the network MPI and PVM use
CLUSTER_COP_NET="198.19.$CLUSTER_ID"       # /24: the COP secondary network (channels)
CLUSTER_CONTROLLER=copctl
CLUSTER_CONTROLLER_OCTET=250
CLUSTER_BRIDGE_OCTET=254
CLUSTER_MAX_NODES=64                       # one COP controller has 64 channels
# Channels per level-1 controller (up --per-controller K): which controller host and
# channel each node has is the stack's plan (cluster_plan), as libcop maps it
# (COP_PER_CONTROLLER). With more than one level-1 controller a level-2 copd serves them
# as its channels (seed 000 ch. IV, Figure 5); it runs on copctl beside level-1
# controller 0, on its own port.
CLUSTER_PER_CONTROLLER=64
CLUSTER_L2_PORT=7041
CLUSTER_INIT="$COPBENCH_ROOT/scripts/lib/cluster-init.sh"
# Everything Slurm and munge keep on a host (configuration, munge key, state,
# spool, logs, PID files) is under this directory of the host's own /run
# (ansible role slurm, slurm_root): each host has its own, and it goes with the
# host's namespaces at down, the daemons with the host's PID namespace.
CLUSTER_SLURM_ROOT=/run/copbench/slurm

# What every process on a host needs in its environment, as root on Debian: sshd
# hands it to every session (SetEnv) and `cluster exec` sets it too.
CLUSTER_HOST_ENV=(
  PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  "SLURM_CONF=$CLUSTER_SLURM_ROOT/etc/slurm/slurm.conf"
)

cluster_is_root() { [ "$(id -u)" -eq 0 ]; }

# The COP stack of nodes node1..N with K channels per level-1 controller, as
# `copbench-daemon plan` describes it (cop/stack/plan.h, the one description of a stack:
# node H on channel (H-1)%K+1 of level-1 controller (H-1)/K, a level 2 above several):
# its tab-separated lines, --names hosts (each host its own copbench run directory);
# further arguments go to the plan (--controllers). Builds copplan when it is not built.
cluster_plan() {
  local n=$1 k=$2 i hosts=()
  shift 2
  [ -x "$COPBENCH_BUILD/bin/copplan" ] || build copplan >&2 || die "cannot build copplan (the stack's plan) in $COPBENCH_BUILD"
  for ((i = 1; i <= n; i++)); do hosts+=("node$i=$CLUSTER_COP_NET.$i"); done
  "$COPBENCH_BUILD/bin/copplan" --hosts "$(IFS=,; echo "${hosts[*]}")" --per-controller "$k" --names hosts "$@"
}

# Level-1 controller hosts, one per level-1 copd of the plan: copctl (CNTNO 0), copctl1, ...
cluster_controller_names() {
  local c=0 role plan
  plan=$(cluster_plan "$1" "${2:-64}") || die "no COP stack of $1 nodes with ${2:-64} channels per controller"
  for role in $(cut -f5 <<<"$plan"); do
    [ "$role" = level1 ] || continue
    if [ $c = 0 ]; then echo "$CLUSTER_CONTROLLER"; else echo "$CLUSTER_CONTROLLER$c"; fi
    c=$((c + 1))
  done
}

# Node names in COP channel order, then the controllers.
cluster_host_names() {
  local n=$1 i
  for ((i = 1; i <= n; i++)); do printf 'node%d\n' "$i"; done
  cluster_controller_names "$n" "${2:-64}"
}

cluster_octet() {
  case $1 in
    "$CLUSTER_CONTROLLER") echo $CLUSTER_CONTROLLER_OCTET ;;
    "$CLUSTER_CONTROLLER"[0-9]*) echo $((CLUSTER_CONTROLLER_OCTET - ${1#"$CLUSTER_CONTROLLER"})) ;;
    node*) echo "${1#node}" ;;
    *) die "not a cluster host: $1" ;;
  esac
}

cluster_netns() { echo "$CLUSTER_PREFIX-$1"; }

# Reads the recorded cluster description (mode, node count, profile, hosts).
cluster_load() {
  [ -f "$CLUSTER_STATE/cluster.env" ] || return 1
  # shellcheck source=/dev/null
  source "$CLUSTER_STATE/cluster.env"
  cluster_per_controller_env "${CLUSTER_PER_CONTROLLER:-64}"
}

# Tasks on the hosts map host H to controller (H-1)/K through COP_PER_CONTROLLER:
# sshd's SetEnv and `cluster exec` hand it to them (and env.sh, role common).
cluster_per_controller_env() {
  local e kept=()
  CLUSTER_PER_CONTROLLER=$1
  for e in "${CLUSTER_HOST_ENV[@]}"; do [[ $e == COP_PER_CONTROLLER=* ]] || kept+=("$e"); done
  CLUSTER_HOST_ENV=("${kept[@]}" "COP_PER_CONTROLLER=$1")
}

# Process ids: "<unshare pid> <init pid>" per host, written the moment they exist.
cluster_pidfile() { echo "$CLUSTER_STATE/pids/$1.pid"; }

# True when PID is the init of host NAME of this cluster: its command line names
# our init script and the host, and it sits in the host's network namespace. A
# PID recorded before a crash may since belong to someone else: never kill that.
cluster_pid_is_init() {
  local pid=$1 name=$2 cmd ns
  [ -r "/proc/$pid/cmdline" ] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"$CLUSTER_INIT $name "* ]] || return 1
  ns=/run/netns/$(cluster_netns "$name")
  [ -e "$ns" ] || return 0
  [ "$(stat -L -c %i "/proc/$pid/ns/net" 2>/dev/null)" = "$(stat -L -c %i "$ns" 2>/dev/null)" ]
}

cluster_pid_is_unshare() {
  local pid=$1 name=$2 cmd
  [ -r "/proc/$pid/cmdline" ] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmd == "unshare "*"$CLUSTER_INIT $name "* ]]
}

# The init PID of a running host, or nothing.
cluster_init_pid() {
  local f upid ipid
  f=$(cluster_pidfile "$1")
  [ -f "$f" ] || return 1
  read -r upid ipid <"$f" || true
  [ -n "${ipid:-}" ] && cluster_pid_is_init "$ipid" "$1" && echo "$ipid"
}

# ---------------------------------------------------------------- up

cluster_keys() {
  local name
  mkdir -p "$CLUSTER_STATE/keys"
  chmod 700 "$CLUSTER_STATE" "$CLUSTER_STATE/keys"
  [ -f "$CLUSTER_STATE/keys/id_ed25519" ] ||
    ssh-keygen -q -t ed25519 -N '' -C "copbench-cluster" -f "$CLUSTER_STATE/keys/id_ed25519"
  for name in "$@"; do
    [ -f "$CLUSTER_STATE/keys/$name.host_ed25519" ] ||
      ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$CLUSTER_STATE/keys/$name.host_ed25519"
  done
}

# Puts tc qdiscs of the profile on both ends of one host's veths.
cluster_apply_profile() {
  local profile=$1 name=$2 ns net args dev peer
  ns=$(cluster_netns "$name")
  while read -r net args; do
    [ -n "$net" ] || continue
    case $net in
      primary) dev="$CLUSTER_PREFIX-$name-p" peer=pri0 ;;
      cop) dev="$CLUSTER_PREFIX-$name-c" peer=cop0 ;;
      *) die "profile $profile names an unknown network '$net'" ;;
    esac
    # shellcheck disable=SC2086
    tc qdisc replace dev "$dev" root $args
    # shellcheck disable=SC2086
    ip netns exec "$ns" tc qdisc replace dev "$peer" root $args
  done < <("cluster_profile_$profile")
}

cluster_no_ipv6() {
  local dev
  for dev in "$@"; do
    [ -w "/proc/sys/net/ipv6/conf/$dev/disable_ipv6" ] && echo 1 >"/proc/sys/net/ipv6/conf/$dev/disable_ipv6"
  done
  return 0
}

cluster_all_hosts_run() {
  local name
  for name in $CLUSTER_HOSTS; do
    cluster_init_pid "$name" >/dev/null || return 1
  done
}

# Room in the kernel's ARP table for the cluster. The table is one for all network
# namespaces (its gc_thresh limits exist only in the initial namespace), and the
# hosts talk all to all (MPI's and PVM's direct TCP routes, ssh, copd): up to
# about 2 (N+2)^2 entries, against Linux's default hard limit of 1024. Past it the
# kernel drops packets whose neighbour it cannot add ("neighbor table overflow",
# table_fulls in /proc/net/stat/arp_cache): lost datagrams on the COP network and
# TCP connections that stall in retransmission, which at 32 and more hosts showed as
# link timeouts, tasks ended in the middle of a barrier and MPI runs that never
# finished. The limits are only ever raised (another cluster may be up beside this
# one), so they stay after down.
cluster_neighbour_room() {
  local n=$1 need key cur want
  need=$((2 * (n + 2) * (n + 2)))
  for key in 1:1 2:2 3:4; do
    cur=$(cat "/proc/sys/net/ipv4/neigh/default/gc_thresh${key%%:*}" 2>/dev/null) || return 0
    want=$((need * ${key##*:}))
    if [ "$cur" -lt "$want" ]; then
      echo "$want" >"/proc/sys/net/ipv4/neigh/default/gc_thresh${key%%:*}" ||
        log "could not raise net.ipv4.neigh.default.gc_thresh${key%%:*} to $want: at this size packets may be dropped"
    fi
  done
}

# One host: namespace, veths into both bridges, addresses, then init with sshd.
cluster_start_host() {
  local name=$1 roots=${2:-shared} ns o upid ipid i
  ns=$(cluster_netns "$name")
  o=$(cluster_octet "$name")
  ip netns add "$ns"
  # IPv4 only: no IPv6 neighbour discovery chatter, so interface counters show
  # exactly the traffic the suite makes on each network.
  ip netns exec "$ns" sh -c 'echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6; echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6' 2>/dev/null || true
  ip link add "$CLUSTER_PREFIX-$name-p" type veth peer name pri0 netns "$ns"
  ip link add "$CLUSTER_PREFIX-$name-c" type veth peer name cop0 netns "$ns"
  cluster_no_ipv6 "$CLUSTER_PREFIX-$name-p" "$CLUSTER_PREFIX-$name-c"
  ip link set "$CLUSTER_PREFIX-$name-p" master "$CLUSTER_PREFIX-pri" up
  ip link set "$CLUSTER_PREFIX-$name-c" master "$CLUSTER_PREFIX-cop" up
  ip -n "$ns" -batch - <<EOF
link set lo up
addr add $CLUSTER_PRIMARY_NET.$o/24 dev pri0
addr add $CLUSTER_COP_NET.$o/24 dev cop0
link set pri0 up
link set cop0 up
EOF
  ip netns exec "$ns" unshare --uts --ipc --mount --propagation private --pid --fork \
    --kill-child --mount-proc "$CLUSTER_INIT" "$name" "$CLUSTER_STATE" "$COPBENCH_ROOT" "$roots" "$COPBENCH_BUILD" \
    </dev/null >>"$CLUSTER_STATE/log/$name.init.log" 2>&1 &
  upid=$!
  echo "$upid" >"$(cluster_pidfile "$name")"
  ipid=""
  for ((i = 0; i < 200; i++)); do
    ipid=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null | awk '{print $1}') || true
    [ -n "$ipid" ] && cluster_pid_is_init "$ipid" "$name" && break
    ipid=""
    sleep 0.01
  done
  [ -n "$ipid" ] || die "host $name: init did not start (see $CLUSTER_STATE/log/$name.init.log)"
  echo "$upid $ipid" >"$(cluster_pidfile "$name")"
}

cluster_wait_sshd() {
  local name deadline=$((SECONDS + 20))
  for name in "$@"; do
    until timeout 1 bash -c "exec 3<>/dev/tcp/$CLUSTER_PRIMARY_NET.$(cluster_octet "$name")/22" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || die "host $name: sshd not listening after 20 s (see $CLUSTER_STATE/log/$name.sshd.log)"
      cluster_init_pid "$name" >/dev/null || die "host $name: init exited (see $CLUSTER_STATE/log/$name.init.log)"
      sleep 0.02
    done
  done
}

cluster_up() {
  local n=4 profile=native t0 names name k=64 roots=shared
  while [ $# -gt 0 ]; do
    case $1 in
      --own-roots) roots=own; shift ;;
      --per-controller) [ $# -ge 2 ] || die "--per-controller needs a number 1..64"; k=$2; shift 2 ;;
      --per-controller=*) k=${1#--per-controller=}; shift ;;
      --profile) [ $# -ge 2 ] || die "--profile needs a name ($CLUSTER_PROFILES)"; profile=$2; shift 2 ;;
      --profile=*) profile=${1#--profile=}; shift ;;
      [0-9]*) n=$1; shift ;;
      *) die "up: unknown argument '$1' (usage: up [N] [--profile NAME] [--per-controller K] [--own-roots])" ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $CLUSTER_MAX_NODES ] ||
    die "up: N must be 1..$CLUSTER_MAX_NODES, got '$n'"
  [[ " $CLUSTER_PROFILES " == *" $profile "* ]] || die "up: unknown profile '$profile' (known: $CLUSTER_PROFILES)"
  [[ $k =~ ^[0-9]+$ ]] && [ "$k" -ge 1 ] && [ "$k" -le 64 ] || die "up: --per-controller must be 1..64, got '$k'"
  t0=$(date +%s.%N)

  if ! cluster_is_root; then
    [ "$k" = 64 ] || die "up: --per-controller needs root (a host per controller); not root here"
    [ "$roots" = shared ] || die "up: --own-roots needs root (a mount namespace per host); not root here"
    cluster_up_loopback "$profile"
    return
  fi
  if cluster_load 2>/dev/null && [ "$CLUSTER_MODE" = netns ] && cluster_all_hosts_run; then
    die "cluster $CLUSTER_ID is already up ($CLUSTER_N nodes, profile $CLUSTER_PROFILE): run down first"
  fi
  if [ -f "$CLUSTER_STATE/cluster.env" ] || ip netns list | grep -q "^$CLUSTER_PREFIX-" ||
     ip -o link show | grep -q ": $CLUSTER_PREFIX-"; then
    log "cluster $CLUSTER_ID: leftovers of an earlier cluster found, taking them down first"
    cluster_down
  fi
  for tool in ip tc unshare nsenter ssh-keygen /usr/sbin/sshd; do
    command -v "$tool" >/dev/null || die "missing $tool: run scripts/lib/common.sh's ensure_packages (iproute2, util-linux, openssh-server)"
  done

  mapfile -t names < <(cluster_host_names "$n" "$k")
  cluster_per_controller_env "$k"
  mkdir -p "$CLUSTER_STATE/pids" "$CLUSTER_STATE/log" "$CLUSTER_STATE/cp"
  # The hosts' one home (cluster-init.sh binds it at /root): fresh for each cluster.
  rm -rf "$CLUSTER_STATE/home"
  mkdir -m 0700 "$CLUSTER_STATE/home"
  rm -f "$CLUSTER_STATE"/log/*.log
  [ "$roots" = shared ] || cluster_roots_prepare "${names[@]}"
  cluster_keys "${names[@]}"
  cluster_write_config "${names[@]}"
  # Written first, so that down knows what to remove even if up dies half-way.
  printf 'CLUSTER_MODE=netns\nCLUSTER_N=%s\nCLUSTER_PROFILE=%s\nCLUSTER_HOSTS="%s"\nCLUSTER_PER_CONTROLLER=%s\nCLUSTER_ROOTS=%s\n' \
    "$n" "$profile" "${names[*]}" "$k" "$roots" >"$CLUSTER_STATE/cluster.env"

  cluster_neighbour_room "$n"
  ip link add "$CLUSTER_PREFIX-pri" type bridge
  ip link add "$CLUSTER_PREFIX-cop" type bridge
  cluster_no_ipv6 "$CLUSTER_PREFIX-pri" "$CLUSTER_PREFIX-cop"
  ip addr add "$CLUSTER_PRIMARY_NET.$CLUSTER_BRIDGE_OCTET/24" dev "$CLUSTER_PREFIX-pri"
  ip link set "$CLUSTER_PREFIX-pri" up
  ip link set "$CLUSTER_PREFIX-cop" up
  for name in "${names[@]}"; do
    cluster_start_host "$name" "$roots"
    cluster_apply_profile "$profile" "$name"
  done
  cluster_write_inventory "$n" "$profile" "$k" "$roots"
  # Where the hosts have the suite (status runs copbench-daemon there): with own roots
  # the inventory's copbench_build, on the hosts only.
  [ "$roots" = shared ] ||
    sed -n 's/^    copbench_build: */CLUSTER_HOST_BUILD=/p' "$CLUSTER_STATE/inventory.yml" >>"$CLUSTER_STATE/cluster.env"
  cluster_wait_sshd "${names[@]}"
  [ "$roots" = shared ] || log "own roots: each host's / is an overlay over this machine's, its files in $CLUSTER_STATE/roots/HOST"
  log "cluster $CLUSTER_ID up: $n nodes + ${names[*]:n}${names[n+1]:+ (level-1 controllers of $k channels; level-2 copd on $CLUSTER_CONTROLLER port $CLUSTER_L2_PORT)}, profile $profile, primary $CLUSTER_PRIMARY_NET.0/24, COP $CLUSTER_COP_NET.0/24"
  log "inventory: $CLUSTER_STATE/inventory.yml   ssh: ssh -F $CLUSTER_STATE/ssh_config node1"
  CLUSTER_MODE=netns CLUSTER_N=$n cluster_print_hostfile >&2
  log "bring-up time: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f s", b-a}')"
}

# Without root there are no namespaces: one host, this machine, on loopback.
cluster_up_loopback() {
  local profile=$1 s="$CLUSTER_STATE"
  log "not root: no network namespaces; falling back to single-host mode on loopback"
  [ "$profile" = native ] || log "profile $profile needs root (tc); loopback stays unshaped"
  mkdir -p "$s/keys"
  chmod 700 "$s" "$s/keys"
  printf 'CLUSTER_MODE=loopback\nCLUSTER_N=1\nCLUSTER_PROFILE=native\nCLUSTER_HOSTS="node1"\n' >"$s/cluster.env"
  cat >"$s/inventory.yml.tmp" <<EOF
# Inventory of the single-host loopback fallback (generated by scripts/cluster up; do not edit).
# One host plays every part: compute node 1, head and COP controller.
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    copbench_checkout: $COPBENCH_ROOT
    copbench_build: $COPBENCH_BUILD
    copbench_shared_root: true
    copbench_install_packages: false
    copbench_primary_subnet: 127.0.0.0/8
    copbench_cop_subnet: 127.0.0.0/8
    copbench_link_profile: native
    copbench_log_dir: $s/log/{{ inventory_hostname }}
    copbench_run_dir: $s/run/{{ inventory_hostname }}
    copbench_cluster_key: $s/keys/id_ed25519
  children:
    compute:
      hosts:
        node1:
          # PVM and mpirun know this machine by its own name.
          copbench_hostname: $(hostname)
          copbench_channel: 1
          copbench_primary_ip: 127.0.0.1
          copbench_cop_ip: 127.0.0.1
    head:
      hosts:
        node1:
    cop_controller:
      hosts:
        node1:
EOF
  mv "$s/inventory.yml.tmp" "$s/inventory.yml"
  log "cluster $CLUSTER_ID up (loopback): inventory $s/inventory.yml"
  CLUSTER_MODE=loopback CLUSTER_N=1 cluster_print_hostfile >&2
}

# ---------------------------------------------------------------- down

cluster_kill_host() {
  local name=$1 f upid ipid i
  f=$(cluster_pidfile "$name")
  [ -f "$f" ] || return 0
  read -r upid ipid <"$f" || true
  if [ -n "${ipid:-}" ] && cluster_pid_is_init "$ipid" "$name"; then
    kill -KILL "$ipid" 2>/dev/null || true   # PID 1 of the host: the kernel ends the rest
  fi
  if [ -n "${upid:-}" ] && cluster_pid_is_unshare "$upid" "$name"; then
    kill -TERM "$upid" 2>/dev/null || true   # --kill-child takes its init along
    for ((i = 0; i < 200; i++)); do
      cluster_pid_is_unshare "$upid" "$name" || break
      sleep 0.01
    done
    cluster_pid_is_unshare "$upid" "$name" && kill -KILL "$upid" 2>/dev/null
  fi
  rm -f "$f"
}

cluster_down() {
  local names=() name ns link left pids
  if cluster_load 2>/dev/null; then
    read -ra names <<<"$CLUSTER_HOSTS"
    if [ "$CLUSTER_MODE" = loopback ]; then
      rm -f "$CLUSTER_STATE/cluster.env" "$CLUSTER_STATE/inventory.yml"
      log "cluster $CLUSTER_ID (loopback) down; services started by site.yml are stopped by teardown.yml"
      return 0
    fi
  fi
  cluster_is_root || die "down: not root, and the cluster in $CLUSTER_STATE is made of namespaces"
  # Hosts named by recorded PID files too, in case cluster.env was lost.
  if [ -d "$CLUSTER_STATE/pids" ]; then
    for f in "$CLUSTER_STATE"/pids/*.pid; do
      [ -e "$f" ] && names+=("$(basename "$f" .pid)")
    done
  fi
  # ansible's persistent ssh connections to the hosts (ansible_control_path_dir).
  if [ -d "$CLUSTER_STATE/cp" ]; then
    for f in "$CLUSTER_STATE"/cp/*; do
      [ -S "$f" ] && ssh -o ControlPath="$f" -O exit copbench-host >/dev/null 2>&1
    done
  fi
  for name in $(printf '%s\n' "${names[@]}" | sort -u); do
    cluster_kill_host "$name"
  done
  # Namespaces and links are found by this cluster's name prefix: only we make them.
  for ns in $(ip netns list | awk -v p="^$CLUSTER_PREFIX-" '$1 ~ p {print $1}'); do
    pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
    [ -z "$pids" ] || log "namespace $ns still holds processes we did not record ($pids): left alone"
    ip netns del "$ns" 2>/dev/null || true
  done
  for link in $(ip -o link show | awk -F': ' -v p="^$CLUSTER_PREFIX-" '{sub(/@.*/, "", $2)} $2 ~ p {print $2}'); do
    ip link del "$link" 2>/dev/null || true
  done
  cluster_roots_remove
  rm -f "$CLUSTER_STATE"/{cluster.env,inventory.yml,hosts,sshd_config,authorized_keys,ssh_config,known_hosts}
  left=$(cluster_leftovers)
  [ -z "$left" ] || die "down: still present: $left"
  # The hosts' home: no host is left to have it mounted.
  rm -rf "$CLUSTER_STATE/home"
  log "cluster $CLUSTER_ID down"
}

# Kernel objects and recorded processes of this cluster that still exist (empty when none).
cluster_leftovers() {
  local out="" ns links f mounts
  ns=$(ip netns list 2>/dev/null | awk -v p="^$CLUSTER_PREFIX-" '$1 ~ p {printf "%s ", $1}')
  links=$(ip -o link show 2>/dev/null | awk -F': ' -v p="^$CLUSTER_PREFIX-" '{sub(/@.*/, "", $2)} $2 ~ p {printf "%s ", $2}')
  [ -z "$ns" ] || out+="namespaces: $ns"
  [ -z "$links" ] || out+="links: $links"
  mounts=$(cluster_roots_mounts | tr '\n' ' ')
  [ -z "$mounts" ] || out+="mounts: $mounts"
  [ ! -d "$CLUSTER_STATE/roots" ] || out+="own roots: $CLUSTER_STATE/roots "
  if [ -d "$CLUSTER_STATE/pids" ]; then
    for f in "$CLUSTER_STATE"/pids/*.pid; do
      [ -e "$f" ] && out+="pid file: $f "
    done
  fi
  echo "$out"
}
