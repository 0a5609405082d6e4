#!/usr/bin/env bash
# Readiness said by the daemons themselves and the one start/stop (issue 27):
#  - copd --listen 127.0.0.1:0 --ready-file: the file names copd's PID, its /proc start
#    time and the port it really bound (a copdrv registers on that port); --ready-fd
#    gives the same text on a descriptor;
#  - copdrv --ready-file appears only once copd has registered its channel (copd logged
#    the registration before the file exists) and names the socket, which is listening;
#  - a level-1 copd under a level 2 is ready only once the level 2 registered it;
#  - a copdrv that cannot register exits non-zero and writes no ready file;
#  - copbench-daemon (lib/daemons.sh): start waits for readiness, refuses a second start
#    (exit 1), reports a daemon that dies at start (exit 2, its last log line), stops by
#    PID and start time, and never signals a PID whose start time is not the recorded one;
#  - a COP stack whose copdrv dies at start names it and leaves no daemon running.
#   daemons_test.sh BUILD_BIN_DIR
set -euo pipefail
bin=$1
work=$(mktemp -d /tmp/cop-daemons-test.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for n in d1 d2; do "$bin/copbench-daemon" stop "$work/state" "$n" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$work"/*.log; do [ -e "$f" ] && { echo "--- $f"; tail -n 5 "$f"; } >&2; done; exit 1; }
# until_true SECONDS CMD...: polls CMD until it succeeds; false after SECONDS.
until_true() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.02
  done
}
field() { sed -n "s/^$2=//p" "$1"; }
start_time() { local s; s=$(cat "/proc/$1/stat") && s=${s##*) } && set -- $s && echo "${20}"; }
(umask 077 && head -c 32 /dev/urandom >"$work/key")

# copd on port 0 says the port it bound.
"$bin/copd" --listen 127.0.0.1:0 --channels 2 --key "$work/key" --ready-file "$work/copd.ready" 2>"$work/copd.log" &
copd=$!
pids+=("$copd")
until_true 10 test -s "$work/copd.ready" || fail "copd wrote no ready file in 10 s"
port=$(field "$work/copd.ready" port)
[ "$(field "$work/copd.ready" pid)" = "$copd" ] || fail "copd's ready file names pid $(field "$work/copd.ready" pid), not $copd"
[ "$(field "$work/copd.ready" start_time)" = "$(start_time "$copd")" ] || fail "copd's ready file has another start time"
[[ $port =~ ^[0-9]+$ ]] && [ "$port" -gt 0 ] || fail "copd's ready file has no bound port: '$port'"
[ "$(field "$work/copd.ready" address)" = "127.0.0.1:$port" ] || fail "address is not 127.0.0.1:$port"
[ ! -e "$work/copd.ready.tmp" ] || fail "copd left its temporary ready file"

# --ready-fd: the same text on an inherited descriptor.
"$bin/copd" --listen 127.0.0.1:0 --channels 1 --key "$work/key" --ready-fd 3 3>"$work/fd.ready" 2>"$work/copd-fd.log" &
pids+=($!)
until_true 10 test -s "$work/fd.ready" || fail "copd --ready-fd wrote nothing in 10 s"
[ "$(field "$work/fd.ready" pid)" = "$!" ] && [ "$(field "$work/fd.ready" port)" -gt 0 ] ||
  fail "copd --ready-fd: $(cat "$work/fd.ready")"

# copdrv on that port: ready only after copd registered it.
"$bin/copdrv" --channel 1 --controller "127.0.0.1:$port" --local 127.0.0.1 --dir "$work/n1" --key "$work/key" \
  --ready-file "$work/n1.ready" 2>"$work/n1.log" &
pids+=($!)
until_true 10 test -s "$work/n1.ready" || fail "copdrv wrote no ready file in 10 s"
grep -q "channel 1 registered by" "$work/copd.log" || fail "copdrv was ready before copd registered channel 1"
[ "$(field "$work/n1.ready" socket)" = "$work/n1/copdrv.sock" ] && [ -S "$work/n1/copdrv.sock" ] ||
  fail "copdrv's ready file names no listening socket"
[ "$(field "$work/n1.ready" controller)" = "127.0.0.1:$port" ] || fail "copdrv's ready file names another controller"

# A copdrv whose copd does not answer: exits non-zero, no ready file.
kill "$copd"
wait "$copd" 2>/dev/null || true
rc=0
"$bin/copdrv" --channel 2 --controller "127.0.0.1:$port" --local 127.0.0.1 --dir "$work/n2" --key "$work/key" \
  --register-timeout-ms 300 --ready-file "$work/n2.ready" 2>"$work/n2.log" || rc=$?
[ "$rc" -ne 0 ] || fail "copdrv without a copd exited 0"
[ ! -e "$work/n2.ready" ] || fail "copdrv without a copd wrote a ready file"

# A level-1 copd is ready once its level 2 has registered it.
"$bin/copd" --listen 127.0.0.1:0 --level 2 --channels 2 --key "$work/key" --ready-file "$work/l2.ready" 2>"$work/l2.log" &
pids+=($!)
until_true 10 test -s "$work/l2.ready" || fail "the level-2 copd wrote no ready file"
"$bin/copd" --listen 127.0.0.1:0 --channels 2 --cntno 1 --parent "127.0.0.1:$(field "$work/l2.ready" port)" \
  --key "$work/key" --ready-file "$work/l1.ready" 2>"$work/l1.log" &
pids+=($!)
until_true 10 test -s "$work/l1.ready" || fail "the level-1 copd wrote no ready file"
grep -q "channel 2 registered by" "$work/l2.log" || fail "the level-1 copd was ready before its level 2 registered it"

# copbench-daemon: one start, readiness, refusal, identity, stop.
st=$work/state
COPD=$bin/copd "$bin/copbench-daemon" start "$st" d1 copd -- --listen 127.0.0.1:0 --key "$work/key" ||
  fail "copbench-daemon start copd failed"
read -r dpid dstart <"$st/d1.pid"
[ "$dstart" = "$(start_time "$dpid")" ] || fail "d1.pid does not hold the daemon's PID and start time"
[ "$("$bin/copbench-daemon" field "$st" d1 port)" -gt 0 ] || fail "no port in d1's ready file"
rc=0; "$bin/copbench-daemon" start "$st" d1 copd -- --listen 127.0.0.1:0 --key "$work/key" || rc=$?
[ "$rc" = 1 ] || fail "a second start of a running daemon exited $rc, not 1"
rc=0; out=$("$bin/copbench-daemon" start "$st" d2 copd -- --listen 127.0.0.1:0 --key "$work/no-such-key" 2>&1) || rc=$?
[ "$rc" = 2 ] && [[ $out == *"d2 exited during start"*"--key"* ]] || fail "a copd that dies at start: exit $rc, '$out'"
# A PID file whose start time is not the process's: that process is not the daemon.
sleep 300 &
other=$!
pids+=("$other")
echo "$other $(( $(start_time "$other") + 1 ))" >"$st/d2.pid"
rc=0; "$bin/copbench-daemon" stop "$st" d2 || rc=$?
[ "$rc" = 1 ] && kill -0 "$other" || fail "copbench-daemon stop signalled a PID with another start time"
"$bin/copbench-daemon" stop "$st" d1 || fail "copbench-daemon stop d1 did not find it running"
until_true 5 bash -c "! kill -0 $dpid 2>/dev/null" || fail "d1 still runs after stop"
[ ! -e "$st/d1.pid" ] || fail "stop left d1.pid"
# The stack launches every copdrv at once and awaits each: one that dies at start is
# named, and every daemon of the stack is stopped (none left running).
cat >"$work/stand-in" <<STANDIN
#!/bin/sh
[ "\$2" = 2 ] && { echo "stand-in copdrv: channel 2 refused" >&2; exit 3; }
exec "$bin/copdrv" "\$@"
STANDIN
chmod +x "$work/stand-in"
rc=0; out=$(COPDRV=$work/stand-in "$bin/copbench-cop-stack" start --nodes 4 --dir "$work/stack" 2>&1) || rc=$?
[ "$rc" -ne 0 ] && [[ $out == *"copdrv of node2: node2 exited during start: stand-in copdrv: channel 2 refused"* ]] ||
  fail "a stack whose node2 dies at start: exit $rc, '$out'"
left=$(grep -l -- "$work/stack" /proc/[0-9]*/cmdline 2>/dev/null || true)
[ -z "$left" ] || fail "the failed stack left processes: $left"
echo "daemons: ready files and copbench-daemon ok"
