#!/usr/bin/env bash
# expect_error.sh REGEX COMMAND...: passes when COMMAND exits non-zero and its stderr is
# one line matching REGEX.
set -u
regex=$1
shift
err=$("$@" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 0 ]; then echo "expected a failure, got exit 0"; exit 1; fi
lines=$(printf '%s\n' "$err" | grep -c .)
if [ "$lines" -ne 1 ]; then echo "expected one line on stderr, got $lines:"; echo "$err"; exit 1; fi
if ! printf '%s\n' "$err" | grep -qE -- "$regex"; then echo "stderr does not match '$regex': $err"; exit 1; fi
echo "ok (exit $rc): $err"
