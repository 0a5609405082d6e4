#!/usr/bin/env bash
# copbench-pvmd-local: a private PVM virtual machine of this one host, for tests and for
# trying the pvm backend without a cluster. Installed as build/bin/copbench-pvmd-local.
#
#   eval "$(copbench-pvmd-local start [DIR])"   start pvmd; prints the exports to use it
#   copbench-pvmd-local stop [DIR]               halt it (the pvmd this script started)
#   copbench-pvmd-local status [DIR]
#
# DIR (default ${TMPDIR:-/tmp}/copbench-pvm.$UID) becomes PVM_TMP, so this pvmd never meets
# another one of the same user. The host file gives the daemon an executable path (ep=)
# with the group server pvmgs in it (Debian installs it where PVM does not look).
# Root needs PVM_ALLOW_ROOT=1; PVM_RSH=/usr/bin/ssh is what PVM needs to add hosts.
set -euo pipefail

cmd=${1:-}
dir=${2:-${TMPDIR:-/tmp}/copbench-pvm.$(id -u)}
pvm_root=/usr/lib/pvm3
here=$(cd "$(dirname "$0")" && pwd)

daemon_file() { echo "$dir/pvmd.$(id -u)"; }
running() { [ -f "$dir/pvmd.pid" ] && kill -0 "$(cat "$dir/pvmd.pid")" 2>/dev/null; }
exports() {
  echo "export PVM_ROOT=$pvm_root PVM_TMP=$dir PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh"
}

case "$cmd" in
  start)
    mkdir -p "$dir"
    if running; then exports; exit 0; fi
    rm -f "$(daemon_file)" "$dir"/pvml.* "$dir"/pvmtmp*
    echo "* ep=$here:$pvm_root/lib:$pvm_root/bin/LINUX64" >"$dir/hostfile"
    PVM_ROOT=$pvm_root PVM_TMP=$dir PVM_ALLOW_ROOT=1 PVM_RSH=/usr/bin/ssh \
      setsid "$pvm_root/lib/pvmd" "$dir/hostfile" >"$dir/pvmd.log" 2>&1 </dev/null &
    echo $! >"$dir/pvmd.pid"
    for _ in $(seq 100); do
      [ -e "$(daemon_file)" ] && { exports; exit 0; }
      running || break
      sleep 0.05
    done
    echo "copbench-pvmd-local: pvmd did not start (see $dir/pvmd.log)" >&2
    exit 1
    ;;
  stop)
    if running; then
      pid=$(cat "$dir/pvmd.pid")
      # A clean halt lets pvmd end its own tasks (pvmgs, leftover workers) first.
      echo halt | PVM_ROOT=$pvm_root PVM_TMP=$dir PVM_ALLOW_ROOT=1 timeout 5 "$pvm_root/lib/pvm" >/dev/null 2>&1 || true
      for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
      kill "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/pvmd.pid" "$(daemon_file)"
    ;;
  status)
    if running; then echo "pvmd running (pid $(cat "$dir/pvmd.pid"), PVM_TMP=$dir)"; else echo "no pvmd (PVM_TMP=$dir)"; exit 1; fi
    ;;
  *)
    echo "usage: copbench-pvmd-local start|stop|status [DIR]" >&2
    exit 2
    ;;
esac
