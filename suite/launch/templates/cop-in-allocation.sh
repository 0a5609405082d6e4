# COP inside the allocation, after pvm-in-allocation.sh: a COP stack private to the job
# (seed 000 ch. IV: one controller node, one channel driver per compute node).
# (suite/launch/templates/cop-in-allocation.sh, built into copbench.) The controllers run
# on this host, the job's first, at its address on the COP network (COPBENCH_COP_SUBNET;
# else the address its name resolves to), each on a free port (copd --listen ADDR:0; its
# ready file names the port): one copd with as many channels as hosts, or, with
# K = COP_PER_CONTROLLER below the host count, ceil(N/K) level-1 copd of K channels under
# a level-2 copd (Figure 5). Then one copdrv per allocated host, the k-th host (the order
# the hosts joined the virtual machine, so PVM host number H drives it: libcop's direct
# tid mapping) on channel (k-1)%K+1 of controller (k-1)/K, in $cop of that host's own
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
copds=
# The controllers first: their PID files lie in $cop of this host, which the loop over
# the hosts (this one among them) removes.
stop_cop() {
  for n in $copds; do "$bindir/copbench-daemon" stop "$cop" "$n" >/dev/null 2>&1; done
  for h in $hosts; do
    timeout 20 ssh -o BatchMode=yes "$h" "$bindir/copbench-daemon stop $cop copdrv; rm -rf $cop" </dev/null >/dev/null 2>&1
  done
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
# start_copd NAME ARG...: a copd on $addr, its address (once it serves) in $started.
start_copd() {
  name=$1
  shift
  copds="$copds $name"
  if ! said=$("$bindir/copbench-daemon" start "$cop" "$name" copd --log "$dir/$name.log" -- \
    --listen "$addr:0" --key "$key" "$@" 2>&1); then
    echo "copbench: the job's $name did not come up on $addr: $said" >&2
    exit 1
  fi
  started=$("$bindir/copbench-daemon" field "$cop" "$name" address)
}
per=${COP_PER_CONTROLLER:-64}
case "$per" in ''|*[!0-9]*) per=0 ;; esac
if [ "$per" -lt 1 ] || [ "$per" -gt 64 ]; then
  echo "copbench: COP_PER_CONTROLLER must be 1..64, got '${COP_PER_CONTROLLER:-}'" >&2
  exit 1
fi
ctls=$(( (want + per - 1) / per ))
l2=
controllers=
if [ "$ctls" -gt 1 ]; then
  start_copd copd-l2 --level 2 --channels "$ctls"
  l2=$started
  c=0
  while [ "$c" -lt "$ctls" ]; do
    start_copd "copd$c" --channels "$per" --cntno "$c" --parent "$l2"
    controllers="$controllers $started"
    c=$((c + 1))
  done
else
  start_copd copd --channels "$want"
  controllers=$started
fi
k=0
for h in $hosts; do
  k=$((k + 1))
  controller=$(echo $controllers | cut -d' ' -f$(( (k - 1) / per + 1 )))
  if ! said=$(ssh -o BatchMode=yes "$h" "$bindir/copbench-daemon" start "$cop" copdrv copdrv -- \
    --channel "$(( (k - 1) % per + 1 ))" --controller "$controller" --dir "$cop" --key "$key" </dev/null 2>&1); then
    echo "copbench: copdrv of channel $(( (k - 1) % per + 1 )) on $h did not come up: $said" >&2
    exit 1
  fi
done
if [ -n "$l2" ]; then
  echo "copd-l2 $l2, level-1 copd$controllers of $per channels, copdrv on $(echo $hosts)" >"$dir/cop-stack"
else
  echo "copd $controllers, copdrv channels 1..$want on $(echo $hosts)" >"$dir/cop-stack"
fi
export COP_DRIVER=$cop COP_PER_CONTROLLER=$per
export PVM_EXPORT="${PVM_EXPORT:+$PVM_EXPORT:}COP_DRIVER:COP_PER_CONTROLLER"
