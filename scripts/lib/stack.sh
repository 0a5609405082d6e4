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
# The stack is what `copbench-daemon plan` (cop/stack/plan.h, the one description of a
# stack) lists: node k drives channel (k-1)%K+1 of level-1 controller (k-1)/K (K =
# --per-controller, default 64: one copd, node k on its channel k); with more than one
# level-1 copd a level-2 copd serves them as its channels (seed 000 ch. IV, Figure 5):
# copd is CNTNO 0, copd<c> CNTNO c, copl2 the level 2, node<k> node k's copdrv. The plan
# is kept in DIR/stack.plan; cop_stack_start starts its daemons in its order, waits until
# every copd listens and every copdrv has its socket, then prints the exports tasks need:
# node k's tasks use COP_DRIVER=$COP_DRIVER_k. If a daemon dies or does not come up, it
# says which in one line, stops what it started and fails. DIR holds stack.env, the plan,
# the PID files and the daemons' logs (scripts/cop-stack's header says the rest).

dir=${TMPDIR:-/tmp}/copbench-cop-stack.$(id -u)
DAEMON_TIMEOUT=${COP_STACK_TIMEOUT:-${DAEMON_TIMEOUT:-20}}
DAEMON_HOST_ENV=()

# ---------------------------------------------------------------- recorded state

# Each daemon's PID file, ready file and log in DIR (lib/daemons.sh).
pid_of() { daemon_pid "$dir" "$1" || true; }
alive() { daemon_alive "$dir" "$1"; }
# The stack's daemons in start order (the plan's first field).
plan_names() { cut -f1 "$dir/stack.plan" 2>/dev/null || true; }

load_state() {
  [ -f "$dir/stack.env" ] || return 1
  # shellcheck source=/dev/null
  source "$dir/stack.env"
}

last_log_line() { daemon_last_log_line "$dir/$1.log"; }
stop_one() { daemon_stop "$dir" "$1" || true; }

# Every daemon of the plan, the copdrv first, the level 2 last.
stop_stack() {
  local n
  load_state || return 0
  for n in $(plan_names | tac); do stop_one "$n"; done
  rm -f "$dir/stack.env" "$dir/stack.plan"
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

# start_copd NAME IPID ARGS...: copd NAME with the plan's ARGS (--listen IP:PORT, port 0:
# any free port, which copd's ready file names) in host IPID (here when empty), until it
# is ready (a level-1 copd under a level 2: registered with it).
start_copd() {
  local name=$1 ipid=$2 copd_link_opts=()
  shift 2
  # copd's link side (docs/ARCHITECTURE.md "Environment variables"): its I/O threads
  # (unset: copd's default), busy polling on a controller node with cores of its own, its run path.
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
  # copd's run path (issue 36): COPD_RUNS=0 gives the element path, for comparison.
  case ${COPD_RUNS:-} in
    "") ;;
    0 | 1) copd_link_opts+=(--runs "$COPD_RUNS") ;;
    *) abort_start "COPD_RUNS must be 0 or 1, got '$COPD_RUNS'" ;;
  esac
  log "starting $name ($*${copd_link_opts[*]:+ ${copd_link_opts[*]}}, $STACK_MODE)"
  daemon_start "$dir" "$name" copd ${ipid:+--in "$ipid"} -- "$@" \
    --poll-us "${COP_POLL_US:-0}" "${copd_link_opts[@]}" --key "$dir/cluster.key" ||
    abort_start "$DAEMON_ERROR"
}

# The options of start: the nodes (NODES), --cluster, DIR, the port and the channels.
parse_start() {
  local n count=""
  while [ $# -gt 0 ]; do
    case $1 in
      --nodes) [ $# -ge 2 ] || fail "--nodes needs a number"; count=$2; shift 2 ;;
      --cluster) cluster=1; shift ;;
      --dir) [ $# -ge 2 ] || fail "--dir needs a directory"; dir=$2; shift 2 ;;
      --port) [ $# -ge 2 ] || fail "--port needs a number"; port=$2; shift 2 ;;
      --channels) [ $# -ge 2 ] || fail "--channels needs a number"; channels=$2; shift 2 ;;
      --per-controller) [ $# -ge 2 ] || fail "--per-controller needs a number"; per=$2; shift 2 ;;
      # The plan refuses a node no stack holds; five digits keep the host list short till then.
      node[0-9]*|[0-9]*) n=${1#node}
        [[ $n =~ ^[0-9]{1,5}$ ]] && [ "$((10#$n))" -ge 1 ] || fail "not a node: '$1' (a number or node<k>)"
        nodes+=("$((10#$n))"); shift ;;
      *) fail "start: unknown argument '$1' (usage: start [--nodes N | NODE...] [--per-controller K] [--cluster] [--dir DIR] [--port P] [--channels C])" ;;
    esac
  done
  if [ -n "$count" ]; then
    [ ${#nodes[@]} -eq 0 ] || fail "give either --nodes N or a list of nodes, not both"
    [[ $count =~ ^[0-9]{1,5}$ ]] && [ "$count" -ge 1 ] || fail "--nodes must be a number of nodes, got '$count'"
    for ((n = 1; n <= count; n++)); do nodes+=("$n"); done
  fi
  if [ -n "$port" ]; then
    [[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] || fail "--port must be 1..65535, got '$port'"
  fi
  [[ $dir == /* ]] || dir=$PWD/$dir
  return 0
}

# --cluster: the emulated cluster's hosts (every node when none is named); ctl_host is
# the controller host as the plan names it (NAME=ADDR), host_pid[NAME] each host's init.
use_cluster() {
  local n
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
  host_pid[$CLUSTER_CONTROLLER]=$(cluster_init_pid "$CLUSTER_CONTROLLER") ||
    fail "--cluster: host $CLUSTER_CONTROLLER is not running"
  for n in "${nodes[@]}"; do
    host_pid[node$n]=$(cluster_init_pid "node$n") || fail "--cluster: host node$n is not running"
  done
  ctl_host=$CLUSTER_CONTROLLER=$CLUSTER_COP_NET.$CLUSTER_CONTROLLER_OCTET
}

# The plan of NODES (copbench-daemon plan) into DIR/stack.plan.tmp, or fail with its reason.
write_plan() {
  local hosts=() k max=${nodes[-1]} said
  [ -x "$COPBENCH_BIN/copplan" ] ||
    fail "copplan is not built ($COPBENCH_BIN/copplan): build the suite first (cmake --build $(dirname "$COPBENCH_BIN"))"
  for ((k = 1; k <= max; k++)); do
    if [ $cluster = 1 ]; then hosts+=("node$k=$CLUSTER_COP_NET.$k"); else hosts+=(local=127.0.0.1); fi
  done
  mkdir -p "$dir"
  said=$("$COPBENCH_BIN/copbench-daemon" plan --hosts "$(IFS=,; echo "${hosts[*]}")" --nodes "$(IFS=,; echo "${nodes[*]}")" \
    --per-controller "$per" --controllers "$ctl_host" --port "${port:-0}" ${channels:+--channels "$channels"} \
    --names stack 2>&1 >"$dir/stack.plan.tmp") || { rm -f "$dir/stack.plan.tmp"; fail "${said#copplan: }"; }
}

# Each daemon of the plan in its order: a copd at once (the next may name its address,
# @NAME), every copdrv launched, then each awaited until it has registered its channel
# and serves its socket (all of them, so that each is either recorded or stopped).
start_plan() {
  local f name address role args ipid i launched=() failed=""
  while IFS=$'\t' read -r -u 3 -a f; do
    name=${f[0]} address=${f[2]} role=${f[4]} args=("${f[@]:8}")
    for i in "${!args[@]}"; do
      [[ ${args[i]} == @* ]] && args[i]=$(daemon_field "$dir" "${args[i]#@}" address)
    done
    ipid=${host_pid[${f[1]}]:-}
    put_key "$ipid"
    case $role in
      level2) start_copd "$name" "$ipid" "${args[@]}"; STACK_L2=$(daemon_field "$dir" "$name" address) ;;
      level1) start_copd "$name" "$ipid" "${args[@]}"
        STACK_PORTS+="${STACK_PORTS:+ }$(daemon_field "$dir" "$name" port)"
        [ "${f[5]}" != 0 ] || STACK_PORT=$(daemon_field "$dir" "$name" port) STACK_CONTROLLER=$(daemon_field "$dir" "$name" address) ;;
      driver)
        [ -z "$failed" ] || continue
        if daemon_launch "$dir" "$name" copdrv ${ipid:+--in "$ipid"} -- "${args[@]}" --local "$address" \
          --dir "$dir/$name" --key "$dir/cluster.key"; then
          launched+=("$name")
        else
          failed="copdrv of $name: $DAEMON_ERROR"
        fi ;;
    esac
    [ "$role" = driver ] || save_state
  done 3<"$dir/stack.plan"
  for name in "${launched[@]}"; do
    daemon_await "$dir" "$name" || failed=${failed:-"copdrv of $name: $DAEMON_ERROR"}
  done
  [ -z "$failed" ] || abort_start "$failed"
}

cop_stack_start() {
  local cluster=0 port="" channels="" nodes=() n ctl_host=local=127.0.0.1 per=${COP_PER_CONTROLLER:-64}
  local -A host_pid=()
  parse_start "$@"
  COPD=${COPD:-$COPBENCH_BIN/copd}
  COPDRV=${COPDRV:-$COPBENCH_BIN/copdrv}
  [ -x "$COPD" ] || fail "copd is not built ($COPD): build the suite first (cmake --build $(dirname "$COPBENCH_BIN"))"
  [ -x "$COPDRV" ] || fail "copdrv is not built ($COPDRV): build the suite first (cmake --build $(dirname "$COPBENCH_BIN"))"
  COPD=$(readlink -f "$COPD")
  COPDRV=$(readlink -f "$COPDRV")
  if [ $cluster = 1 ]; then use_cluster; else [ ${#nodes[@]} -gt 0 ] || nodes=(1 2 3 4); fi
  mapfile -t nodes < <(printf '%s\n' "${nodes[@]}" | sort -n -u)
  write_plan

  # A stack already in DIR: refuse while any of it runs, clear it when all of it is gone.
  if load_state; then
    for n in $(plan_names); do
      alive "$n" && fail "a COP stack already runs in $dir ($n, pid $(pid_of "$n")): stop it first ($me stop --dir $dir)"
    done
    stop_stack
  fi

  rm -f "$dir"/*.log
  mv "$dir/stack.plan.tmp" "$dir/stack.plan"
  STACK_DIR=$dir
  STACK_MODE=$([ $cluster = 1 ] && echo cluster || echo loopback)
  STACK_NODES="${nodes[*]}"
  STACK_CONTROLLER_HOST_PID=${host_pid[${ctl_host%%=*}]:-}
  STACK_PER_CONTROLLER=$per
  STACK_CONTROLLERS=$(cut -f5 "$dir/stack.plan" | grep -c '^level1$')
  STACK_PORTS="" STACK_L2="" STACK_PORT="" STACK_CONTROLLER=""
  save_state
  make_key
  start_plan
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
  local bad=0 f
  cop_stack_dir_only "$@"
  load_state || { echo "no COP stack in $dir"; return 1; }
  echo "COP stack in $dir: $STACK_MODE, copd $STACK_CONTROLLER, nodes $STACK_NODES${STACK_L2:+, level-2 copd $STACK_L2}"
  while IFS=$'\t' read -r -a f; do
    if [ "${f[4]}" != driver ]; then
      if alive "${f[0]}"; then echo "  ${f[0]}: running (pid $(pid_of "${f[0]}"))"; else
        echo "  ${f[0]}: MISSING (last log line: $(last_log_line "${f[0]}"))"
        bad=1
      fi
    elif alive "${f[0]}"; then
      echo "  ${f[0]}: copdrv running (pid $(pid_of "${f[0]}"), controller ${f[5]} channel ${f[6]}, COP_DRIVER=$STACK_DIR/${f[0]})"
    else
      echo "  ${f[0]}: copdrv MISSING (last log line: $(last_log_line "${f[0]}"))"
      bad=1
    fi
  done <"$dir/stack.plan"
  return $bad
}
