#!/usr/bin/env bash
# methods_test.sh COPBENCH: `copbench run --methods` picks the timing methods of a
# collective point (copbench/timing.h parse_methods; issue 35). On sim-cop (simulated, a
# second a run) the 8 B broadcast at 4 nodes:
#   - --methods window: only the window point (plain name, label method=window), and the
#     context says methods=window;
#   - --methods loop,sync: the sync and the loop points only, in that order (window, sync,
#     loop whatever the order given);
#   - no --methods: all three, and the context names none (a result as before);
#   - a bad list (unknown, twice, empty) is refused with its reason and a non-zero exit.
set -u
copbench=$1
out=$(mktemp -d /tmp/copbench-methods.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {  # FILE [--methods LIST]
  local file=$1
  shift
  "$copbench" run broadcast --backend sim-cop --platform present --nodes 4 --sizes 8 "$@" --out "$out/$file" \
    >/dev/null || fail "copbench run $* did not run"
}
check() {  # FILE EXPECTED_CONTEXT_METHODS EXPECTED_POINTS...
  python3 "$(dirname "$0")/../lib/checks.py" methods-points "$@" || exit 1
}
run window.json --methods window
check "$out/window.json" window "broadcast/size:8|method=window"
run sync-loop.json --methods loop,sync
check "$out/sync-loop.json" sync,loop "broadcast/method:sync/size:8|method=sync" "broadcast/method:loop/size:8|method=loop"
run all.json
check "$out/all.json" "" "broadcast/size:8|method=window" "broadcast/method:sync/size:8|method=sync" \
  "broadcast/method:loop/size:8|method=loop"
refused() {  # LIST MESSAGE
  local text rc
  text=$("$copbench" run broadcast --backend sim-cop --platform present --nodes 4 --sizes 8 --methods "$1" 2>&1)
  rc=$?
  [ "$rc" -ne 0 ] || fail "--methods '$1' was not refused"
  grep -qF -- "$2" <<<"$text" || fail "--methods '$1': expected '$2', got: $text"
}
refused fast "--methods 'fast': unknown method 'fast' (known: window, sync, loop)"
refused window,window "method 'window' named twice"
refused "" "no method named (known: window, sync, loop)"
echo "ok: --methods picks the points; bad lists refused"
