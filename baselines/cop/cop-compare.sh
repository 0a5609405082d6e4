#!/usr/bin/env bash
# copbench-cop-compare-run POLL_US NODES [ARGS...]: what `copbench cop compare` runs.
# Installed as build/bin/copbench-cop-compare-run beside copbench-cop-compare.
#
# Starts a private pvmd and a loopback COP stack of NODES nodes (copd polling POLL_US
# microseconds: COP_POLL_US), runs `copbench-cop-compare --stack DIR --nodes NODES ARGS...`
# (libcop beside libpvm, seed 000 Table IV) and stops both by PID, also when it fails.
set -euo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
COPBENCH_BIN=$here
me=cop-stack
source "$here/lib/stack.sh"

[ $# -ge 2 ] || { echo "usage: copbench-cop-compare-run POLL_US NODES [copbench-cop-compare arguments]" >&2; exit 2; }
poll=$1 nodes=$2
shift 2

work=$(mktemp -d "${TMPDIR:-/tmp}/copbench-cop-compare.XXXXXX")
cleanup() {
  (cop_stack_stop --dir "$work/stack") >/dev/null 2>&1 || true
  pvmd_stop "$work/pvm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

exports=$(pvmd_start "$work/pvm")
eval "$exports"
export COP_POLL_US=$poll
(cop_stack_start --nodes "$nodes" --dir "$work/stack") >/dev/null 2>"$work/start.log" || {
  cat "$work/start.log" >&2
  exit 1
}
"$here/copbench-cop-compare" --stack "$work/stack" --nodes "$nodes" "$@"
