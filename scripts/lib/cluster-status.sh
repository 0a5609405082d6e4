# The emulated cluster's exec and status (scripts/cluster exec, status). Sourced by
# scripts/lib/cluster.sh, whose variables and cluster_load / cluster_init_pid they use.

cluster_exec() {
  [ $# -ge 2 ] || die "usage: exec HOST CMD..."
  local name=$1 ipid
  shift
  cluster_load || die "no cluster is up (scripts/cluster up)"
  [[ " $CLUSTER_HOSTS " == *" $name "* ]] || die "exec: no host '$name' (hosts: $CLUSTER_HOSTS)"
  if [ "$CLUSTER_MODE" = loopback ]; then
    exec "$@"
  fi
  ipid=$(cluster_init_pid "$name") || die "exec: host $name is not running"
  # The host sees this machine's tree except /tmp, /run and /root: its own.
  local wd=$PWD
  case "$wd/" in /tmp/*|/run/*|/root/*) wd=/root ;; esac
  if [ "${CLUSTER_ROOTS:-shared}" != shared ]; then
    # Own roots: the checkout is hidden there, and nsenter opens --wd's path here,
    # before it enters the host (a directory outside the host's root): cd in the host.
    exec nsenter -t "$ipid" -n -u -i -m -p env -C /root HOME=/root "${CLUSTER_HOST_ENV[@]}" "$@"
  fi
  exec nsenter -t "$ipid" -n -u -i -m -p --wd="$wd" \
    env HOME=/root "${CLUSTER_HOST_ENV[@]}" "$@"
}

# Runs a check inside a host; quiet, true/false.
cluster_in_host() {
  local ipid=$1
  shift
  nsenter -t "$ipid" -n -u -i -m -p env HOME=/root "${CLUSTER_HOST_ENV[@]}" "$@" >/dev/null 2>&1
}

# A daemon NAME is running in that host when copbench-daemon, which started it (roles
# cop_controller, cop_node), finds its PID with the recorded /proc start time.
cluster_daemon_ok() {
  cluster_in_host "$1" "${CLUSTER_HOST_BUILD:-$COPBENCH_BUILD}/bin/copbench-daemon" status /run/copbench "$2"
}

# One status line for a COP daemon (copd or copdrv) of a host; false when it should run
# and does not. built=0: the daemon is not built here, so it is not checked.
cluster_status_daemon() {
  local name=$1 ipid=$2 daemon=$3 built=$4 pidfile=/run/copbench/$3.pid
  if [ "$built" = 0 ]; then
    echo "  $name: $daemon not built ($COPBENCH_BUILD/bin/$daemon), not checked"
  elif cluster_daemon_ok "$ipid" "$daemon"; then
    echo "  $name: $daemon ok"
  else
    echo "  $name: $daemon MISSING (no live process in $pidfile; run site.yml)"
    return 1
  fi
}

# The MPI hostfile as the hosts see it: written by provision (ansible role mpi) on the
# head node (node1) under copbench_home_dir, ~/.copbench; inside the hosts HOME is /root,
# in loopback mode it is this user's home.
cluster_mpi_hostfile() {
  if [ "${CLUSTER_MODE:-}" = loopback ]; then echo "$HOME/.copbench/mpi-hostfile"; else echo /root/.copbench/mpi-hostfile; fi
}

# One line for up and status: where mpirun's hostfile is inside the hosts, and whether
# provision has written it yet.
cluster_print_hostfile() {
  local f ipid state="not written yet: scripts/cluster provision writes it"
  f=$(cluster_mpi_hostfile)
  if [ "${CLUSTER_MODE:-}" = loopback ]; then
    [ -s "$f" ] && state="present"
  elif ipid=$(cluster_init_pid node1) && cluster_in_host "$ipid" test -s "$f"; then
    state="present"
  fi
  echo "  MPI hostfile (on node1, the head): $f ($state); e.g. scripts/cluster ssh node1 mpirun --hostfile $f -np $CLUSTER_N hostname"
}

# Prints one line per host and service; non-zero when something is missing.
cluster_status() {
  local bad=0 name ipid have_copd=0 have_copdrv=0 expect got
  if ! cluster_load; then
    echo "cluster $CLUSTER_ID: down (no cluster.env in $CLUSTER_STATE)"
    left=$(cluster_is_root && cluster_leftovers)
    [ -z "$left" ] || { echo "  but left over: $left"; return 1; }
    return 3
  fi
  echo "cluster $CLUSTER_ID: mode $CLUSTER_MODE, ${CLUSTER_ROOTS:-shared} roots, $CLUSTER_N nodes, profile $CLUSTER_PROFILE, $CLUSTER_PER_CONTROLLER channels per controller, state $CLUSTER_STATE"
  [ -x "$COPBENCH_BUILD/bin/copd" ] && have_copd=1
  [ -x "$COPBENCH_BUILD/bin/copdrv" ] && have_copdrv=1
  # Own roots: the hosts have the suite where site.yml put it, not this machine's build.
  [ -z "${CLUSTER_HOST_BUILD:-}" ] || have_copd=1 have_copdrv=1
  cluster_print_hostfile
  if [ "$CLUSTER_MODE" = loopback ]; then
    echo "  node1 (this machine): loopback mode, no per-host checks"
    return 0
  fi
  for name in $CLUSTER_HOSTS; do
    if ! ipid=$(cluster_init_pid "$name"); then
      echo "  $name: MISSING host (no live init process)"
      bad=1
      continue
    fi
    if ssh -F "$CLUSTER_STATE/ssh_config" -o ConnectTimeout=3 "$name" true 2>/dev/null; then
      echo "  $name: host ok, sshd ok"
    else
      echo "  $name: host ok, sshd MISSING (ssh $name fails)"
      bad=1
    fi
    if [[ $name == "$CLUSTER_CONTROLLER"* ]]; then
      cluster_status_daemon "$name" "$ipid" copd $have_copd || bad=1
      if [ "$name" = "$CLUSTER_CONTROLLER" ] && [[ " $CLUSTER_HOSTS " == *" ${CLUSTER_CONTROLLER}1 "* ]]; then
        cluster_status_daemon "$name" "$ipid" copd-l2 $have_copd || bad=1
      fi
      continue
    fi
    if cluster_in_host "$ipid" sh -c 'test -s /tmp/pvmd.0 && pgrep -u 0 -x pvmd'; then
      echo "  $name: pvmd ok"
    else
      echo "  $name: pvmd MISSING (run site.yml)"
      bad=1
    fi
    cluster_status_daemon "$name" "$ipid" copdrv $have_copdrv || bad=1
  done
  # The virtual machine must hold every node, in channel order.
  if ipid=$(cluster_init_pid node1); then
    expect=$(for ((i = 1; i <= CLUSTER_N; i++)); do printf 'node%d ' "$i"; done)
    expect=${expect% }
    got=$(nsenter -t "$ipid" -n -u -i -m -p env HOME=/root "${CLUSTER_HOST_ENV[@]}" \
      sh -c 'test -s /tmp/pvmd.0 && echo conf | timeout 5 pvm 2>/dev/null' |
      awk '$2 ~ /^[0-9a-f]+$/ && $3 == "LINUX64" {print $1}' | paste -sd' ') || true
    if [ "$got" = "$expect" ]; then
      echo "  pvm virtual machine: ok ($got)"
    elif [ -z "$got" ]; then
      echo "  pvm virtual machine: MISSING (no answer from a master pvmd on node1 within 5 s)"
      bad=1
    else
      echo "  pvm virtual machine: WRONG (want hosts in channel order: $expect; have: ${got:-none})"
      bad=1
    fi
  fi
  return $bad
}
