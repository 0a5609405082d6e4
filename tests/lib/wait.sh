# shellcheck shell=bash
# Sourced by the shell tests: their one wait (the C++ tests' is tests/cop/wait.h).
#
# wait_until TIMEOUT_S COMMAND...: runs COMMAND every WAIT_EVERY_S seconds (default 0.05)
# until it succeeds (returns 0), or until TIMEOUT_S whole seconds have passed: then says on
# stderr what it waited for and returns 1 (the caller fails the test, with its own words:
# `wait_until 30 test -s "$f" || fail "no $f after 30 s"`). A test waits for a condition,
# never for a time; the bound only turns a hang into a failure. COMMAND may be a shell
# function, so a condition of several steps is a function; `wait_until 5 eval '...'` too.
wait_until() {
  local timeout=$1
  shift
  local deadline=$((${EPOCHREALTIME/./} + timeout * 1000000))
  until "$@"; do
    if [ "${EPOCHREALTIME/./}" -ge "$deadline" ]; then
      echo "wait_until: gave up after $timeout s waiting for: $*" >&2
      return 1
    fi
    sleep "${WAIT_EVERY_S:-0.05}"
  done
}
