#!/usr/bin/env bash
# expect_output.sh CODE REGEX COMMAND...: passes when COMMAND exits with exactly CODE and
# its output (stdout and stderr together) matches REGEX (grep -E, over the whole output:
# `.` also matches a newline). Use it instead of CTest's PASS_REGULAR_EXPRESSION, which
# makes CTest ignore the exit code (tests/lib/no_pass_regex_test.sh refuses it).
set -u
[ $# -ge 3 ] || { echo "usage: expect_output.sh CODE REGEX COMMAND..." >&2; exit 2; }
want=$1 regex=$2
shift 2
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -ne "$want" ]; then echo "expected exit $want, got $rc:"; echo "$out"; exit 1; fi
if ! printf '%s\n' "$out" | grep -zqE -- "$regex"; then echo "output does not match '$regex':"; echo "$out"; exit 1; fi
echo "ok (exit $rc)"
