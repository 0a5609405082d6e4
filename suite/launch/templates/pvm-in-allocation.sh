# PVM inside the allocation: a virtual machine of exactly the allocated hosts, private to
# the job (its own PVM_TMP on each host, so the cluster's own pvmd is never met): the
# master pvmd here on the job's first host and one on each other host (through dx=, a
# wrapper that gives them the same PVM_TMP); halted when the script ends, also when Slurm
# cancels the job (SIGTERM). The worker follows on the job script's last line.
# (suite/launch/templates/pvm-in-allocation.sh, built into copbench: the job script sets
# `dir`, the job's directory every host sees, and `bindir`, where copbench's binaries and
# copbench-daemon are, above it. Every daemon starts and stops through copbench-daemon.)
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
daemon=$PVM_TMP/pvmd.$(id -u)
# Each host's PVM_TMP lies in that host's own /tmp: removed on every host.
halt() {
  [ -e "$daemon" ] && echo halt | timeout 10 "$PVM_ROOT/lib/pvm" >/dev/null 2>&1
  "$bindir/copbench-daemon" stop "$PVM_TMP" pvmd >/dev/null 2>&1
  for h in $hosts; do timeout 20 ssh -o BatchMode=yes "$h" rm -rf "$PVM_TMP" </dev/null >/dev/null 2>&1; done
  rm -rf "$PVM_TMP"
}
trap halt EXIT
trap 'exit 143' TERM INT
if ! said=$("$bindir/copbench-daemon" start "$PVM_TMP" pvmd pvmd --log "$dir/pvmd.log" -- "$dir/hostfile" 2>&1); then
  echo "copbench: the job's master pvmd did not start: $said" >&2
  exit 1
fi
i=0
# Until every allocated host is in the virtual machine.
until [ "$(echo conf | timeout 5 "$PVM_ROOT/lib/pvm" 2>/dev/null | grep -o '[0-9]* host' | head -1)" = "$want host" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! "$bindir/copbench-daemon" status "$PVM_TMP" pvmd >/dev/null; then
    echo "copbench: the virtual machine of the $want allocated hosts did not come up: $(tail -1 "$dir/pvmd.log")" >&2
    exit 1
  fi
  sleep 0.1
done
