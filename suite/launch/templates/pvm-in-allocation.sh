# PVM inside the allocation: a virtual machine of exactly the allocated hosts, private to
# the job (its own PVM_TMP on each host, so the cluster's own pvmd is never met): the
# master pvmd here on the job's first host and one on each other host (through dx=, a
# wrapper that gives them the same PVM_TMP); halted when the script ends, also when Slurm
# cancels the job (SIGTERM). The worker follows on the job script's last line.
# (suite/launch/templates/pvm-in-allocation.sh, built into copbench: the job script sets
# `dir`, the job's directory every host sees, and `bindir`, where copbench's binaries and
# copbench-daemon are, above it. Every daemon starts and stops through copbench-daemon,
# the virtual machine too: pvm-up and pvm-halt.)
set -u
export PVM_ROOT=/usr/lib/pvm3 PVM_TMP=/tmp/copbench-slurm-pvm.$SLURM_JOB_ID PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh
mkdir -p "$PVM_TMP"
cat >"$dir/pvmd-on-host" <<WRAPPER
#!/bin/sh
export PVM_ROOT=$PVM_ROOT PVM_TMP=$PVM_TMP PVM_ALLOW_ROOT=1 PVM_RSH=$PVM_RSH
mkdir -p "\$PVM_TMP"
exec "$bindir/copbench-daemon" exec-pvmd "\$@"
WRAPPER
chmod +x "$dir/pvmd-on-host"
hosts=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
want=$(echo "$hosts" | wc -l)
{ echo "* ep=$bindir:$PVM_ROOT/lib:$PVM_ROOT/bin/LINUX64 dx=$dir/pvmd-on-host"; echo "$hosts"; } >"$dir/hostfile"
# Each host's PVM_TMP lies in that host's own /tmp: removed on every host.
halt() {
  "$bindir/copbench-daemon" pvm-halt "$PVM_TMP" >/dev/null 2>&1
  for h in $hosts; do timeout 20 ssh -o BatchMode=yes "$h" rm -rf "$PVM_TMP" </dev/null >/dev/null 2>&1; done
  rm -rf "$PVM_TMP"
}
trap halt EXIT
trap 'exit 143' TERM INT
# The master pvmd, until every allocated host is in the virtual machine (copbench-daemon
# pvm-up: lib/daemons.sh's pvm_vm_up, the one "master up, wait for N hosts").
if ! said=$("$bindir/copbench-daemon" pvm-up "$PVM_TMP" "$dir/hostfile" "$want" --log "$dir/pvmd.log" 2>&1); then
  echo "copbench: the virtual machine of the $want allocated hosts did not come up: $said" >&2
  exit 1
fi
