#!/usr/bin/env bash
# expect_output.sh CODE REGEX COMMAND...: passes when COMMAND exits with exactly CODE and
# its output (stdout and stderr together) matches REGEX (grep -E, over the whole output:
# `.` also matches a newline). Use it instead of CTest's PASS_REGULAR_EXPRESSION, which
# makes CTest ignore the exit code (tests/lib/no_pass_regex_test.sh refuses it).
# expect_output.sh error REGEX COMMAND...: passes when COMMAND fails (any non-zero exit)
# and its stderr alone is one line matching REGEX: a clear error (stdout is not read).
# expect_output.sh --absent PATH CODE|error REGEX COMMAND...: as above, and PATH (removed
# first) must not exist after COMMAND: a refused run writes nothing.
# The one expect helper of the tests (issue 37); CMake calls it as ${EXPECT_OUTPUT}.
set -u
absent=""
if [ "${1:-}" = --absent ]; then
  [ $# -ge 2 ] || { echo "usage: expect_output.sh --absent PATH CODE|error REGEX COMMAND..." >&2; exit 2; }
  absent=$2
  shift 2
  rm -rf -- "$absent"
fi
[ $# -ge 3 ] || { echo "usage: expect_output.sh [--absent PATH] CODE|error REGEX COMMAND..." >&2; exit 2; }
want=$1 regex=$2
shift 2
# What a passing check says last; fails instead when the --absent path was written.
passed() {
  if [ -n "$absent" ] && [ -e "$absent" ]; then echo "$absent was written: a refused run must write nothing"; exit 1; fi
  echo "$1"
  exit 0
}
if [ "$want" = error ]; then
  err=$("$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -eq 0 ]; then echo "expected a failure, got exit 0"; exit 1; fi
  lines=$(printf '%s\n' "$err" | grep -c .)
  if [ "$lines" -ne 1 ]; then echo "expected one line on stderr, got $lines:"; echo "$err"; exit 1; fi
  if ! printf '%s\n' "$err" | grep -qE -- "$regex"; then echo "stderr does not match '$regex': $err"; exit 1; fi
  passed "ok (exit $rc): $err"
fi
[[ $want =~ ^[0-9]+$ ]] || { echo "expect_output.sh: CODE '$want' is neither a number nor 'error'" >&2; exit 2; }
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -ne "$want" ]; then echo "expected exit $want, got $rc:"; echo "$out"; exit 1; fi
if ! printf '%s\n' "$out" | grep -zqE -- "$regex"; then echo "output does not match '$regex':"; echo "$out"; exit 1; fi
passed "ok (exit $rc)"
