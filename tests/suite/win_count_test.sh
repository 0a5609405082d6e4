#!/usr/bin/env bash
# win_count_test.sh COPBENCH WRAPPER.so BENCH NODES WINDOWS [ARGS...]: runs `copbench run
# BENCH --backend mpi` with the PMPI window counter preloaded and passes when every one
# of the NODES ranks finalized having created exactly WINDOWS RMA windows.
set -u
copbench=$1 wrapper=$2 bench=$3 nodes=$4 want=$5
shift 5
file=$(mktemp)
trap 'rm -f "$file"' EXIT
if ! COPBENCH_WIN_COUNT_FILE=$file LD_PRELOAD=$wrapper "$copbench" run "$bench" --backend mpi --nodes "$nodes" "$@" >/dev/null; then
  echo "copbench run $bench failed"; exit 1
fi
lines=$(grep -c '^windows ' "$file")
if [ "$lines" -ne "$nodes" ]; then echo "expected $nodes ranks to report, got $lines:"; cat "$file"; exit 1; fi
bad=$(grep -v "^windows $want\$" "$file")
if [ -n "$bad" ]; then echo "$bench: expected $want windows per rank, got:"; cat "$file"; exit 1; fi
echo "ok: $bench opened $want windows on each of $nodes ranks"
