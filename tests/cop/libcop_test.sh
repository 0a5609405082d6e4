#!/usr/bin/env bash
# libcop on a real pvmd with copd and 4 copdrv on loopback, 2 tasks per node,
# in both access modes (cop_libcop_check does the checking).
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT [direct|normal ...]
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT poll      direct access, tasks and copd polling
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT killed    copd killed mid-barrier
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT loops     one tag used 50 times in a row per collective
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT modelled  live modelled time against the libcop-call model (cop/model/libcop_call.h, ideal link)
#                                                           (cop_modelled_check) at 2-4 nodes
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT killrecv  a receiver killed -9 inside cop_bcast
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT groups N T [R]  even and odd instances as two groups on the
#                                                           same tags at once, N nodes x T tasks, R rounds
#                                                           (COP_FAULTS: with injected faults, tasks too)
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT bcastloop one root, 1000 one-double broadcasts to 7
#                                                           receivers naming it (8 nodes x 1 task), 3 times
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT mismatch  gather/scatter with disagreeing counts,
#                                                           datatypes, roots; a non-member's broadcast;
#                                                           group windows used up (twice: freed between)
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT identity  operation identities (issue 34): LONG sent / DOUBLE received,
#                                                           a short receive, a timed-out receiver, cop_resync (4 x 1)
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT changes   libcop's default group views through a join, a leave,
#                                                           a leave with a join and a member's exit (4 nodes x 1 task)
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT repeat N  the checks N times on one stack (fresh
#                                                           jobs reusing task numbers): same answers
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT jobs      two jobs (COP_JOB, two virtual machines) at once
#   libcop_test.sh BUILD_BIN_DIR COP_STACK_SCRIPT machines  two private PVM machines, COP_JOB unset, at once
#                                                           on one stack, the same collectives on the same tags
set -euo pipefail
bin=$1 stack_cmd=$2
shift 2
modes=("${@:-direct normal}")
work=$(mktemp -d /tmp/libcop-test.XXXXXX)
cleanup() {
  "$stack_cmd" stop --dir "$work/stack" >/dev/null 2>&1 || true
  local d
  for d in "$work/pvm" "$work/pvma" "$work/pvmb"; do  # machines mode has two more
    [ -d "$d" ] && { "$bin/copbench-pvmd-local" stop "$d" >/dev/null 2>&1 || true; }
  done
  rm -rf "$work"
}
trap cleanup EXIT
eval "$("$bin/copbench-pvmd-local" start "$work/pvm")"
poll=0
[ "${modes[*]}" = poll ] && poll=100 modes=(direct)
nodes=4
case "${modes[0]}" in
groups) nodes=${modes[1]:-4} ;;
bcastloop) nodes=8 ;;
esac
# Injected faults (cop/link/fault.h) reach the spawned tasks too.
[ -z "${COP_FAULTS:-}" ] || export COP_FAULTS PVM_EXPORT=COP_FAULTS${PVM_EXPORT:+:$PVM_EXPORT}
COP_POLL_US=$poll COPBENCH_BUILD=$(dirname "$bin") "$stack_cmd" start --nodes $nodes --dir "$work/stack" >/dev/null
. "$(dirname "$0")/../lib/wait.sh"  # wait_until TIMEOUT_S COMMAND...
# said_or_gone FILE TEXT PID: FILE has a line with TEXT, or PID has ended (it never will).
said_or_gone() { grep -qF "$2" "$1" 2>/dev/null || ! kill -0 "$3" 2>/dev/null; }
copd_log() { echo "--- copd log"; tail -n 30 "$work/stack"/copd.log 2>/dev/null || true; }
rc=0
case "${modes[0]}" in
killed)
  # copd killed while the tasks of nodes 1-3 wait in a barrier: each gets CopErrLinkDown.
  # The check says when all of them sleep inside cop_barrier; copd is killed on that line.
  out=$work/kill.out
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario kill >"$out" 2>&1 &
  check=$!
  if ! wait_until 90 said_or_gone "$out" "copd may be killed now" "$check" || ! grep -qF "copd may be killed now" "$out"; then
    echo "the check never said its tasks wait in cop_barrier (90 s):"
    cat "$out"
    kill "$check" 2>/dev/null || true
    wait "$check" 2>/dev/null || true
    exit 1
  fi
  # COP_KILL names the daemon killed (default copd; copl2: the level-2 copd of a two-level
  # stack, whose level-1 copd then fail what waits for it with link_down).
  # Its PID file holds "PID START_TIME" (scripts/lib/daemons.sh).
  read -r victim _ <"$work/stack/${COP_KILL:-copd}.pid"
  kill -9 "$victim"
  wait "$check" || rc=1
  cat "$out"
  exit $rc
  ;;
modelled)
  for run in "2 direct" "3 direct" "4 direct" "3 normal"; do
    set -- $run
    "$bin/cop_modelled_check" --stack "$work/stack" --nodes "$1" --access "$2" || rc=1
  done
  exit $rc
  ;;
loops)
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario loops --rounds 50 ||
    { copd_log; exit 1; }
  exit 0
  ;;
jobs)
  # Two jobs sharing the stack (issue 25), named by COP_JOB (exported to their tasks; each
  # its own PVM group), running the same collectives on the same tags at once. copd gives each
  # its own partition: both must be right, whoever shares the nodes. (One virtual
  # machine: PVM's group server is not safe with two on one host.)
  run_job() {
    export COP_JOB=$1 PVM_EXPORT=COP_JOB
    "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario collectives --rounds 150
  }
  (run_job libcop-test-job-1) >"$work/job1.out" 2>&1 &
  j1=$!
  (run_job libcop-test-job-2) >"$work/job2.out" 2>&1 &
  j2=$!
  wait "$j1" || rc=1
  wait "$j2" || rc=1
  for j in 1 2; do
    echo "--- job $j"
    grep -v '^ok' "$work/job$j.out" | tail -n 15
  done
  [ "$rc" -eq 0 ] || copd_log
  exit $rc
  ;;
machines)
  # Issue 34: two private PVM virtual machines of one user on one host (two pvmds, each its
  # own PVM_TMP), COP_JOB unset, the same checks (one group name) on the same stack at once.
  # Each machine's first task puts a nonce in its mailbox: the two are two jobs, each its own
  # partition (before: both were 'pvm:<host>:uid<N>' and mixed their reductions). By hand
  # only, not a CTest test: PVM itself with two pvmds on one host sometimes never runs one
  # machine's tasks (1 run in 10 here: "no report from 8 task(s)"), an error, not a wrong value.
  unset COP_JOB
  run_machine() {
    eval "$("$bin/copbench-pvmd-local" start "$work/pvm$1")"
    local r=0
    "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario collectives --rounds 100 || r=$?
    "$bin/copbench-pvmd-local" stop "$work/pvm$1" >/dev/null 2>&1 || true
    return $r
  }
  (run_machine a) >"$work/m1.out" 2>&1 &
  m1=$!
  (run_machine b) >"$work/m2.out" 2>&1 &
  m2=$!
  wait "$m1" || rc=1
  wait "$m2" || rc=1
  for m in 1 2; do
    echo "--- machine $m"
    grep -v '^ok' "$work/m$m.out" | tail -n 15
  done
  [ "$rc" -eq 0 ] || copd_log
  exit $rc
  ;;
groups)
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes "$nodes" --tasks "${modes[2]:-2}" --access direct \
    --scenario groups --rounds "${modes[3]:-30}" || { copd_log; exit 1; }
  exit 0
  ;;
bcastloop)
  # Three loops on one stack: a receiver given a later round showed in about half the runs.
  for run in 1 2 3; do
    "$bin/cop_libcop_check" --stack "$work/stack" --nodes 8 --tasks 1 --access direct --scenario bcastloop \
      --rounds 1000 || { copd_log; exit 1; }
  done
  exit 0
  ;;
mismatch)
  # Twice: the second job finds the group windows the first one used up free again.
  for run in 1 2; do
    "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct --scenario mismatch ||
      { copd_log; exit 1; }
  done
  exit 0
  ;;
identity)
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 1 --access direct --scenario identity ||
    { copd_log; exit 1; }
  exit 0
  ;;
changes)
  "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 1 --access direct --scenario changes ||
    { copd_log; exit 1; }
  exit 0
  ;;
killrecv)
  "$bin/cop_libcop_check" --stack "$work/stack" --access direct --scenario killrecv || { copd_log; exit 1; }
  exit 0
  ;;
repeat)
  # Each run is a fresh job whose tasks take task numbers (TKNO) earlier runs had: the
  # driver gives a task the number L mod 64 (its tid's L field; copd's 64 task address
  # spaces per channel) and each run's 9 tids advance L by about 10, so within 33 runs a
  # task gets a number an earlier run's task of its channel had (and wrote into). Every
  # run must pass with the same checks, among them that a fresh task's space reads zero.
  runs=${modes[1]:-40}
  first=""
  for i in $(seq 1 "$runs"); do
    out=$("$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access direct 2>&1) || rc=1
    summary=$(printf '%s\n' "$out" | tail -n 1)
    echo "run $i: $summary"
    printf '%s\n' "$out" | grep FAIL | sort | uniq -c | head -n 10 || true
    [ -z "$first" ] && first=$summary
    if [ "$summary" != "$first" ]; then
      echo "run $i differs from run 1"
      rc=1
    fi
  done
  exit $rc
  ;;
esac
for mode in ${modes[*]}; do
  if ! "$bin/cop_libcop_check" --stack "$work/stack" --nodes 4 --tasks 2 --access "$mode" --poll-us $poll; then
    rc=1
    copd_log
  fi
done
exit $rc
