# Sourced by the campaign tests that stop a runner from outside (cleanup_test.sh,
# resume_test.sh): waiting for a condition, and a run's processes by its tag.

fail() { echo "FAIL: $*"; exit 1; }

# wait_for WHAT COMMAND...: polls COMMAND every 50 ms, at most 120 s (a condition, never a fixed sleep).
wait_for() {
  local what=$1 deadline=$((SECONDS + 120))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $what"
    sleep 0.05
  done
}

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

# The run token of a runner.json.
token_of() { /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["token"])' "$1"; }
