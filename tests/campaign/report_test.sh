#!/usr/bin/env bash
# report_test.sh COPBENCH DATA WORK: the report of the fixed directory data/small-run
# matches data/small-run-expected, and a second report is identical to the first.
set -euo pipefail
copbench=$1 data=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$copbench" report "$data/small-run" --out "$work/a" >"$work/a.out" 2>&1 || fail "report failed: $(cat "$work/a.out")"
diff -ru "$data/small-run-expected" "$work/a/tables" || fail "tables differ from the expected ones (above)"
grep -q "| Barrier using cop_barrier/pvm_barrier |" "$work/a.out" || fail "the main table was not printed"
"$copbench" report "$data/small-run" --out "$work/b" >/dev/null 2>&1 || fail "second report failed"
diff -r -x '*.png' "$work/a" "$work/b" || fail "a second report differs from the first"
if command -v gnuplot >/dev/null; then
  for p in barrier-vs-nodes echo-vs-size-n2; do
    for ext in png svg gp dat; do [ -s "$work/a/plots/$p.$ext" ] || fail "plot $p.$ext missing"; done
    grep -q "time per operation \[µs\]" "$work/a/plots/$p.gp" || fail "$p: y axis without unit"
    grep -q "campaign sample, profile native" "$work/a/plots/$p.gp" || fail "$p: title without campaign and profile"
  done
  grep -q "message size \[bytes\]" "$work/a/plots/echo-vs-size-n2.gp" || fail "echo: x axis without unit"
  grep -q "title \"pvm/direct/raw\"" "$work/a/plots/echo-vs-size-n2.gp" || fail "echo: no pvm/direct curve"
  grep -q "title \"pvm/normal/raw\"" "$work/a/plots/echo-vs-size-n2.gp" || fail "echo: no pvm/normal curve"
fi
grep -q "(tables/thesis-table4.md)" "$work/a/index.md" || fail "index does not link the tables"
grep -q "(tables/armci-ratios.pairing.csv)" "$work/a/index.md" || fail "index does not link the pairing of a seed table"
grep -q "not offered | backend cop is not built yet" "$work/a/index.md" || fail "index does not list what did not run"
# Written elsewhere (--out), index.md still reaches the campaign's own files.
(cd "$work/a" && for f in $(grep -o '\[[a-z.]*\]([^)]*)' index.md | grep -E 'manifest|campaign' | sed 's/.*(\(.*\))/\1/'); do
  [ -e "$f" ] || fail "index.md links $f, which does not exist from $work/a"
done) || exit 1
grep -q "manifest.json](" "$work/a/index.md" || fail "index does not link the manifest"
echo "ok: tables as expected, report reproducible"
