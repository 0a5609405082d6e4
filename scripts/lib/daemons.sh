# How copbench starts, checks and stops its daemons, pvmd, copd and copdrv: the one place
# (issue 27). Sourced by lib/stack.sh (scripts/cop-stack, copbench-pvmd-local, ...) and by copbench-daemon, the command that the Slurm job
# (suite/launch/templates/) and the Ansible roles (cop_controller, cop_node, pvm) run on
# the hosts; the build tree has copies in bin/ and bin/lib/, so nothing built reads the
# source tree.
#
# A daemon NAME of a state directory STATE (absolute; as this machine sees it) has:
#   STATE/NAME.pid    "PID START_TIME": the one process identity. START_TIME is field 22
#                     of /proc/PID/stat (clock ticks after boot). A PID is that daemon only
#                     while /proc/PID/stat shows the same start time and no zombie: a PID
#                     reused by another process has a later start, so it is never signalled.
#   STATE/NAME.ready  what the daemon said when it became ready (cop/link/ready.h: pid,
#                     start_time, copd's bound address and port, copdrv's channel and
#                     socket); pvmd, which cannot say it, is ready when its daemon file
#                     $PVM_TMP/pvmd.UID appears.
#   STATE/NAME.log    its stdout and stderr (or --log FILE).
# Readiness is the daemon's own word, waited for with a bound (DAEMON_TIMEOUT seconds,
# default 20): nobody reads logs or probes ports. Stopping is SIGTERM, DAEMON_GRACE seconds
# (default 5), then SIGKILL, only to a PID that is still the recorded one.
#
# The daemons' binaries: copd and copdrv in $COPBENCH_BIN (COPD and COPDRV override them),
# pvmd in $PVM_ROOT/lib (default /usr/lib/pvm3).

pvm_root=${PVM_ROOT:-/usr/lib/pvm3}

# daemon_binary KIND: the program of copd, copdrv or pvmd.
daemon_binary() {
  case $1 in
    copd) echo "${COPD:-$COPBENCH_BIN/copd}" ;;
    copdrv) echo "${COPDRV:-$COPBENCH_BIN/copdrv}" ;;
    pvmd) echo "$pvm_root/lib/pvmd" ;;
    *) echo "copbench-daemon: not a daemon: '$1' (copd, copdrv or pvmd)" >&2; return 2 ;;
  esac
}

# daemon_start_time PID: field 22 of /proc/PID/stat; fails when PID is gone or a zombie.
# The fields after the command name (which may hold spaces) start after its last ')'.
daemon_start_time() {
  local s
  [[ $1 =~ ^[0-9]+$ ]] || return 1
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  [ "$1" != Z ] && [ -n "${20:-}" ] && echo "${20}"
}

# daemon_pid STATE NAME: the recorded PID while it is still that daemon; else fails.
daemon_pid() {
  local pid start
  read -r pid start 2>/dev/null <"$1/$2.pid" || return 1
  [ -n "$start" ] && [ "$(daemon_start_time "$pid")" = "$start" ] && echo "$pid"
}
daemon_alive() { daemon_pid "$1" "$2" >/dev/null; }

# daemon_field STATE NAME KEY: a value of the daemon's ready file.
daemon_field() { sed -n "s/^$3=//p" "$1/$2.ready" 2>/dev/null | head -n 1; }

daemon_last_log_line() {
  local line
  line=$(grep -v '^[[:space:]]*$' "$1" 2>/dev/null | tail -n 1) || true
  echo "${line:-no output}"
}

# daemon_start STATE NAME KIND [--in IPID] [--log FILE] [--ready-file PATH] -- ARG...
#   Starts KIND (copd, copdrv, pvmd) with ARG... as daemon NAME of STATE, in its own
#   session; copd and copdrv get --ready-file PATH (default STATE/NAME.ready). --in IPID:
#   in the mount, network, UTS, IPC and PID namespaces of process IPID (an emulated
#   cluster host's init), with DAEMON_HOST_ENV (an array) in its environment; PATH is
#   then a path as that host sees it. Returns 0 once the daemon is ready; 1 with one line
#   in DAEMON_ERROR (the daemon stopped again) when it exits or is not ready in time.
#   It is daemon_launch then daemon_await: several daemons may be launched first and
#   awaited after (every launched one must be awaited: that records or stops it).
daemon_start() { daemon_launch "$@" && daemon_await "$1" "$2"; }

declare -gA _daemon_launched=()

daemon_launch() {
  local state=$1 name=$2 kind=$3 ipid="" log="" ready="" bin seen
  shift 3
  while [ $# -gt 0 ]; do
    case $1 in
      --in) ipid=$2; shift 2 ;;
      --log) log=$2; shift 2 ;;
      --ready-file) ready=$2; shift 2 ;;
      --) shift; break ;;
      *) DAEMON_ERROR="daemon_start: unknown option '$1'"; return 1 ;;
    esac
  done
  bin=$(daemon_binary "$kind") || { DAEMON_ERROR="not a daemon: '$kind'"; return 1; }
  [ -x "$bin" ] || { DAEMON_ERROR="$kind is not built ($bin)"; return 1; }
  log=${log:-$state/$name.log}
  mkdir -p "$state" "$(dirname "$log")"
  rm -f "$state/$name.pid" "$state/$name.ready"
  if [ "$kind" = pvmd ]; then
    ready=${PVM_TMP:-/tmp}/pvmd.$(id -u)
  else
    ready=${ready:-$state/$name.ready}
    set -- "$@" --ready-file "$ready"
  fi
  seen=$ready
  if [ -n "$ipid" ]; then
    seen=/proc/$ipid/root$ready
    mkdir -p "$(dirname "$seen")"
  fi
  rm -f "$seen"
  if [ -z "$ipid" ]; then
    # Not a process group leader (no job control here), so setsid execs: $! is the daemon.
    setsid "$bin" "$@" </dev/null >>"$log" 2>&1 &
  else
    setsid nsenter -t "$ipid" -n -u -i -m -p --wd=/ env HOME=/root "${DAEMON_HOST_ENV[@]}" "$bin" "$@" \
      </dev/null >>"$log" 2>&1 &
  fi
  _daemon_launched[$state/$name]="$!"$'\t'"$kind"$'\t'"${ipid:--}"$'\t'"$seen"$'\t'"$log"
}

# daemon_await STATE NAME: waits for a daemon daemon_launch started (see daemon_start).
daemon_await() {
  local state=$1 name=$2 pid kind ipid seen log child start="" i
  IFS=$'\t' read -r pid kind ipid seen log <<<"${_daemon_launched[$state/$name]:-}"
  unset "_daemon_launched[$state/$name]"
  [ -n "${pid:-}" ] || { DAEMON_ERROR="$name was not launched"; return 1; }
  [ "$ipid" != - ] || ipid=""
  for ((i = 0; i < ${DAEMON_TIMEOUT:-20} * 50; i++)); do
    if [ -s "$seen" ]; then
      if [ "$kind" = pvmd ]; then
        start=$(daemon_start_time "$pid") || true
      else
        start=$(sed -n 's/^start_time=//p' "$seen")
      fi
      break
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.02
  done
  # nsenter forks the daemon into the host's PID namespace: the daemon is its child, the
  # one with the start time the daemon reported.
  if [ -n "$ipid" ] && [ -n "$start" ]; then
    for child in $(cat "/proc/$pid/task/$pid/children" 2>/dev/null); do
      [ "$(daemon_start_time "$child")" = "$start" ] && { pid=$child; break; }
    done
  fi
  if [ -n "$start" ] && [ "$(daemon_start_time "$pid")" = "$start" ]; then
    echo "$pid $start" >"$state/$name.pid.tmp" && mv "$state/$name.pid.tmp" "$state/$name.pid"
    if [ "$kind" != pvmd ] && ! [ "$seen" -ef "$state/$name.ready" ]; then cp "$seen" "$state/$name.ready"; fi
    return 0
  fi
  if kill -0 "$pid" 2>/dev/null; then
    DAEMON_ERROR="$name is not ready after ${DAEMON_TIMEOUT:-20} s (log: $log)"
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  else
    wait "$pid" 2>/dev/null || true
    DAEMON_ERROR="$name exited during start: $(daemon_last_log_line "$log") (log: $log)"
  fi
  return 1
}

# daemon_stop STATE NAME: SIGTERM, a grace period, then SIGKILL, to the recorded daemon
# only; removes its PID and ready files. 0 when it was running, 1 when it was not.
daemon_stop() {
  local state=$1 name=$2 pid i was=1
  if pid=$(daemon_pid "$state" "$name"); then
    was=0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < ${DAEMON_GRACE:-5} * 50; i++)); do
      daemon_alive "$state" "$name" || break
      sleep 0.02
    done
    if daemon_alive "$state" "$name"; then
      echo "[copbench] $name (pid $pid) ignored SIGTERM for ${DAEMON_GRACE:-5} s: killed" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$state/$name.pid" "$state/$name.ready"
  return $was
}

# ================================================================ pvmd
#
# A private pvmd: DIR becomes PVM_TMP, so it never meets another one of the same user.
# The host file gives the daemon an executable path (ep=) with the workers and the group
# server pvmgs in it (Debian installs pvmgs where PVM does not look). Root needs
# PVM_ALLOW_ROOT=1; PVM_RSH=/usr/bin/ssh is what PVM needs to add hosts.

_pvmd_file() { echo "$1/pvmd.$(id -u)"; }

# The exports a shell needs to use the pvmd of DIR.
pvmd_exports() {
  echo "export PVM_ROOT=$pvm_root PVM_TMP=$1 PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh"
}

# The one "master pvmd up, wait for its hosts, halt" (the private pvmd below, the Slurm
# job's pvm-in-allocation.sh and the Ansible role pvm's pvm-vm, through copbench-daemon
# pvm-up / pvm-halt). STATE is the virtual machine's PVM_TMP: the pvmd's daemon file,
# PID file and (default) log lie there.

# pvm_vm_size STATE: the number of hosts in the virtual machine (the console's conf); ""
# when it does not answer. Only while its pvmd runs: the console starts one otherwise.
pvm_vm_size() {
  echo conf | PVM_ROOT=$pvm_root PVM_TMP=$1 PVM_ALLOW_ROOT=1 timeout 5 "$pvm_root/lib/pvm" 2>/dev/null |
    grep -o '[0-9]* host' | head -n 1 | cut -d' ' -f1
}

# pvm_vm_up STATE HOSTFILE N [LOG [SECONDS]]: the master pvmd of STATE on HOSTFILE, started
# unless it runs, then awaited until its virtual machine has N hosts (at most SECONDS,
# default 60; the master adds the others itself). 1 with one line in DAEMON_ERROR when it
# does not start, ends, or the hosts do not all join in time.
pvm_vm_up() {
  local state=$1 hostfile=$2 want=$3 log=${4:-$1/pvmd.log} secs=${5:-60} i have=""
  mkdir -p "$state"
  if ! daemon_alive "$state" pvmd; then
    # A pvmd that died leaves its files behind, and the next one would refuse to start.
    rm -f "$(_pvmd_file "$state")" "$state/pvml.$(id -u)" "$state"/pvmtmp*
    PVM_ROOT=$pvm_root PVM_TMP=$state PVM_ALLOW_ROOT=1 PVM_RSH=${PVM_RSH:-/usr/bin/ssh} \
      daemon_start "$state" pvmd pvmd --log "$log" -- "$hostfile" || return 1
  fi
  for ((i = 0; i < secs * 10; i++)); do
    # Asked only while the master runs: a console that finds no pvmd starts one.
    daemon_alive "$state" pvmd || { DAEMON_ERROR="the master pvmd ended: $(daemon_last_log_line "$log")"; return 1; }
    have=$(pvm_vm_size "$state")
    [ "$have" = "$want" ] && return 0
    sleep 0.1
  done
  DAEMON_ERROR="the virtual machine has ${have:-no} hosts, not $want, after $secs s: $(daemon_last_log_line "$log")"
  return 1
}

# pvm_vm_halt STATE: halts the virtual machine of STATE (a clean halt lets every pvmd end
# its own tasks, pvmgs and leftover workers, first), then stops the master by its PID
# should it not have ended; safe when none runs.
pvm_vm_halt() {
  local state=$1 i
  if daemon_alive "$state" pvmd; then
    echo halt | PVM_ROOT=$pvm_root PVM_TMP=$state PVM_ALLOW_ROOT=1 timeout 5 "$pvm_root/lib/pvm" >/dev/null 2>&1 || true
    for ((i = 0; i < 40; i++)); do daemon_alive "$state" pvmd || break; sleep 0.05; done
  fi
  daemon_stop "$state" pvmd || true
  rm -f "$(_pvmd_file "$state")"
}

# pvmd_start DIR: starts the private pvmd of DIR, this host alone (unless it runs), and
# prints its exports. Returns 1 with one line on stderr when it does not come up.
pvmd_start() {
  local dir=$1
  mkdir -p "$dir"
  echo "* ep=$COPBENCH_BIN:$pvm_root/lib:$pvm_root/bin/LINUX64" >"$dir/hostfile"
  if ! pvm_vm_up "$dir" "$dir/hostfile" 1 "$dir/pvmd.log"; then
    echo "copbench-pvmd-local: pvmd did not start: $DAEMON_ERROR" >&2
    return 1
  fi
  pvmd_exports "$dir"
}

# pvmd_stop DIR: halts the pvmd of DIR (safe when none runs).
pvmd_stop() { pvm_vm_halt "$1"; }

# pvmd_status DIR: one line; 1 when no pvmd of DIR runs.
pvmd_status() {
  if daemon_alive "$1" pvmd; then
    echo "pvmd running (pid $(daemon_pid "$1" pvmd), PVM_TMP=$1)"
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
