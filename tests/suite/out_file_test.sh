#!/usr/bin/env bash
# out_file_test.sh COPBENCH DIR: --out is written atomically and compare.py reads it.
set -euo pipefail
copbench=$1
dir=$2
rm -rf "$dir" && mkdir -p "$dir"
tiny=(--reps 2 --max-reps 3 --iters 3 --warmup 1)

echo "precious" >"$dir/a.json"
if "$copbench" run echo --backend mpi --nodes 2 --sizes 8,oops --out "$dir/a.json" 2>/dev/null; then
  echo "a bad run succeeded"; exit 1
fi
[ "$(cat "$dir/a.json")" = "precious" ] || { echo "a failed run touched --out"; exit 1; }

"$copbench" run echo --backend mpi --nodes 2 --sizes 0,8 "${tiny[@]}" --out "$dir/a.json" >/dev/null
"$copbench" run echo --backend mpi --nodes 2 --sizes 0,8 "${tiny[@]}" --out "$dir/b.json" >/dev/null
python3 "$(dirname "$0")/../lib/checks.py" out-file "$dir/a.json"
ls -a "$dir" | grep -q '\.tmp\.' && { echo "temporary file left behind"; exit 1; }

# compare.py goes with Debian's python3 (python3-scipy), not whatever python3 is first on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if "$py" "$(dirname "$0")/../lib/checks.py" module scipy 2>/dev/null; then
  "$py" /usr/share/benchmark/compare.py benchmarks "$dir/a.json" "$dir/b.json" | tee "$dir/compare.txt"
  grep -q 'echo/size:8' "$dir/compare.txt"
else
  echo "python3-scipy missing: compare.py cannot run here (scripts/lib/packages.txt lists it)"; exit 1
fi
