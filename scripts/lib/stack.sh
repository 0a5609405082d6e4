# The lifecycle of the daemons a COP or PVM run needs, in one place: a private pvmd
# (pvmd_start / pvmd_stop / pvmd_status) and the COP stack, copd and one copdrv per node
# (cop_stack_start / cop_stack_stop / cop_stack_status; seed 000 ch. V: the controller and
# the per-node channel driver). Sourced by scripts/cop-stack and copbench-pvmd-local
# (which the cop worker's launcher runs); the build tree has a copy in bin/lib/
# beside them, so nothing built reads the source tree. Do not run it.
#
# The caller sets COPBENCH_BIN (where copd, copdrv and the workers are) and `me` (the
# name its messages start with). Each daemon is started, waited for and stopped by
# lib/daemons.sh (sourced here; the private pvmd's pvmd_start / pvmd_stop / pvmd_status
# are there too): PID files with the /proc start time, readiness by the daemon's own
# ready file. The COP stack functions expect `set -euo pipefail` (run them in a subshell
# where the caller does not want to exit with them).

# log MESSAGE: progress, to stderr; fail MESSAGE: one line naming $me, then exit 1.
declare -F log >/dev/null || log() { printf '[copbench] %s\n' "$*" >&2; }
declare -F fail >/dev/null || fail() { printf '%s: %s\n' "${me:-copbench}" "$*" >&2; exit 1; }

# shellcheck source=scripts/lib/daemons.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemons.sh"

# ================================================================ the COP stack
#
# Node k drives channel (k-1)%K+1 of level-1 controller (k-1)/K (K = --per-controller,
# default 64: one copd, node k on its channel k). With more than one level-1 copd a
# level-2 copd serves them as its channels (seed 000 ch. IV, Figure 5): copd is CNTNO 0,
# copd<c> CNTNO c, copl2 the level 2. cop_stack_start waits until every copd listens and
# every copdrv has its socket, then prints the exports tasks need: node k's tasks use
# COP_DRIVER=$COP_DRIVER_k. If a daemon dies or does not come up, it says which in one
# line, stops what it started and fails. DIR holds stack.env, the PID files and the
# daemons' logs (scripts/cop-stack's header says the rest).

dir=${TMPDIR:-/tmp}/copbench-cop-stack.$(id -u)
DAEMON_TIMEOUT=${COP_STACK_TIMEOUT:-${DAEMON_TIMEOUT:-20}}
DAEMON_HOST_ENV=()
max_channels=64

# ---------------------------------------------------------------- recorded state

# Each daemon's PID file, ready file and log in DIR (lib/daemons.sh).
pid_of() { daemon_pid "$dir" "$1" || true; }
# The level-1 copd of the stack: copd (CNTNO 0), copd1, copd2, ...
copd_name() { if [ "$1" = 0 ]; then echo copd; else echo "copd$1"; fi; }
copd_names() {
  local c
  for ((c = 0; c < ${STACK_CONTROLLERS:-1}; c++)); do copd_name "$c"; done
}
alive() { daemon_alive "$dir" "$1"; }

load_state() {
  [ -f "$dir/stack.env" ] || return 1
  # shellcheck source=/dev/null
  source "$dir/stack.env"
}

last_log_line() { daemon_last_log_line "$dir/$1.log"; }
stop_one() { daemon_stop "$dir" "$1" || true; }

stop_stack() {
  local n
  load_state || return 0
  for n in $STACK_NODES; do stop_one "node$n"; done
  for n in $(copd_names); do stop_one "$n"; done
  stop_one copl2
  rm -f "$dir/stack.env"
}

# ---------------------------------------------------------------- start

# A path as the process PID sees it (its own mount namespace: a cluster host's /tmp).
in_root_of() { echo "/proc/$1/root$2"; }

abort_start() {
  local msg=$1
  stop_stack
  fail "$msg"
}

print_exports() {
  local n drivers=""
  for n in $STACK_NODES; do drivers+=" COP_DRIVER_$n=$STACK_DIR/node$n"; done
  echo "export COP_STACK_DIR=$STACK_DIR COP_CONTROLLER=$STACK_CONTROLLER COP_PER_CONTROLLER=$STACK_PER_CONTROLLER"
  echo "export${drivers}"
  echo "# tasks of one job name it with COP_JOB (each job its own partition; default: the PVM virtual machine)"
  echo "# node k's tasks need COP_DRIVER=\$COP_DRIVER_k; for a quick try on node ${STACK_NODES%% *}:"
  echo "export COP_DRIVER=$STACK_DIR/node${STACK_NODES%% *}"
}

# What stop and status need, written before anything starts and after each copd.
save_state() {
  local v
  for v in STACK_DIR STACK_MODE STACK_NODES STACK_PORT STACK_CONTROLLER STACK_CONTROLLER_HOST_PID COPD COPDRV \
    STACK_PER_CONTROLLER STACK_CONTROLLERS STACK_PORTS STACK_L2; do
    printf '%s=%q\n' "$v" "${!v}"
  done >"$dir/stack.env.tmp"
  mv "$dir/stack.env.tmp" "$dir/stack.env"
}

# The stack's cluster key (cop/link.h "Keys": every frame's MAC derives from it), made
# afresh at each start: 32 random bytes, mode 0600, in DIR; copd and every copdrv get
# --key DIR/cluster.key. put_key IPID puts it where host IPID's daemons read that path.
make_key() {
  local f=$dir/cluster.key
  (umask 077 && head -c 32 /dev/urandom >"$f.tmp" && mv -f "$f.tmp" "$f") ||
    abort_start "cannot write the cluster key $f"
}
put_key() {
  local to
  [ -n "$1" ] || return 0
  to=$(in_root_of "$1" "$dir/cluster.key")
  [ "$to" -ef "$dir/cluster.key" ] && return 0
  (umask 077 && mkdir -p "$(dirname "$to")" && install -m 0600 "$dir/cluster.key" "$to") ||
    abort_start "cannot put the cluster key into host $1's $dir"
}

# start_copd NAME PORT IPID IP ARGS...: copd NAME on IP:PORT (PORT empty: any free port,
# which copd's ready file names) in host IPID (here when empty), until it is ready (a
# level-1 copd under a level 2: registered with it); its port in started_port.
start_copd() {
  local name=$1 want=$2 ipid=$3 ip=$4 copd_link_opts=()
  shift 4
  # copd's link side (docs/ARCHITECTURE.md "Environment variables"): its I/O threads
  # (unset: copd's default) and busy polling on a controller node with cores of its own.
  if [ -n "${COPD_IO_THREADS:-}" ]; then
    [[ $COPD_IO_THREADS =~ ^[0-9]+$ ]] && [ "$COPD_IO_THREADS" -ge 1 ] && [ "$COPD_IO_THREADS" -le 64 ] ||
      abort_start "COPD_IO_THREADS must be 1..64, got '$COPD_IO_THREADS'"
    copd_link_opts+=(--io-threads "$COPD_IO_THREADS")
  fi
  case ${COPD_POLL:-0} in
    0) ;;
    1) copd_link_opts+=(--poll) ;;
    *) abort_start "COPD_POLL must be 0 or 1, got '$COPD_POLL'" ;;
  esac
  log "starting $name on $ip:${want:-(a free port)} ($* ${copd_link_opts[*]}, $STACK_MODE)"
  daemon_start "$dir" "$name" copd ${ipid:+--in "$ipid"} -- --listen "$ip:${want:-0}" "$@" \
    --poll-us "${COP_POLL_US:-0}" "${copd_link_opts[@]}" --key "$dir/cluster.key" ||
    abort_start "$DAEMON_ERROR"
  started_port=$(daemon_field "$dir" "$name" port)
}

cop_stack_start() {
  local cluster=0 port="" channels="" nodes=() n max=0 ipid ctl_ip local_ip pid count="" per=${COP_PER_CONTROLLER:-64} c
  local max_nodes=$((max_channels * max_channels))
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) [ $# -ge 2 ] || fail "--nodes needs a number"; count=$2; shift 2 ;;
      --cluster) cluster=1; shift ;;
      --dir) [ $# -ge 2 ] || fail "--dir needs a directory"; dir=$2; shift 2 ;;
      --port) [ $# -ge 2 ] || fail "--port needs a number"; port=$2; shift 2 ;;
      --channels) [ $# -ge 2 ] || fail "--channels needs a number"; channels=$2; shift 2 ;;
      --per-controller) [ $# -ge 2 ] || fail "--per-controller needs a number"; per=$2; shift 2 ;;
      node[0-9]*|[0-9]*) n=${1#node}
        [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $max_nodes ] ||
          fail "not a node: '$1' (a number 1..$max_nodes or node<k>)"
        nodes+=("$((10#$n))"); shift ;;
      *) fail "start: unknown argument '$1' (usage: start [--nodes N | NODE...] [--per-controller K] [--cluster] [--dir DIR] [--port P] [--channels C])" ;;
    esac
  done
  if [ -n "$count" ]; then
    [ ${#nodes[@]} -eq 0 ] || fail "give either --nodes N or a list of nodes, not both"
    [[ $count =~ ^[0-9]+$ ]] && [ "$count" -ge 1 ] && [ "$count" -le $max_nodes ] ||
      fail "--nodes must be 1..$max_nodes, got '$count'"
    for ((n = 1; n <= count; n++)); do nodes+=("$n"); done
  fi
  if [ -n "$port" ]; then
    [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || fail "--port must be 1..65535, got '$port'"
  fi
  [[ $dir == /* ]] || dir=$PWD/$dir

  COPD=${COPD:-$COPBENCH_BIN/copd}
  COPDRV=${COPDRV:-$COPBENCH_BIN/copdrv}
  [ -x "$COPD" ] || fail "copd is not built ($COPD): build the suite first (cmake --build $(dirname "$COPBENCH_BIN"))"
  [ -x "$COPDRV" ] || fail "copdrv is not built ($COPDRV): build the suite first (cmake --build $(dirname "$COPBENCH_BIN"))"
  COPD=$(readlink -f "$COPD")
  COPDRV=$(readlink -f "$COPDRV")

  local host_pids=()
  if [ $cluster = 1 ]; then
    # The emulated cluster belongs to a checkout (its state is there): the build tree's
    # copy names it in lib/checkout.sh.
    # shellcheck source=scripts/lib/cluster.sh
    COPBENCH_ROOT=${COPBENCH_CHECKOUT:-$COPBENCH_ROOT} source "${COPBENCH_CHECKOUT:-$COPBENCH_ROOT}/scripts/lib/cluster.sh"
    cluster_load || fail "--cluster: no emulated cluster $CLUSTER_ID is up (scripts/cluster up)"
    DAEMON_HOST_ENV=("${CLUSTER_HOST_ENV[@]}")
    [ "$CLUSTER_MODE" = netns ] ||
      fail "--cluster: cluster $CLUSTER_ID runs in $CLUSTER_MODE mode (not root): start without --cluster"
    if [ ${#nodes[@]} -eq 0 ]; then
      for ((n = 1; n <= CLUSTER_N; n++)); do nodes+=("$n"); done
    fi
    for n in "${nodes[@]}"; do
      [ "$n" -le "$CLUSTER_N" ] || fail "--cluster: cluster $CLUSTER_ID has nodes 1..$CLUSTER_N, not node$n"
    done
    ipid=$(cluster_init_pid "$CLUSTER_CONTROLLER") || fail "--cluster: host $CLUSTER_CONTROLLER is not running"
    ctl_ip=$CLUSTER_COP_NET.$CLUSTER_CONTROLLER_OCTET
  else
    [ ${#nodes[@]} -gt 0 ] || nodes=(1 2 3 4)
    ipid=""
    ctl_ip=127.0.0.1
  fi
  mapfile -t nodes < <(printf '%s\n' "${nodes[@]}" | sort -n -u)
  max=${nodes[-1]}
  [[ $per =~ ^[0-9]+$ ]] && [ "$per" -ge 1 ] && [ "$per" -le $max_channels ] ||
    fail "--per-controller must be 1..$max_channels, got '$per'"
  [ $(( (max + per - 1) / per )) -le $max_channels ] ||
    fail "node$max needs more than $max_channels level-1 controllers of $per channels"
  if [ $(( (max + per - 1) / per )) -gt 1 ]; then
    [ -z "$channels" ] || fail "--channels is for one controller; with --per-controller each level-1 copd has $per"
    channels=$per
  elif [ -n "$channels" ]; then
    [[ $channels =~ ^[0-9]+$ ]] && [ "$channels" -ge 1 ] && [ "$channels" -le $max_channels ] ||
      fail "--channels must be 1..$max_channels, got '$channels'"
    [ "$channels" -ge "$max" ] || fail "--channels $channels is too few for node$max (node k drives channel k)"
  else
    channels=$max
  fi
  if [ $cluster = 1 ]; then
    for n in "${nodes[@]}"; do
      host_pids[n]=$(cluster_init_pid "node$n") || fail "--cluster: host node$n is not running"
    done
  fi

  # A stack already in DIR: refuse while any of it runs, clear it when all of it is gone.
  if load_state; then
    for n in copl2 $(copd_names) $(printf 'node%s ' $STACK_NODES); do
      alive "$n" && fail "a COP stack already runs in $dir ($n, pid $(pid_of "$n")): stop it first ($me stop --dir $dir)"
    done
    stop_stack
  fi

  mkdir -p "$dir"
  rm -f "$dir"/*.log
  STACK_DIR=$dir
  STACK_MODE=$([ $cluster = 1 ] && echo cluster || echo loopback)
  STACK_NODES="${nodes[*]}"
  STACK_CONTROLLER_HOST_PID=$ipid
  STACK_PER_CONTROLLER=$per
  STACK_CONTROLLERS=$(( (max + per - 1) / per ))
  STACK_PORTS="" STACK_L2="" STACK_PORT="" STACK_CONTROLLER=""
  save_state
  make_key
  put_key "$ipid"
  if [ "$STACK_CONTROLLERS" -gt 1 ]; then
    start_copd copl2 "" "$ipid" "$ctl_ip" --level 2 --channels "$STACK_CONTROLLERS"
    STACK_L2=$ctl_ip:$started_port
    save_state
  fi
  for ((c = 0; c < STACK_CONTROLLERS; c++)); do
    local args=(--channels "$channels")
    [ "$STACK_CONTROLLERS" = 1 ] || args+=(--cntno "$c" --parent "$STACK_L2")
    start_copd "$(copd_name "$c")" "$([ "$c" = 0 ] && echo "$port")" "$ipid" "$ctl_ip" "${args[@]}"
    STACK_PORTS+="${STACK_PORTS:+ }$started_port"
    if [ "$c" = 0 ]; then STACK_PORT=$started_port STACK_CONTROLLER=$ctl_ip:$started_port; fi
    save_state
  done
  local ports
  read -r -a ports <<<"$STACK_PORTS"

  # Every copdrv at once, then each awaited until it has registered its channel and
  # serves its socket (all of them, so that each is either recorded or stopped).
  local launched=() failed=""
  for n in "${nodes[@]}"; do
    if [ $cluster = 1 ]; then
      ipid=${host_pids[n]}
      local_ip=$CLUSTER_COP_NET.$n
      put_key "$ipid"
    else
      ipid="" local_ip=127.0.0.1
    fi
    if daemon_launch "$dir" "node$n" copdrv ${ipid:+--in "$ipid"} -- --channel "$(((n - 1) % per + 1))" \
      --controller "$ctl_ip:${ports[(n - 1) / per]}" --local "$local_ip" --dir "$dir/node$n" --key "$dir/cluster.key"; then
      launched+=("$n")
    else
      failed=${failed:-"copdrv of node$n: $DAEMON_ERROR"}
      break
    fi
  done
  for n in "${launched[@]}"; do
    daemon_await "$dir" "node$n" || failed=${failed:-"copdrv of node$n: $DAEMON_ERROR"}
  done
  [ -z "$failed" ] || abort_start "$failed"
  log "COP stack up: copd $STACK_CONTROLLER${STACK_L2:+ and $((STACK_CONTROLLERS - 1)) more level-1 copd under the level-2 copd $STACK_L2}, copdrv on node${STACK_NODES// /, node} (state $dir)"
  print_exports
}

# ---------------------------------------------------------------- stop, status

cop_stack_dir_only() {
  while [ $# -gt 0 ]; do
    case $1 in
      --dir) [ $# -ge 2 ] || fail "--dir needs a directory"; dir=$2; shift 2 ;;
      *) fail "unknown argument '$1' (usage: stop|status [--dir DIR])" ;;
    esac
  done
  [[ $dir == /* ]] || dir=$PWD/$dir
}

cop_stack_stop() {
  cop_stack_dir_only "$@"
  if ! load_state; then
    log "no COP stack in $dir: nothing to stop"
    return 0
  fi
  stop_stack
  log "COP stack in $dir stopped"
}

cop_stack_status() {
  local bad=0 n
  cop_stack_dir_only "$@"
  load_state || { echo "no COP stack in $dir"; return 1; }
  echo "COP stack in $dir: $STACK_MODE, copd $STACK_CONTROLLER, nodes $STACK_NODES${STACK_L2:+, level-2 copd $STACK_L2}"
  for n in $([ -z "${STACK_L2:-}" ] || echo copl2) $(copd_names); do
    if alive "$n"; then
      echo "  $n: running (pid $(pid_of "$n"))"
    else
      echo "  $n: MISSING (last log line: $(last_log_line "$n"))"
      bad=1
    fi
  done
  local per=${STACK_PER_CONTROLLER:-64}
  for n in $STACK_NODES; do
    if alive "node$n"; then
      echo "  node$n: copdrv running (pid $(pid_of "node$n"), controller $(((n - 1) / per)) channel $(((n - 1) % per + 1)), COP_DRIVER=$STACK_DIR/node$n)"
    else
      echo "  node$n: copdrv MISSING (last log line: $(last_log_line "node$n"))"
      bad=1
    fi
  done
  return $bad
}
