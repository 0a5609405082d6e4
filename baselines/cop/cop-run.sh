#!/usr/bin/env bash
# copbench-cop-run: how `copbench run --backend cop` starts the cop worker. Installed as
# build/bin/copbench-cop-run beside copbench-worker-cop; the arguments are the worker's.
#
# What it needs, it uses if it is there and starts privately if not, and stops what it
# started, by PID, when the worker ends (also on SIGTERM from copbench's deadline):
#   PVM       the running virtual machine of $PVM_TMP when PVM_TMP is set and its pvmd is
#             alive, or on a cluster (COP_USE_RUNNING=1) that of $PVM_TMP or /tmp, which
#             must be running (one task per host, in COP channel order); otherwise a
#             private pvmd (copbench-pvmd-local) in a temporary directory.
#   COP stack COP_DRIVER_1..N (as `eval "$(copbench-cop-stack start --nodes N)"` exports
#             them) or COP_STACK_DIR (a stack's --dir: node k at DIR/node<k>) or, with
#             COP_USE_RUNNING=1, each task's own COP_DRIVER (a cluster's copdrv per host);
#             otherwise copd and N copdrv on loopback (copbench-cop-stack --nodes N) in a
#             temporary directory.
# Both lifecycles are lib/stack.sh's (beside this script), run in subshells so that a
# failure there ends only the subshell.
set -uo pipefail

here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
COPBENCH_BIN=$here
me=cop-stack  # the stack's messages read as those of copbench-cop-stack
source "$here/lib/stack.sh"
nodes=1
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  [ "${args[i]}" = --nodes ] && nodes=${args[i + 1]:-1}
done

work=$(mktemp -d "${TMPDIR:-/tmp}/copbench-cop-run.XXXXXX")
started_pvm=0 started_stack=0 worker=
cleanup() {
  [ -n "$worker" ] && kill -TERM "$worker" 2>/dev/null
  [ "$started_stack" = 1 ] && (set -euo pipefail; cop_stack_stop --dir "$work/stack") >/dev/null 2>&1
  [ "$started_pvm" = 1 ] && pvmd_stop "$work/pvm" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

# On a cluster (COP_USE_RUNNING=1, set by `copbench run --hostfile`) the tasks must be
# spread over the cluster's virtual machine: a private one would put them all here.
if [ "${COP_USE_RUNNING:-0}" = 1 ] && ! pvm_alive; then
  echo "copbench-cop-run: no pvmd at ${PVM_TMP:-/tmp}/pvmd.$(id -u): a cop run on a cluster uses its running virtual machine (set PVM_TMP to its directory)" >&2
  exit 1
fi

# On one machine a private pvmd unless PVM_TMP names a live one.
if [ "${COP_USE_RUNNING:-0}" != 1 ] && { [ -z "${PVM_TMP:-}" ] || ! pvm_alive; }; then
  if ! exports=$(pvmd_start "$work/pvm" 2>&1); then
    echo "copbench-cop-run: could not start a private pvmd: $exports" >&2
    exit 1
  fi
  started_pvm=1
  eval "$exports"
fi

if [ -z "${COP_DRIVER_1:-}" ] && [ -z "${COP_STACK_DIR:-}" ] && [ "${COP_USE_RUNNING:-0}" != 1 ]; then
  if ! out=$( (set -euo pipefail; cop_stack_start --nodes "$nodes" --dir "$work/stack") 2>&1 >/dev/null); then
    echo "copbench-cop-run: could not start the COP stack: ${out##*$'\n'}" >&2
    exit 1
  fi
  started_stack=1
  export COP_STACK_DIR=$work/stack
fi

"$here/copbench-worker-cop" "$@" &
worker=$!
wait "$worker"
rc=$?
worker=
exit $rc
