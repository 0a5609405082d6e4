# The lifecycle of the daemons a COP or PVM run needs, in one place: a private pvmd
# (pvmd_start / pvmd_stop / pvmd_status) and the COP stack, copd and one copdrv per node
# (cop_stack_start / cop_stack_stop / cop_stack_status; seed 000 ch. V: the controller and
# the per-node channel driver). Sourced by scripts/cop-stack, copbench-pvmd-local and
# copbench-cop-run; the build tree has a copy in bin/lib/
# beside them, so nothing built reads the source tree. Do not run it.
#
# The caller sets COPBENCH_BIN (where copd, copdrv and the workers are) and `me` (the
# name its messages start with). Every function that starts something records PIDs in
# its directory and stops only those PIDs, after checking each still runs what was
# started. The COP stack functions expect `set -euo pipefail` (run them in a subshell
# where the caller does not want to exit with them).

# log MESSAGE: progress, to stderr; fail MESSAGE: one line naming $me, then exit 1.
declare -F log >/dev/null || log() { printf '[copbench] %s\n' "$*" >&2; }
declare -F fail >/dev/null || fail() { printf '%s: %s\n' "${me:-copbench}" "$*" >&2; exit 1; }

# ================================================================ the private pvmd
#
# DIR becomes PVM_TMP, so this pvmd never meets another one of the same user. The host
# file gives the daemon an executable path (ep=) with the workers and the group server
# pvmgs in it (Debian installs pvmgs where PVM does not look). Root needs
# PVM_ALLOW_ROOT=1; PVM_RSH=/usr/bin/ssh is what PVM needs to add hosts.

pvm_root=/usr/lib/pvm3

_pvmd_file() { echo "$1/pvmd.$(id -u)"; }
_pvmd_running() { [ -f "$1/pvmd.pid" ] && kill -0 "$(cat "$1/pvmd.pid")" 2>/dev/null; }

# The exports a shell needs to use the pvmd of DIR.
pvmd_exports() {
  echo "export PVM_ROOT=$pvm_root PVM_TMP=$1 PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh"
}

# pvmd_start DIR: starts the pvmd (unless one of DIR runs) and prints its exports; PID in
# DIR/pvmd.pid. Returns 1 with one line on stderr when it does not come up.
pvmd_start() {
  local dir=$1 i
  mkdir -p "$dir"
  if _pvmd_running "$dir"; then pvmd_exports "$dir"; return 0; fi
  rm -f "$(_pvmd_file "$dir")" "$dir"/pvml.* "$dir"/pvmtmp*
  echo "* ep=$COPBENCH_BIN:$pvm_root/lib:$pvm_root/bin/LINUX64" >"$dir/hostfile"
  PVM_ROOT=$pvm_root PVM_TMP=$dir PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh \
    setsid "$pvm_root/lib/pvmd" "$dir/hostfile" >"$dir/pvmd.log" 2>&1 </dev/null &
  echo $! >"$dir/pvmd.pid"
  for ((i = 0; i < 100; i++)); do
    [ -e "$(_pvmd_file "$dir")" ] && { pvmd_exports "$dir"; return 0; }
    _pvmd_running "$dir" || break
    sleep 0.05
  done
  echo "copbench-pvmd-local: pvmd did not start (see $dir/pvmd.log)" >&2
  return 1
}

# pvmd_stop DIR: halts the pvmd of DIR (safe when none runs).
pvmd_stop() {
  local dir=$1 pid i
  if _pvmd_running "$dir"; then
    pid=$(cat "$dir/pvmd.pid")
    # A clean halt lets pvmd end its own tasks (pvmgs, leftover workers) first.
    echo halt | PVM_ROOT=$pvm_root PVM_TMP=$dir PVM_ALLOW_ROOT=1 timeout 5 "$pvm_root/lib/pvm" >/dev/null 2>&1 || true
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pvmd.pid" "$(_pvmd_file "$dir")"
}

# pvmd_status DIR: one line; 1 when no pvmd of DIR runs.
pvmd_status() {
  if _pvmd_running "$1"; then
    echo "pvmd running (pid $(cat "$1/pvmd.pid"), PVM_TMP=$1)"
  else
    echo "no pvmd (PVM_TMP=$1)"
    return 1
  fi
}

# True when the pvmd of $PVM_TMP (PVM's default /tmp when unset) is alive, as libpvm
# finds it: its daemon file names a socket that exists (or a TCP address).
pvm_alive() {
  local f="${PVM_TMP:-/tmp}/pvmd.$(id -u)" sock
  [ -f "$f" ] || return 1
  sock=$(head -n 1 "$f")
  [ "${sock:0:1}" != / ] || [ -e "$sock" ]
}

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
timeout_s=${COP_STACK_TIMEOUT:-20}
max_channels=64

# ---------------------------------------------------------------- recorded state

# The command line a PID must still have for us to treat it as ours.
expected_cmd() {
  case $1 in
    copd*|copl2) printf '%s --listen ' "$COPD" ;;
    node*) printf '%s --channel %s ' "$COPDRV" "$(( (${1#node} - 1) % ${STACK_PER_CONTROLLER:-64} + 1 ))" ;;
  esac
}

# True when PID runs the daemon NAME of this stack (a recorded PID may have been reused).
is_ours() {
  local pid=$1 name=$2 cmd
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  # Contains, not starts with: an interpreted stand-in runs as "INTERPRETER SCRIPT ARGS".
  [[ " $cmd" == *" $(expected_cmd "$name")"* ]]
}

pid_of() { cat "$dir/$1.pid" 2>/dev/null || true; }
# The level-1 copd of the stack: copd (CNTNO 0), copd1, copd2, ...
copd_name() { if [ "$1" = 0 ]; then echo copd; else echo "copd$1"; fi; }
copd_names() {
  local c
  for ((c = 0; c < ${STACK_CONTROLLERS:-1}; c++)); do copd_name "$c"; done
}
alive() { is_ours "$(pid_of "$1")" "$1"; }

load_state() {
  [ -f "$dir/stack.env" ] || return 1
  # shellcheck source=/dev/null
  source "$dir/stack.env"
}

last_log_line() {
  local line
  line=$(grep -v '^[[:space:]]*$' "$dir/$1.log" 2>/dev/null | tail -n 1) || true
  echo "${line:-no output}"
}

# SIGTERM, a grace period, then SIGKILL; only a PID that is still ours.
stop_one() {
  local name=$1 pid i
  pid=$(pid_of "$name")
  if [ -n "$pid" ] && is_ours "$pid" "$name"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      is_ours "$pid" "$name" || break
      sleep 0.05
    done
    if is_ours "$pid" "$name"; then
      log "$name (pid $pid) ignored SIGTERM for 5 s: killed"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$dir/$name.pid"
}

stop_stack() {
  local n
  load_state || return 0
  for n in $STACK_NODES; do stop_one "node$n"; done
  for n in $(copd_names); do stop_one "$n"; done
  stop_one copl2
  rm -f "$dir/stack.env"
}

# ---------------------------------------------------------------- start

# Runs a command in the mount/net/pid namespaces of host init IPID (or here when IPID is
# empty), as a daemon in its own session; prints the PID the daemon has on this machine.
launch() {
  local name=$1 ipid=$2 pid child i
  shift 2
  if [ -z "$ipid" ]; then
    setsid "$@" </dev/null >>"$dir/$name.log" 2>&1 &
    pid=$!
    # Until it has exec'd, the child still shows this script's command line.
    for ((i = 0; i < 200; i++)); do
      is_ours "$pid" "$name" && break
      [ -s "/proc/$pid/cmdline" ] || break   # gone (or a zombie)
      sleep 0.01
    done
    echo "$pid"
    return
  fi
  setsid nsenter -t "$ipid" -n -u -i -m -p --wd=/ env HOME=/root "${CLUSTER_HOST_ENV[@]}" "$@" \
    </dev/null >>"$dir/$name.log" 2>&1 &
  pid=$!
  # nsenter forks the daemon into the host's PID namespace and waits for it: the daemon
  # is nsenter's child, and that child's PID (as this machine sees it) is what we record.
  for ((i = 0; i < 200; i++)); do
    for child in $(cat "/proc/$pid/task/$pid/children" 2>/dev/null); do
      is_ours "$child" "$name" && { echo "$child"; return; }
    done
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -TERM "$pid" 2>/dev/null || true
  echo "-"
}

# Sockets bound to PORT in host IPID's network namespace (here when empty).
port_in_use() {
  local ipid=$1 port=$2 out
  if [ -n "$ipid" ]; then
    out=$(nsenter -t "$ipid" -n ss -Hlntu "sport = :$port" 2>/dev/null) || true
  else
    out=$(ss -Hlntu "sport = :$port" 2>/dev/null) || true
  fi
  [ -n "$out" ]
}

# True when process PID (as this machine sees it) has a socket bound to PORT.
port_owned_by() {
  local ipid=$1 port=$2 pid=$3 out
  if [ -n "$ipid" ]; then
    out=$(nsenter -t "$ipid" -n ss -Hlntup "sport = :$port" 2>/dev/null) || true
  else
    out=$(ss -Hlntup "sport = :$port" 2>/dev/null) || true
  fi
  [[ $out == *"pid=$pid,"* ]]
}

# wait_copd NAME PORT: waits until that copd has bound its port: 0; 1 when it exited first.
wait_copd() {
  local name=$1 port=$2 deadline=$((SECONDS + timeout_s)) pid
  pid=$(pid_of "$name")
  while :; do
    is_ours "$pid" "$name" || return 1
    port_owned_by "$STACK_CONTROLLER_HOST_PID" "$port" "$pid" && return 0
    [ $SECONDS -lt $deadline ] ||
      abort_start "$name is not listening on port $port after $timeout_s s (log: $dir/$name.log)"
    sleep 0.05
  done
}

# A path as the process PID sees it (its own mount namespace: a cluster host's /tmp).
in_root_of() { echo "/proc/$1/root$2"; }

abort_start() {
  local msg=$1
  stop_stack
  fail "$msg"
}

# Waits until every copdrv has created its socket (copd still running); one line if one dies.
wait_ready() {
  local deadline=$((SECONDS + timeout_s)) pending n pid
  while :; do
    pending=""
    for n in $(copd_names) $([ "${STACK_CONTROLLERS:-1}" -gt 1 ] && echo copl2); do
      pid=$(pid_of "$n")
      is_ours "$pid" "$n" || abort_start "$n exited during start: $(last_log_line "$n") (log: $dir/$n.log)"
      # A level-1 copd takes X commands once the level 2 has it as a channel.
      [ "$n" = copl2 ] || [ "${STACK_CONTROLLERS:-1}" = 1 ] ||
        grep -q "registered with the level-2 controller" "$dir/$n.log" 2>/dev/null || pending+=" $n"
    done
    for n in $STACK_NODES; do
      pid=$(pid_of "node$n")
      is_ours "$pid" "node$n" ||
        abort_start "copdrv of node$n exited during start: $(last_log_line "node$n") (log: $dir/node$n.log)"
      [ -S "$(in_root_of "$pid" "$STACK_DIR/node$n/copdrv.sock")" ] || pending+=" node$n"
    done
    [ -n "$pending" ] || return 0
    if [ $SECONDS -ge $deadline ]; then
      n=${pending# }
      n=${n%% *}
      [[ $n == copd* ]] &&
        abort_start "$n did not register with the level-2 copd $STACK_L2 in $timeout_s s (log: $dir/$n.log)"
      abort_start "copdrv of $n has no $STACK_DIR/$n/copdrv.sock after $timeout_s s (log: $dir/$n.log)"
    fi
    sleep 0.05
  done
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

# start_copd NAME PORT IPID IP ARGS...: copd NAME on IP:PORT (PORT empty: the first free
# port from $next_port below 7140) in host IPID, until it listens; its port in started_port.
start_copd() {
  local name=$1 want=$2 ipid=$3 ip=$4 p tries pid copd_link_opts=()
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
  p=${want:-$next_port}
  for ((tries = 1; ; tries++)); do
    if [ -z "$want" ]; then
      while [ "$p" -lt 7140 ] && port_in_use "$ipid" "$p"; do p=$((p + 1)); done
      [ "$p" -lt 7140 ] || abort_start "no free port in 7040..7139 for $name: pass --port"
    fi
    log "starting $name on $ip:$p ($* ${copd_link_opts[*]}, $STACK_MODE)"
    pid=$(launch "$name" "$ipid" "$COPD" --listen "$ip:$p" "$@" --poll-us "${COP_POLL_US:-0}" "${copd_link_opts[@]}" \
      --key "$dir/cluster.key")
    echo "$pid" >"$dir/$name.pid"
    if wait_copd "$name" "$p"; then
      started_port=$p
      next_port=$((p + 1))
      return 0
    fi
    # Another stack starting beside this one may have taken the free port we picked; the
    # port may be taken by this very copd, late to come up on a busy machine: it is
    # stopped before another starts, so no copd outlives the stack.
    if [ -z "$want" ] && [ "$tries" -lt 5 ] && port_in_use "$ipid" "$p"; then
      stop_one "$name"
      log "port $p was taken meanwhile: trying the next one"
      p=$((p + 1))
      continue
    fi
    abort_start "$name exited during start: $(last_log_line "$name") (log: $dir/$name.log)"
  done
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

  if [ -n "$port" ] && port_in_use "$ipid" "$port"; then
    fail "port $port is already in use where copd would listen: pass another --port"
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
  next_port=7040
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

  for n in "${nodes[@]}"; do
    if [ $cluster = 1 ]; then
      ipid=${host_pids[n]}
      local_ip=$CLUSTER_COP_NET.$n
      # A socket left by an earlier driver would look like this one being up.
      rm -f "$(in_root_of "$ipid" "$dir/node$n/copdrv.sock")"
      put_key "$ipid"
      pid=$(launch "node$n" "$ipid" sh -c 'mkdir -p "$0" && exec "$@"' "$dir/node$n" \
        "$COPDRV" --channel "$(((n - 1) % per + 1))" --controller "$ctl_ip:${ports[(n - 1) / per]}" \
        --local "$local_ip" --dir "$dir/node$n" --key "$dir/cluster.key")
    else
      mkdir -p "$dir/node$n"
      rm -f "$dir/node$n/copdrv.sock"
      pid=$(launch "node$n" "" \
        "$COPDRV" --channel "$(((n - 1) % per + 1))" --controller "$ctl_ip:${ports[(n - 1) / per]}" \
        --local 127.0.0.1 --dir "$dir/node$n" --key "$dir/cluster.key")
    fi
    echo "$pid" >"$dir/node$n.pid"
  done
  wait_ready
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
