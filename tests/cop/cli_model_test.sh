#!/usr/bin/env bash
# copbench model: the Table III CSV has the promised header and every row;
# bad options are refused with a non-zero exit; --out writes the same CSV.
set -euo pipefail
copbench=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$copbench" model table3 --csv > "$tmp/t3.csv"
header=$(head -n 1 "$tmp/t3.csv")
[ "$header" = "function,type,column,published_us,analytic_us,simulated_us,note" ] || { echo "bad header: $header"; exit 1; }
rows=$(($(wc -l < "$tmp/t3.csv") - 1))
[ "$rows" -eq 30 ] || { echo "expected 30 rows, got $rows"; exit 1; }
grep -q '^cop_barrier,master-slave,best,4.21,4.2100,4.2100,' "$tmp/t3.csv" || { echo "master-slave barrier row wrong"; exit 1; }

"$copbench" model table3 --csv --out "$tmp/out/t3.csv"
cmp "$tmp/t3.csv" "$tmp/out/t3.csv"

# An overridden t_OP reaches the model: the integer write row changes.
"$copbench" model table3 --csv --t-op-int 4 > "$tmp/t3-override.csv"
grep -q '^cop_write,integer,best,2.09,2.7500,2.7500,' "$tmp/t3-override.csv" || { echo "override ignored"; exit 1; }

if "$copbench" model table3 --t-op-int notanumber > /dev/null 2>&1; then echo "bad option accepted"; exit 1; fi
if "$copbench" model simulate --c-bar 64 > /dev/null 2>&1; then echo "C-bar 64 accepted"; exit 1; fi
"$copbench" model simulate --function reduce --type double --column max --c-bar 10 --elements 4 > "$tmp/sim.txt"
grep -q simulated "$tmp/sim.txt"
