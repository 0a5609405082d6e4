# Sourced by the campaign tests that stop a runner from outside (cleanup_test.sh,
# resume_test.sh): failing, waiting for a condition (tests/lib/wait.sh), and a run's
# processes by its tag.

fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "${BASH_SOURCE[0]}")/../lib/wait.sh"  # wait_until TIMEOUT_S COMMAND...

# Live (not zombie) processes carrying one of the given run tokens (COPBENCH_CAMPAIGN_RUN):
# "pid comm" lines.
tagged() {
  local t e p
  for t in "$@"; do
    for e in $(grep -lzxF "COPBENCH_CAMPAIGN_RUN=$t" /proc/[0-9]*/environ 2>/dev/null); do
      p=${e#/proc/}; p=${p%/environ}
      [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f1)" = Z ] || echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
    done
  done
}

# checks ARGS...: tests/lib/checks.py (the shell tests' checks of result and JSON files).
checks() { /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/../lib/checks.py" "$@"; }
# The run token of a runner.json.
token_of() { checks field "$1" token; }
