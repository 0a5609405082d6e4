#!/usr/bin/env bash
# Runs the porting check (README.md) and compares the answers.
#   porting_check.sh pvm BINDIR WORKDIR       porting_pvm on a private pvmd; its own check
#   porting_check.sh compare BINDIR WORKDIR   porting_pvm, then porting_cop with a loopback
#                                             COP stack of 4 nodes: both pass and print the same
# BINDIR holds porting_pvm, porting_cop, copbench-pvmd-local and copbench-cop-stack. Whatever
# this script starts (pvmd, copd, copdrv) it stops, also on failure.
set -uo pipefail

mode=${1:-}
bindir=${2:-}
work=${3:-}
nodes=4
per_node=2
fail() { echo "porting check: $*" >&2; exit 1; }
[ -n "$work" ] && [[ $mode == pvm || $mode == compare ]] || fail "usage: porting_check.sh pvm|compare BINDIR WORKDIR"
for b in porting_pvm copbench-pvmd-local $([ "$mode" = compare ] && echo porting_cop copbench-cop-stack); do
  [ -x "$bindir/$b" ] || fail "$bindir/$b is not built"
done
mkdir -p "$work"
rm -f "$work"/*.out "$work"/*.err

cleanup() {
  [ "$mode" = compare ] && "$bindir/copbench-cop-stack" stop --dir "$work/cop" 2>/dev/null
  "$bindir/copbench-pvmd-local" stop "$work/pvm" 2>/dev/null
}
trap cleanup EXIT

exports=$("$bindir/copbench-pvmd-local" start "$work/pvm") || fail "the private pvmd did not start"
eval "$exports"

# One version: its output in WORKDIR/NAME.out; non-zero (its stderr shown) if it fails.
run() {
  local name=$1
  if ! "$bindir/porting_$name" --nodes $nodes --tasks-per-node $per_node --timeout 90 \
    >"$work/$name.out" 2>"$work/$name.err"; then
    cat "$work/$name.out" "$work/$name.err" >&2
    fail "porting_$name failed"
  fi
  cat "$work/$name.out"
}

run pvm
[ "$mode" = pvm ] && exit 0

exports=$("$bindir/copbench-cop-stack" start --nodes $nodes --dir "$work/cop") || fail "the COP stack did not start"
eval "$exports"
run cop
if ! diff -u "$work/pvm.out" "$work/cop.out"; then
  fail "porting_cop's answers differ from porting_pvm's (diff above)"
fi
echo "porting check: porting_pvm and porting_cop agree"
