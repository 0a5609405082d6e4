# COP inside the allocation, after pvm-in-allocation.sh: a COP stack private to the job
# (seed 000 ch. IV: one controller node, one channel driver per compute node).
# (suite/launch/templates/cop-in-allocation.sh, built into copbench.) The controllers run
# on this host, the job's first, at its address on the COP network (COPBENCH_COP_SUBNET;
# else the address its name resolves to), each on a free port (copd --listen ADDR:0; its
# ready file names the port). Which daemons run is the stack's plan (`copbench-daemon
# plan --names hosts`, cop/stack/plan.h; kept as cop-plan in the job's directory), not
# computed here: one copd with as many channels as hosts, or, with K = COP_PER_CONTROLLER
# below the host count, ceil(N/K) level-1 copd of K channels under a level-2 copd
# (Figure 5). Then one copdrv per allocated host, the k-th host (the order the hosts
# joined the virtual machine, so PVM host number H drives it: libcop's direct tid
# mapping) on channel (k-1)%K+1 of controller (k-1)/K, in $cop of that host's own
# /tmp that the tasks there name as COP_DRIVER (one path, exported to every task with
# COP_PER_CONTROLLER through PVM_EXPORT). Each daemon is started, waited for and stopped
# by copbench-daemon (lib/daemons.sh: readiness by its ready file, PID and start time in
# $cop); all are stopped and $cop removed on every host when the script ends, also when
# Slurm cancels the job (SIGTERM), before the virtual machine is halted.
cop=/tmp/copbench-slurm-cop.$SLURM_JOB_ID
unset COP_STACK_DIR
for v in $(env | sed -n 's/^\(COP_DRIVER_[0-9]*\)=.*/\1/p'); do unset "$v"; done
# The job's cluster key (cop/link.h "Keys"), as munge's for Slurm: 32 random bytes, mode
# 0600, in the job's directory that every host reads; copd and each copdrv get --key.
key=$dir/cop-cluster.key
if ! (umask 077 && head -c 32 /dev/urandom >"$key.tmp" && mv -f "$key.tmp" "$key"); then
  echo "copbench: cannot write the job's COP key $key" >&2
  exit 1
fi
tab=$(printf '\t')
# The stack's plan (copbench-daemon plan, cop/stack/plan.h: the one description of a
# stack), one daemon a line in start order, kept in the job's directory.
plan=$dir/cop-plan
copds=
# The controllers first: their PID files lie in $cop of this host, which the loop over
# the copdrv of the plan (this host's among them) removes.
stop_cop() {
  for n in $copds; do "$bindir/copbench-daemon" stop "$cop" "$n" >/dev/null 2>&1; done
  if [ -f "$plan" ]; then
    grep "${tab}driver$tab" "$plan" | while IFS=$tab read -r n h rest; do
      timeout 20 ssh -o BatchMode=yes "$h" "$bindir/copbench-daemon stop $cop $n; rm -rf $cop" </dev/null >/dev/null 2>&1
    done
  fi
  rm -rf "$cop"
}
trap 'stop_cop; halt' EXIT
if [ -n "${COPBENCH_COP_SUBNET:-}" ]; then
  addr=$(ip -o -4 addr show | awk '{print $4}' | python3 -c 'import ipaddress, sys
net = ipaddress.ip_network(sys.argv[1], strict=False)
for line in sys.stdin:
    a = ipaddress.ip_interface(line.strip())
    if a.ip in net:
        print(a.ip)
        break' "$COPBENCH_COP_SUBNET")
else
  addr=$(getent ahostsv4 "$(echo "$hosts" | head -1)" | awk 'NR == 1 {print $1}')
fi
if [ -z "$addr" ]; then
  echo "copbench: $(hostname) has no address on the COP network ${COPBENCH_COP_SUBNET:-(its name does not resolve)}" >&2
  exit 1
fi
per=${COP_PER_CONTROLLER:-64}
if ! said=$("$bindir/copbench-daemon" plan --hosts "$(echo $hosts | tr ' ' ,)" --per-controller "$per" \
  --controllers "$(echo "$hosts" | head -1)=$addr" --names hosts 2>&1 >"$plan"); then
  echo "copbench: no COP stack for COP_PER_CONTROLLER=$per on $want hosts: $said" >&2
  exit 1
fi
l2=
controllers=
# start_daemon NAME HOST ROLE ARG...: one daemon of the plan, an argument @NAME replaced by
# that copd's address (it is up: the plan lists it earlier); a copd's address once it
# serves in $started.
start_daemon() {
  name=$1 host=$2 role=$3
  shift 3
  i=$#
  while [ "$i" -gt 0 ]; do
    a=$1
    shift
    case $a in @*) a=$("$bindir/copbench-daemon" field "$cop" "${a#@}" address) ;; esac
    set -- "$@" "$a"
    i=$((i - 1))
  done
  if [ "$role" = driver ]; then
    if ! said=$(ssh -o BatchMode=yes "$host" "$bindir/copbench-daemon" start "$cop" "$name" copdrv -- \
      "$@" --dir "$cop" --key "$key" </dev/null 2>&1); then
      echo "copbench: copdrv of channel $2 on $host did not come up: $said" >&2
      exit 1
    fi
    return
  fi
  copds="$copds $name"
  if ! said=$("$bindir/copbench-daemon" start "$cop" "$name" copd --log "$dir/$name.log" -- \
    "$@" --key "$key" </dev/null 2>&1); then
    echo "copbench: the job's $name did not come up on $addr: $said" >&2
    exit 1
  fi
  started=$("$bindir/copbench-daemon" field "$cop" "$name" address)
  if [ "$role" = level2 ]; then l2=$started; else controllers="$controllers $started"; fi
}
# The plan's fields: name, host, address, program, role, CNTNO, channel, node, arguments.
ifs=$IFS
# shellcheck disable=SC2034  # the fields this job does not use, read to reach the arguments
while IFS=$tab read -r name host address program role cntno chno node args; do
  set -f
  IFS=$tab
  # shellcheck disable=SC2086  # the arguments, one a field
  start_daemon "$name" "$host" "$role" $args
  IFS=$ifs
  set +f
done <"$plan"
if [ -n "$l2" ]; then
  echo "copd-l2 $l2, level-1 copd$controllers of $per channels, copdrv on $(echo $hosts)" >"$dir/cop-stack"
else
  echo "copd$controllers, copdrv channels 1..$want on $(echo $hosts)" >"$dir/cop-stack"
fi
export COP_DRIVER=$cop COP_PER_CONTROLLER=$per
export PVM_EXPORT="${PVM_EXPORT:+$PVM_EXPORT:}COP_DRIVER:COP_PER_CONTROLLER"
