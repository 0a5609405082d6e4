#!/usr/bin/env bash
# copbench-cop-compare-run POLL_US NODES [ARGS...]: what `copbench cop compare` runs.
# Installed as build/bin/copbench-cop-compare-run beside copbench-cop-compare.
#
# Starts a private pvmd and a loopback COP stack of NODES nodes (copd polling POLL_US
# microseconds: COP_POLL_US), runs `copbench-cop-compare --stack DIR --nodes NODES ARGS...`
# (libcop beside libpvm, seed 000 Table IV) and stops both by PID, also when it fails.
# With --per-controller K (K < NODES) it runs twice in one go: NODES nodes on one copd,
# then the same nodes over ceil(NODES/K) level-1 copd under a level-2 copd (seed 000
# ch. IV, Figure 5), and prints both cop_barrier times and their ratio.
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

per="" args=()
while [ $# -gt 0 ]; do
  case $1 in
    --per-controller) [ $# -ge 2 ] || { echo "--per-controller needs a number" >&2; exit 2; }; per=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

exports=$(pvmd_start "$work/pvm")
eval "$exports"
export COP_POLL_US=$poll
# compare_on K [ARGS...]: the comparison on a stack of NODES nodes, K channels per controller.
compare_on() {
  local k=$1
  shift
  (COP_PER_CONTROLLER=$k cop_stack_start --nodes "$nodes" --dir "$work/stack") >/dev/null 2>"$work/start.log" || {
    cat "$work/start.log" >&2
    exit 1
  }
  "$here/copbench-cop-compare" --stack "$work/stack" --nodes "$nodes" ${args[@]+"${args[@]}"} "$@"
  (cop_stack_stop --dir "$work/stack") >/dev/null 2>&1
}
if [ -z "$per" ] || [ "$per" -ge "$nodes" ]; then
  compare_on 64
  exit 0
fi
barrier_us() { sed -n 's/.*"cop_barrier_us": \([0-9.eE+-]*\).*/\1/p' "$1"; }
echo "== $nodes nodes on one copd"
compare_on 64 --json "$work/one.json"
echo "== $nodes nodes over $(((nodes + per - 1) / per)) level-1 copd of $per channels under a level-2 copd"
compare_on "$per" --json "$work/two.json"
one=$(barrier_us "$work/one.json") two=$(barrier_us "$work/two.json")
awk -v a="$one" -v b="$two" 'BEGIN { printf "cop_barrier: one controller %.2f us, two levels %.2f us, ratio %.2fx\n", a, b, b / a }'
