#!/usr/bin/env bash
# libcop on a real pvmd with copd and 4 copdrv on loopback, 2 tasks per node,
# in both access modes (cop_libcop_check does the checking).
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT [direct|normal ...]
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT poll     direct access, tasks and copd polling
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT killed   copd killed mid-barrier
set -euo pipefail
bin=$1 stack_cmd=$2
shift 2
modes=("${@:-direct normal}")
work=$(mktemp -d /tmp/libcop-test.XXXXXX)
cleanup() {
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  "$bin/copbench-pvmd-local" stop "$work/pvm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
eval "$("$bin/copbench-pvmd-local" start "$work/pvm")"
poll=0
[ "${modes[*]}" = poll ] && poll=100 modes=(direct)
COP_POLL_US=$poll COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes 4 --dir "$work/stack" >/dev/null
rc=0
if [ "${modes[*]}" = killed ]; then
  # copd killed while the tasks of nodes 1-3 wait in a barrier: each gets CopErrLinkDown.
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario kill &
  check=$!
  sleep 2
  kill -9 "$(cat "$work/stack/copd.pid")"
  wait "$check" || rc=1
  exit $rc
fi
for mode in ${modes[*]}; do
  if ! "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access "$mode" --poll-us $poll; then
    rc=1
    echo "--- copd log"; tail -n 30 "$work/stack"/copd.log 2>/dev/null || true
  fi
done
exit $rc
