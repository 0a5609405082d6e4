#!/usr/bin/env bash
# campaign_report_test.sh COPBENCH WORKDIR: a tiny apps campaign on cop, mpi and armci, then
# `copbench report`: the md Table V table (published row and ours, projected and measured
# COP speedups: md also runs on cop), the ParaStation2
# Table 4 and NCUBE Table 3 comparisons and a plot per application are written.
set -eu
copbench=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cat > "$work/apps-ci.yml" <<'YML'
name: apps-ci
profiles: [native]
compare: [parastation2-table4, ncube-table3]
main_table: md-table5
defaults: {reps: 1, max_reps: 2, timeout: 120}
runs:
  - benchmark: md
    backends: [cop, mpi, armci]
    nodes: [2, 3]
    sizes: [12]
    params: {steps: 5}
  - benchmark: matmul
    backends: [mpi]
    nodes: [1, 2]
    sizes: [40]
  - benchmark: radixsort
    backends: [mpi]
    nodes: [1, 2]
    sizes: [500]
    params: {radix: "8,16"}
  - benchmark: halo
    backends: [mpi]
    nodes: [1, 2]
    sizes: [16]
    params: {frames: 2}
YML
"$copbench" campaign run "$work/apps-ci.yml" --results "$work/results" --quiet > "$work/run.txt" 2>&1 || { cat "$work/run.txt"; exit 1; }
dir=$(ls -d "$work"/results/apps-ci-*)
"$copbench" report "$dir" > "$work/report.txt" 2>&1 || { cat "$work/report.txt"; exit 1; }
fail() { echo "FAIL: $*"; cat "$work/report.txt"; exit 1; }
grep -q "thesis Table V" "$work/report.txt" || fail "the main table is not Table V"
grep -q "| published libpvm | 0.16 | 0.14 | 0.04 | 0.06 | 0.40 | 0.60 |" "$dir/tables/md-table5.md" || fail "published Table V row"
for b in mpi armci; do
  for n in 2 3; do
    # ... | projected COP speedup | measured COP speedup (this ÷ cop) | median run µs |
    # (a ratio far from 1 is printed as 4.91e-05x: the table's number format)
    num='[0-9.]+(e[-+]?[0-9]+)?'
    grep -qE "^\| md/atoms:12/steps:5 \| $n \| $b \|.* ${num}x \| ${num}x \| $num( !)? \|\$" "$dir/tables/md-table5.md" ||
      fail "no md row with projected and measured COP speedup for $b on $n nodes"
  done
done
grep -q "projected COP speedup" "$dir/tables/md-table5.csv" || fail "md-table5.csv"
# The applications' runs are timed by the window method, and index.md says so with its count.
grep -qE "^\| whole runs \| window method \([0-9]+ point\(s\): the applications'\).* [0-9]+ of [1-9][0-9]* runs invalid" "$dir/index.md" ||
  fail "index.md does not say how the applications' runs were timed"
grep -q "n=1000 uniprocessor MFlop" "$dir/tables/parastation2-table4.md" || fail "parastation2-table4"
grep -q "fraction calculating" "$dir/tables/ncube-table3.md" || fail "ncube-table3"
if command -v gnuplot > /dev/null; then
  for app in md matmul radixsort halo; do
    ls "$dir"/plots/"$app"-*-vs-nodes.png > /dev/null 2>&1 || fail "no $app plot"
  done
fi
echo "ok: $dir"
