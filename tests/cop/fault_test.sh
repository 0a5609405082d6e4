#!/usr/bin/env bash
# libcop on a real pvmd with copd and 4 copdrv on loopback, under injected link
# faults (COP_FAULTS, cop/link/fault.h) on every side: cop_fault_check runs
# checked collectives and an exact fetch-and-add under each rate, after a run
# without faults (the time per operation is compared with it).
#   fault_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT KIND [RATE...]
#     KIND drop|corrupt|dup|reorder|delay: that fault at each RATE (default 0.01 0.05 0.1)
#     KIND all: every fault at each RATE at once (default 0.05)
#   fault_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT copbench RATE   copbench run barrier --backend cop --nodes 3
#   fault_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT outage MS...    copd stopped MS ms (longer than its 1 s lease; a stack each)
#                                                                while the tasks run collectives (cop_fault_check
#                                                                --outage-ms): right values or errors, then
#                                                                FAULT_ROUNDS (default 20) rounds that all succeed
# Environment: FAULT_ROUNDS (default 40), FAULT_ACCESS (direct), FAULT_SEED (7),
# FAULT_TASKS (tasks a node, 2), FAULT_BURST (1: also arrays of many bursts), FAULT_NODES (4;
# not for outage). COPD_IO_THREADS and COPD_POLL reach copd through scripts/cop-stack.
set -euo pipefail
bin=$1 stack_cmd=$2 kind=$3
shift 3
work=$(mktemp -d /tmp/cop-fault-test.XXXXXX)
cleanup() {
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  "$bin/copbench-pvmd-local" stop "$work/pvm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
seed=${FAULT_SEED:-7}

if [ "$kind" = copbench ]; then
  # The benchmark itself under loss: it must complete (and check its result).
  export COP_FAULTS="drop=${1:-0.01},seed=$seed"
  out=$("$bin/copbench" run barrier --backend cop --nodes 3 --iters 200 --reps 2 --max-reps 3 --warmup 5 --timeout 120 2>&1) || {
    echo "$out" | tail -n 30
    exit 1
  }
  echo "$out" | tail -n 5
  exit 0
fi

eval "$("$bin/copbench-pvmd-local" start "$work/pvm")"
if [ "$kind" = outage ]; then
  rc=0
  for ms in "${@:-1600}"; do  # one stack for each outage
    COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes 4 --dir "$work/stack" >"$work/stack.out" 2>&1 ||
      { cat "$work/stack.out"; exit 1; }
    one=0
    "$bin/cop_fault_check" --stack "$work/stack" --outage-ms "$ms" --nodes 4 --tasks "${FAULT_TASKS:-2}" \
      --rounds "${FAULT_ROUNDS:-20}" --access "${FAULT_ACCESS:-direct}" >"$work/out" 2>&1 || one=1
    cat "$work/out"
    [ $one -eq 0 ] || { rc=1; echo "--- copd log"; tail -n 20 "$work/stack/copd.log" 2>/dev/null || true; }
    "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  done
  exit $rc
fi
rates=("$@")
[ ${#rates[@]} -gt 0 ] || { [ "$kind" = all ] && rates=(0.05) || rates=(0.01 0.05 0.1); }
run() {  # run SPEC: one stack with the faults, one cop_fault_check; its FAULTS line
  local spec=$1 rc=0
  COP_FAULTS=$spec COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes "${FAULT_NODES:-4}" --dir "$work/stack" >"$work/stack.out" 2>&1 ||
    { cat "$work/stack.out" >&2; return 1; }
  "$bin/cop_fault_check" --stack "$work/stack" --faults "$spec" --nodes "${FAULT_NODES:-4}" --tasks "${FAULT_TASKS:-2}" --rounds "${FAULT_ROUNDS:-40}" \
    --access "${FAULT_ACCESS:-direct}" --burst "${FAULT_BURST:-0}" >"$work/out" 2>&1 || rc=1
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  if [ $rc -ne 0 ]; then  # on stderr: stdout is the FAULTS line the caller parses
    cat "$work/out" >&2
    { echo "--- copd log"; tail -n 20 "$work/stack/copd.log" 2>/dev/null || true; } >&2
  fi
  grep '^FAULTS' "$work/out" || echo "FAULTS $spec (no result line) FAILED"
  return $rc
}
rc=0
base=$(run "drop=0,seed=$seed") || rc=1
echo "$base"
base_us=$(sed -n 's/.* us_per_op \([0-9.]*\).*/\1/p' <<<"$base")
printf '%-66s %6s %6s %6s %6s %10s %8s\n' fault ops errors wrong dup us/op x_none
for r in "${rates[@]}"; do
  if [ "$kind" = all ]; then
    spec="drop=$r,corrupt=$r,dup=$r,reorder=$r,delay=$r,delay_ms=5,seed=$seed"
  else
    spec="$kind=$r,delay_ms=5,seed=$seed"
  fi
  line=$(run "$spec") || rc=1
  read -r _ s _ ops _ errors _ wrong _ dup _ us _ <<<"$line"
  printf '%-66s %6s %6s %6s %6s %10s %8s\n' "$s" "$ops" "$errors" "$wrong" "$dup" "$us" \
    "$(awk -v a="$us" -v b="$base_us" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
  grep -q FAILED <<<"$line" && rc=1
done
exit $rc
