#!/usr/bin/env bash
# cop_difftest must be able to fail: seed 1 with --self-check (a wrong element planted in
# every reduction result) exits 1 and names the seed and step of a wrong reduction.
set -uo pipefail
bin=$1 stack_cmd=$2
out=$("$(dirname "$0")/difftest.sh" "$bin" "$stack_cmd" --seed 1 --steps 20 --features reduce -- --self-check 2>&1)
rc=$?
[ "$rc" = 1 ] || { echo "$out" | tail -n 20; echo "exit $rc, not 1"; exit 1; }
grep -q 'WRONG seed 1 job 0 step [0-9]* task [0-9]* (reduce' <<<"$out" || { echo "$out" | tail -n 20; echo "no WRONG line"; exit 1; }
grep -q '^DIFFTEST seed 1 job 0: .* FAIL$' <<<"$out" || { echo "no FAIL line"; exit 1; }
echo "can fail: ok"
