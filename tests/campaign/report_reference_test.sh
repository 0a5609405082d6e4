#!/usr/bin/env bash
# report_reference_test.sh COPBENCH DATA WORK: a campaign naming `reference:` (the fixed
# directories data/reference-new and data/reference-old, see make-reference-runs.py).
# The report's table of every point against the reference has copbench compare's
# verdicts (slower, faster, same, missing on either side), index.md its summary, and the
# report exits 0 while copbench compare on the same two directories exits 3 (the gate).
# The reference is read from the manifest, else from the campaign file's copy (relative
# to where the campaign file was); a reference gone at report time is a warning.
set -euo pipefail
copbench=$1 data=$2 work=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"

# 1. The manifest names ../reference-old with 10 %.
"$copbench" report "$data/reference-new" --out "$work/a" --no-plots >"$work/a.out" 2>&1 ||
  fail "report exited non-zero with a slower point (the report is not a gate): $(cat "$work/a.out")"
table=$work/a/tables/reference-campaign.csv
[ -s "$table" ] || fail "no tables/reference-campaign.csv"
diff -u "$data/reference-new-expected/reference-campaign.csv" "$table" || fail "reference table differs from the expected one (above)"
# row POINT REFERENCE THIS RATIO VERDICT, stated by hand from make-reference-runs.py's factors.
row() {
  grep -qxF "$1,$2,$3,$4,$5" "$table" || fail "expected row '$1,$2,$3,$4,$5' in $table: $(grep -F "$1," "$table" || echo none)"
}
row "barrier.mpi.n2.native: barrier/nodes:2" 566.3 849.4 1.500 slower
row "barrier.mpi.n3.native: barrier/nodes:3" 3.48 1.74 0.500 faster
row "echo.mpi.n2.native: echo/size:16384" 3.42 3.59 1.050 same
row "barrier.armci.n2.native: barrier/nodes:2" 16561 — — "missing in new"
row "barrier.pvm-direct-raw.n2.native: barrier/nodes:2" — 3038 — "missing in old"
summary="7 points: 1 faster, 1 slower, 3 same within tolerance, 1 missing in old, 1 missing in new"
grep -qF "Every point against the reference campaign ../reference-old (tolerance 10 %): $summary" "$work/a/index.md" ||
  fail "index.md lacks the reference summary"
grep -qF "(tables/reference-campaign.md)" "$work/a/index.md" || fail "index.md does not link the reference table"
# The gate: copbench compare on the same two directories exits 3 and counts the same.
set +e
"$copbench" compare "$data/reference-old" "$data/reference-new" --tolerance 10% >"$work/compare.out" 2>&1
rc=$?
set -e
[ "$rc" = 3 ] || fail "copbench compare exited $rc, expected 3 (a point got slower)"
grep -qxF "$summary" "$work/compare.out" || fail "copbench compare counts differently from the report: $(tail -1 "$work/compare.out")"

# 2. No reference in the manifest: the campaign file's copy names it, relative to where
#    the campaign file was (the manifest's `file`), with 60 %: 1.5x and 0.5x are the same.
mkdir -p "$work/b-run" "$work/elsewhere"
cp -r "$data/reference-new/raw" "$work/b-run/"
cp -r "$data/reference-old" "$work/reference-old"
python3 "$(dirname "$0")/../lib/checks.py" strip-reference "$data/reference-new/manifest.json" "$work/b-run/manifest.json" "$work/elsewhere/judged.yml"
printf 'name: reference-new\nreference: ../reference-old\ntolerance: 60%%\nruns: []\n' >"$work/b-run/campaign.yml"
"$copbench" report "$work/b-run" --no-plots >"$work/b.out" 2>&1 || fail "report (campaign file copy) failed: $(cat "$work/b.out")"
grep -qF "Every point against the reference campaign ../reference-old (tolerance 60 %): 7 points: 0 faster, 0 slower, 5 same within tolerance" \
  "$work/b-run/index.md" || fail "the campaign file's reference: and tolerance: were not used: $(grep -A2 'Against' "$work/b-run/index.md")"

# 3. The reference directory is gone: a warning, no table, exit 0.
rm -rf "$work/reference-old"
"$copbench" report "$work/b-run" --no-plots >"$work/c.out" 2>"$work/c.err" || fail "report exited non-zero without its reference"
grep -q "warning: reference campaign ../reference-old: .*no such directory: no comparison table" "$work/c.err" ||
  fail "no warning about the missing reference: $(cat "$work/c.err")"
[ ! -e "$work/b-run/tables/reference-campaign.csv" ] || fail "the previous report's reference table was left (stale)"
grep -q "no comparison table" "$work/b-run/index.md" || fail "index.md does not say the comparison is missing"

# 4. A campaign without reference: no such section.
"$copbench" report "$data/reference-old" --out "$work/d" --no-plots >/dev/null 2>&1 || fail "report of reference-old failed"
if grep -q "Against the reference campaign" "$work/d/index.md"; then fail "a reference section without reference:"; fi
[ ! -e "$work/d/tables/reference-campaign.csv" ] || fail "a reference table without reference:"
echo "ok: reference table verdicts, index summary, compare gate, campaign-file fallback, missing reference"
