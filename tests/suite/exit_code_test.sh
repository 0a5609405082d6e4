#!/usr/bin/env bash
# exit_code_test.sh CODE REGEX COMMAND...: passes when COMMAND exits with exactly CODE and
# its standard output matches REGEX (grep -E).
set -u
want=$1 regex=$2
shift 2
out=$("$@" 2>&1)
rc=$?
if [ "$rc" -ne "$want" ]; then echo "expected exit $want, got $rc:"; echo "$out"; exit 1; fi
if ! printf '%s\n' "$out" | grep -qE -- "$regex"; then echo "output does not match '$regex':"; echo "$out"; exit 1; fi
echo "ok (exit $rc)"
