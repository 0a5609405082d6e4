#!/usr/bin/env bash
# number_options_test.sh COPBENCH: every numeric option of copbench's commands, given a value
# out of range (negative, zero where at least 1, too large for its type, not a number), is
# refused before anything runs: non-zero exit, and stderr names the option and its bounds
# in a short line (no 309-digit bound, no "Could not convert", no run with a wrapped value).
set -u
copbench=$1
failed=0
check() {  # check OPTION VALUE COMMAND...
  local option=$1 value=$2
  shift 2
  local err rc
  err=$(timeout 30 "$@" "$option" "$value" 2>&1 >/dev/null)
  rc=$?
  local first=${err%%$'\n'*}
  if [ "$rc" -eq 0 ]; then
    echo "FAIL $* $option $value: exit 0"; failed=1
  elif [[ "$first" != "$option: '$value' is not a "*" from "* && "$first" != "$option: '$value' is not a number greater than 0"* ]]; then
    echo "FAIL $* $option $value: exit $rc, says: $first"; failed=1
  elif [ "${#first}" -gt 120 ]; then
    echo "FAIL $* $option $value: a ${#first}-character message"; failed=1
  else
    echo "ok   $option $value: $first"
  fi
}
run=("$copbench" run echo --backend mpi)
for v in -5 0 99999999999 x; do check --iters "$v" "${run[@]}"; done
for v in -1 0 2147483648; do check --reps "$v" "${run[@]}"; done
for v in -3 0; do check --max-reps "$v" "${run[@]}"; done
for v in -1 1e9; do check --warmup "$v" "${run[@]}"; done
for v in -1 0 99999999999; do check --timeout "$v" "${run[@]}"; done
for v in -3 99999999999; do check --nodes "$v" "${run[@]}"; done
verify=("$copbench" verify --backend mpi)
for v in -1 0; do check --timeout "$v" "${verify[@]}"; done
for v in 0 99999999999; do check --nodes "$v" "${verify[@]}"; done
model=("$copbench" model table3)
for o in --t-cn-cop --t-op-int --t-op-fp --t-cop-cn; do
  for v in -5 99999999999999999999999; do check "$o" "$v" "${model[@]}"; done
done
for v in -5 0 nan inf; do check --p-clk-ns "$v" "${model[@]}"; done
exit $failed
