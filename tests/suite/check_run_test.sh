#!/usr/bin/env bash
# check_run_test.sh: check_run.py passes a good file and fails each bad one with its
# reason (a stand-in copbench writes the fixture as its --out file).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fake=$here/check_run/fake_copbench.sh
args=(run echo --backend mpi --nodes 2 --sizes 0,8)
expect() {  # expect FIXTURE RC TEXT
  local out rc
  out=$(CHECK_RUN_FIXTURE=$here/check_run/$1 python3 "$here/check_run.py" "$fake" "${args[@]}" 2>&1)
  rc=$?
  [ "$rc" = "$2" ] || { echo "$1: exit $rc, expected $2: $out"; exit 1; }
  grep -q -- "$3" <<<"$out" || { echo "$1: no '$3' in: $out"; exit 1; }
}
expect good.json 0 "12 values checked, 0 failures"
expect missing_size.json 1 "CHECK FAILED: no point for requested size 8"
expect zero_time.json 1 "CHECK FAILED: echo/size:0_median: real_time 0.0 is not positive"
expect nan_time.json 1 "CHECK FAILED: echo/size:0_max: cpu_time is nan, not a finite number"
expect bad_context.json 1 "CHECK FAILED: context nodes is '3', expected '2'"
expect bad_context.json 1 "CHECK FAILED: context has no timing_method"
# A run on a simulated platform must say so: the (wall-clock, unsimulated) good file fails.
args=(run echo --backend mpi --nodes 2 --sizes 0,8 --platform present)
expect good.json 1 "CHECK FAILED: context simulated is None, expected 'true'"
expect good.json 1 "CHECK FAILED: context timer is .*, expected MPI_Wtime"
echo "check_run.py: 8 cases as expected"
