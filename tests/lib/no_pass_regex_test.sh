#!/usr/bin/env bash
# no_pass_regex_test.sh DIR...: fails, one line per use, when a CMake file under DIR sets
# PASS_REGULAR_EXPRESSION outside a comment: CTest then ignores the test's exit code, so a
# run that fails but prints the text passes. tests/lib/expect_output.sh CODE REGEX
# COMMAND... checks both.
set -u
[ $# -ge 1 ] || { echo "usage: no_pass_regex_test.sh DIR..." >&2; exit 2; }
found=0
for dir in "$@"; do
  [ -d "$dir" ] || { echo "no_pass_regex_test.sh: no directory $dir" >&2; exit 2; }
  while IFS= read -r hit; do
    echo "$hit: PASS_REGULAR_EXPRESSION makes CTest ignore the exit code; use tests/lib/expect_output.sh CODE REGEX COMMAND..." >&2
    found=1
  done < <(find "$dir" \( -name 'build*' -o -name .git \) -prune -o \( -name CMakeLists.txt -o -name '*.cmake' \) -type f -print0 |
             xargs -0 -r grep -nH 'PASS_REGULAR_EXPRESSION' | grep -v '^[^:]*:[0-9]*: *#' | cut -d: -f1,2)
done
[ "$found" = 0 ] && echo "no PASS_REGULAR_EXPRESSION in $*"
exit "$found"
