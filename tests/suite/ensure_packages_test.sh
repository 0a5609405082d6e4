#!/usr/bin/env bash
# ensure_packages_test.sh SRC: scripts/lib/common.sh's ensure_packages (what scripts/bench
# and scripts/test run first) as a user without root (issue 28): with every package of
# scripts/lib/packages.txt installed it says 'not root' and exits 0 without apt-get; with
# a package missing (a fake one added to the list) it exits non-zero naming that package
# and the apt-get command. As root the test drops to uid/gid 65534 (nobody) with setpriv;
# apt-get never runs (a user without root cannot, and the missing case fails first).
set -u
src=$1
fail() { echo "FAIL: $*"; exit 1; }
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  command -v setpriv >/dev/null || { echo "setpriv not found"; exit 77; }
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
# The function as scripts/bench calls it, with the list as its argument ("" = the default).
run() { "${as_user[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c 'source "$1/scripts/lib/common.sh"; ensure_packages ${2:+"$2"}' _ "$src" "${1:-}"; }

out=$(run 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "every package installed: exit $rc, expected 0: $out"
grep -q 'not root: installing nothing' <<<"$out" || fail "no 'not root' message: $out"
grep -q 'apt-get' <<<"$out" && fail "mentions apt-get with nothing missing: $out"
echo "ok: $out"

fake=copbench-no-such-package-28
{ cat "$src/scripts/lib/packages.txt"; echo "$fake"; } >"$tmp/packages.txt"
chmod 644 "$tmp/packages.txt"
out=$(run "$tmp/packages.txt" 2>&1); rc=$?
[ "$rc" -ne 0 ] || fail "a package missing: exit 0, expected non-zero: $out"
grep -q 'not root' <<<"$out" || fail "no 'not root' in: $out"
grep -qE "missing: $fake;" <<<"$out" || fail "the missing package is not named (alone) in: $out"
grep -qE "apt-get install -y --no-install-recommends $fake\$" <<<"$out" || fail "no apt-get command for $fake in: $out"
echo "ok (exit $rc): $out"
