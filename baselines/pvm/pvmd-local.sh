#!/usr/bin/env bash
# copbench-pvmd-local: a private PVM virtual machine of this one host, for tests and for
# trying the pvm backend without a cluster. Installed as build/bin/copbench-pvmd-local;
# the lifecycle itself is pvmd_start / pvmd_stop of lib/daemons.sh beside it.
#
#   eval "$(copbench-pvmd-local start [DIR])"   start pvmd; prints the exports to use it
#   copbench-pvmd-local stop [DIR]               halt it (the pvmd this script started)
#   copbench-pvmd-local status [DIR]
#
# DIR (default ${TMPDIR:-/tmp}/copbench-pvm.$UID) becomes PVM_TMP; its pvmd.pid holds the
# daemon's PID and /proc start time (lib/daemons.sh). The daemon's executable path has the
# workers beside this script.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
COPBENCH_BIN=$here
source "$here/lib/stack.sh"

cmd=${1:-}
dir=${2:-${TMPDIR:-/tmp}/copbench-pvm.$(id -u)}
case "$cmd" in
  start) pvmd_start "$dir" ;;
  stop) pvmd_stop "$dir" ;;
  status) pvmd_status "$dir" ;;
  *)
    echo "usage: copbench-pvmd-local start|stop|status [DIR]" >&2
    exit 2
    ;;
esac
