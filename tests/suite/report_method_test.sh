#!/usr/bin/env bash
# report_method_test.sh COPBENCH CAMPAIGN_DIR LOOP_RAW_FILE: the fixed campaign directory
# with one raw file replaced by a copy that also holds the loop-method twin of its barrier
# point (median 123.456 us; the sync point's is 566.26 us). The default report shows the
# sync point and says so; --collective-method loop shows the loop point under the plain
# name and says so.
set -u
copbench=$1 campaign=$2 loop_raw=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cp -r "$campaign" "$work/c"
cp "$loop_raw" "$work/c/raw/$(basename "$loop_raw")"
"$copbench" report "$work/c" --out "$work/sync" --no-plots --quiet >/dev/null || fail "report (sync) failed"
"$copbench" report "$work/c" --out "$work/loop" --no-plots --quiet --collective-method loop >/dev/null || fail "report (loop) failed"
grep -q "| collectives | sync method" "$work/sync/index.md" || fail "sync report does not say its method"
grep -q "| collectives | loop method" "$work/loop/index.md" || fail "loop report does not say its method"
grep -rq "566" "$work/sync/tables" || fail "sync report lacks the sync point's 566 us"
grep -rq "123\.[0-9]" "$work/sync/tables" && fail "sync report shows the loop point"
grep -rq "123\.[0-9]" "$work/loop/tables" || fail "loop report lacks the loop point's 123.456 us"
grep -rq "566" "$work/loop/tables" && fail "loop report still shows the sync point it replaced"
grep -rq "method:loop" "$work/loop/tables" && fail "loop report names a point with method:loop (not paired with the seeds)"
"$copbench" report "$work/c" --out "$work/bad" --collective-method fastest >/dev/null 2>&1 && fail "an unknown method was accepted"
echo "ok: the report shows the collective method it was asked for and says which"
