#!/usr/bin/env bash
# Runs cop_difftest (tests/difftest/README.md) over seeds: a private PVM (copbench-pvmd-local)
# and, for each seed, a fresh COP stack of scripts/cop-stack (4 nodes), the seed's program on
# it, the stack stopped again. A failure is reproducible from its seed (--seed S).
#   difftest.sh BUILD_BIN_DIR COP_STACK_SCRIPT [--seeds "S1 S2 ..." | --seed S | --budget SECONDS [--start-seed S]]
#               [--features LIST] [--steps K] [--tasks T] [--max-errors N] [-- cop_difftest options...]
#   --budget: seeds start-seed, start-seed+1, ... (default: the time's seconds) until SECONDS have passed.
#   COP_PER_CONTROLLER=K: a two-level stack (K channels a level-1 copd, scripts/cop-stack).
#   --features jobs: every program runs twice at once, as two jobs (COP_JOB difftest-a-S and
#     difftest-b-S) of two private PVM machines on the one stack, the same group names and tags;
#     jobs-default: the same with COP_JOB unset (each job named by libcop's default).
#   --max-errors N: also fail when the programs' libcop calls returned more than N errors in all
#     (for classes without faults, where an error means one job or call disturbed another).
# Prints each run's DIFFTEST line and, at the end, the seeds that failed and the totals per kind.
# Exit 0: every program right (errors allowed); 1: a wrong value, a fetch-and-add history out of
# bounds, a hang, or a stack that did not start; 2: bad usage.
set -euo pipefail
bin=$1 stack_cmd=$2
shift 2
seeds="" budget="" start="" features="" steps=40 tasks=8 max_errors="" extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --seed) seeds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --start-seed) start=$2; shift 2 ;;
    --features) features=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --max-errors) max_errors=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "difftest.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$seeds" ] || [ -n "$budget" ] || { echo "difftest.sh: --seeds, --seed or --budget" >&2; exit 2; }
# Without --features, cop_difftest's default classes (the one list: program.cpp).
[ -n "$features" ] || features=$("$bin/cop_difftest" --print --seed 1 --steps 1 | sed -n '1s/.* features //p' | tr ' ' ,)
"$bin/cop_difftest" --print --seed 1 --features "$features" --steps 1 --tasks "$tasks" >/dev/null || exit 2
work=$(mktemp -d /tmp/cop-difftest.XXXXXX)
jobs=""
case ",$features," in *,all,* | *,jobs,*) jobs=named ;; *,jobs-default,*) jobs=default ;; esac
cleanup() {
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  "$bin/copbench-pvmd-local" stop "$work/pvm" >/dev/null 2>&1 || true
  [ -z "$jobs" ] || "$bin/copbench-pvmd-local" stop "$work/pvm2" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' TERM INT  # so that the EXIT trap stops the stack and the PVMs
pvm_env() { "$bin/copbench-pvmd-local" start "$1"; }
pvm1=$(pvm_env "$work/pvm") || exit 1
[ -z "$jobs" ] || pvm2=$(pvm_env "$work/pvm2") || exit 1

# run_job PVM_EXPORTS JOB SEED [OPTION...]: one cop_difftest on that virtual machine.
run_job() {
  local exports=$1 job=$2 seed=$3
  shift 3
  (
    eval "$exports"
    unset COP_JOB
    if [ "$jobs" = named ]; then export COP_JOB=difftest-$([ "$job" = 0 ] && echo a || echo b)-$seed PVM_EXPORT=COP_JOB; fi
    # Two levels (COP_PER_CONTROLLER, read by scripts/cop-stack too): libcop's mapping in every task.
    [ -z "${COP_PER_CONTROLLER:-}" ] || export COP_PER_CONTROLLER PVM_EXPORT=COP_PER_CONTROLLER${PVM_EXPORT:+:$PVM_EXPORT}
    "$bin/cop_difftest" --stack "$work/stack" --seed "$seed" --features "$features" --steps "$steps" \
      --tasks "$tasks" --job "$job" "$@" "${extra[@]}"
  )
}
# run_seed SEED: a fresh stack, the program (twice at once with jobs), the stack stopped.
run_seed() {
  local seed=$1 rc=0
  COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes 4 --dir "$work/stack" >"$work/stack.out" 2>&1 ||
    { cat "$work/stack.out"; return 1; }
  if [ -n "$jobs" ]; then
    run_job "$pvm2" 1 "$seed" --no-faults >"$work/job1.out" 2>&1 &
    local other=$!
    run_job "$pvm1" 0 "$seed" >"$work/job0.out" 2>&1 || rc=1
    wait "$other" || rc=1
    cat "$work/job0.out" "$work/job1.out"
  else
    run_job "$pvm1" 0 "$seed" >"$work/job0.out" 2>&1 || rc=1
    cat "$work/job0.out"
  fi
  if [ $rc -ne 0 ]; then echo "--- copd log (seed $seed)"; tail -n 15 "$work/stack/copd.log" 2>/dev/null || true; fi
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  return $rc
}

echo "cop_difftest: features $features, $tasks tasks on 4 nodes, $steps steps a program"
[ -z "$seeds" ] || echo "cop_difftest: seeds $seeds"
failed="" n=0 t0=$SECONDS list=()
read -r -a list <<<"$seeds"
seed=${start:-$(date +%s)}
[ -z "$budget" ] || echo "cop_difftest: budget $budget s from seed $seed"
while :; do
  if [ -n "$seeds" ]; then
    [ $n -lt ${#list[@]} ] || break
    seed=${list[$n]}
  elif [ $((SECONDS - t0)) -ge "$budget" ]; then
    break
  fi
  run_seed "$seed" | tee -a "$work/all.out" || failed="$failed $seed"
  n=$((n + 1))
  [ -n "$seeds" ] || seed=$((seed + 1))
done
echo "cop_difftest: $n program(s) in $((SECONDS - t0)) s; failed seeds:${failed:- none}"
grep '^DIFFTEST' "$work/all.out" | awk '{for (i = 6; i < NF; i += 2) s[$i] += $(i + 1)} END {
  printf "cop_difftest totals:"; for (k in s) printf " %s %d", k, s[k]; printf "\n" }'
errors=$(grep '^DIFFTEST' "$work/all.out" | awk '{for (i = 6; i < NF; i += 2) if ($i == "errors") e += $(i + 1)} END {print e + 0}')
if [ -n "$max_errors" ] && [ "$errors" -gt "$max_errors" ]; then
  echo "cop_difftest: $errors errors, more than --max-errors $max_errors: FAIL"
  exit 1
fi
[ -z "$failed" ]
