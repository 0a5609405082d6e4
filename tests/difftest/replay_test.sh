#!/usr/bin/env bash
# cop_difftest's replay promise without a stack: a seed's program is the same every time,
# two seeds give different programs, and an unknown feature class is refused (exit 2).
set -euo pipefail
exe=$1
a=$("$exe" --print --seed 7 --features all)
b=$("$exe" --print --seed 7 --features all)
c=$("$exe" --print --seed 8 --features all)
[ "$a" = "$b" ] || { echo "seed 7 gave two programs"; exit 1; }
[ "$a" != "$c" ] || { echo "seeds 7 and 8 gave one program"; exit 1; }
echo "$a" | grep -q 'step 0:' || { echo "no steps printed"; exit 1; }
rc=0
"$exe" --print --seed 1 --features reduce,nonsense 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "an unknown feature class gave exit $rc, not 2"; exit 1; }
echo "replay: ok"
