#!/usr/bin/env bash
# The live stack's modelled time against the analytic model (cop_modelled_check):
# a pvmd and copd with 4 copdrv on loopback; the check at 2, 3 and 4 nodes in direct
# access, and at 3 in normal access.
#   modelled_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT
set -euo pipefail
bin=$1 stack_cmd=$2
work=$(mktemp -d /tmp/cop-modelled-test.XXXXXX)
cleanup() {
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  "$bin/copbench-pvmd-local" stop "$work/pvm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
eval "$("$bin/copbench-pvmd-local" start "$work/pvm")"
COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes 4 --dir "$work/stack" >/dev/null
rc=0
for run in "2 direct" "3 direct" "4 direct" "3 normal"; do
  set -- $run
  "$bin/cop_modelled_check" --stack "$work/stack" --nodes "$1" --access "$2" || rc=1
done
exit $rc
