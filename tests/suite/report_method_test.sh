#!/usr/bin/env bash
# report_method_test.sh COPBENCH CAMPAIGN_DIR OLD_RAW_FILE WINDOW_RAW_FILE: the fixed
# campaign directory with one raw file replaced.
# 1. OLD_RAW_FILE, from before the window method: its barrier point under the plain name is
#    the sync method's (566.26 us), beside its loop-method twin (123.456 us). The default
#    (window) report shows the sync point and says it has no window twin; --collective-method
#    loop shows the loop point under the plain name and says so.
# 2. WINDOW_RAW_FILE: the same point by the window method (plain name, 50.5 us, 2 of 30
#    calls invalid), the sync method (method:sync/, 566.26 us) and the loop (123.456 us).
#    Each method's report shows its own figure and says which, the window's with its
#    invalid calls; the methods table sets the three side by side.
# 3. WINDOW_RAW_FILE without its window point (a run whose methods: were sync and loop):
#    the default (window) report shows the sync twin (566.26 us), not the loop one, and
#    says it has no window twin.
set -u
copbench=$1 campaign=$2 old_raw=$3 window_raw=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
report() {  # DIR OUT [METHOD]
  local dir=$1 out=$2; shift 2
  "$copbench" report "$dir" --out "$out" --no-plots --quiet "$@" >/dev/null || fail "report $out failed"
}
cp -r "$campaign" "$work/old"
cp "$old_raw" "$work/old/raw/$(basename "$old_raw")"
report "$work/old" "$work/old-window"
report "$work/old" "$work/old-loop" --collective-method loop
grep -q "| collectives | window method" "$work/old-window/index.md" || fail "default report does not say window"
grep -q "no window twin" "$work/old-window/index.md" || fail "default report does not say the old point is sync's"
grep -rq "566" "$work/old-window/tables" || fail "old result: the sync point's 566 us missing"
grep -rq "123\.[0-9]" "$work/old-window/tables" && fail "old result: the default report shows the loop point"
grep -q "| collectives | loop method" "$work/old-loop/index.md" || fail "loop report does not say its method"
grep -rq "123\.[0-9]" "$work/old-loop/tables" || fail "loop report lacks the loop point's 123.456 us"
grep -rq "566" "$work/old-loop/tables/summary.md" && fail "loop report still shows the sync point it replaced"
grep -rq "method:loop" "$work/old-loop/tables" && fail "loop report names a point with method:loop (not paired with the seeds)"

cp -r "$campaign" "$work/new"
cp "$window_raw" "$work/new/raw/$(basename "$window_raw")"
report "$work/new" "$work/window"
report "$work/new" "$work/sync" --collective-method sync
grep -q "| collectives | window method.* 2 of [0-9]* calls invalid" "$work/window/index.md" ||
  fail "window report does not say its method and invalid calls"
grep -q "50\.5" "$work/window/tables/summary.md" || fail "window report lacks the window point's 50.5 us"
grep -q "566" "$work/window/tables/summary.md" && fail "window report shows the sync point"
grep -q "| collectives | sync method" "$work/sync/index.md" || fail "sync report does not say its method"
grep -q "566" "$work/sync/tables/summary.md" || fail "sync report lacks the sync point's 566 us"
grep -q "50\.5" "$work/sync/tables/summary.md" && fail "sync report shows the window point"
[ -f "$work/window/tables/methods.md" ] || fail "no methods table"
grep -q "| mpi | barrier/nodes:2 | 2 | 50.50 | 566.3 | 123.5 | 11.2x | 2 / 30 |" "$work/window/tables/methods.md" ||
  fail "methods table lacks window, sync, loop side by side: $(grep barrier "$work/window/tables/methods.md")"
cp -r "$campaign" "$work/picked"
python3 "$(dirname "$0")/../lib/checks.py" drop-window-points "$window_raw" "$work/picked/raw/$(basename "$window_raw")" ||
  fail "cannot drop the window point"
report "$work/picked" "$work/picked-window"
grep -q "no window twin.* show the loop or sync method\|no window twin.* show the sync method" "$work/picked-window/index.md" ||
  fail "a point without its window twin is not said to show another method"
grep -q "566" "$work/picked-window/tables/summary.md" || fail "no window twin: the sync point's 566 us missing"
grep -q "123\.[0-9]" "$work/picked-window/tables/summary.md" && fail "no window twin: the loop point shown beside the sync one"
"$copbench" report "$work/new" --out "$work/bad" --collective-method fastest >/dev/null 2>&1 && fail "an unknown method was accepted"
echo "ok: the report shows the collective method it was asked for (window by default) and says which"
