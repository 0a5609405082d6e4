#!/usr/bin/env bash
# The one description of a COP stack (issue 37): `copbench-daemon plan` (cop/stack/plan.h).
# For 1 node, 4 nodes of K=64, 5 nodes of K=2 (a level 2 above three level-1 copd) and
# 4096 nodes of K=64 (64 level-1 copd, the most two levels hold), every line is checked
# against the layout computed here (seed 000 ch. IV, Figure 5): ceil(N/K) level-1 copd
# with CNTNO 0.. and K channels each (one copd: N channels), a level 2 of ceil(N/K)
# channels exactly when that is more than one, node k on channel (k-1)%K+1 of the copd
# of CNTNO (k-1)/K; then bad requests are refused with exit 2 and one line on stderr.
#   plan_test.sh BUILD_BIN_DIR
set -euo pipefail
bin=$1
daemon=$bin/copbench-daemon
fail() { echo "FAIL: $*" >&2; exit 1; }

hosts_of() { local n=$1 k; for ((k = 1; k <= n; k++)); do printf 'h%d%s' "$k" "$([ "$k" -lt "$n" ] && echo ,)"; done; }

# check N K [PLAN ARG...]: the plan of nodes 1..N, K per controller, against the layout.
check() {
  local n=$1 k=$2 out
  shift 2
  out=$("$daemon" plan --hosts "$(hosts_of "$n")" --per-controller "$k" "$@") || fail "plan of $n nodes, K=$k: exit $?"
  awk -F'\t' -v n="$n" -v k="$k" 'BEGIN { l1 = 0; l2 = 0; d = 0 }
    function bad(m) { print "FAIL: " n " nodes, K=" k ": " m > "/dev/stderr"; failed = 1; exit 1 }
    # the value after option o among the arguments (fields 9..NF)
    function opt(o,   i) { for (i = 9; i < NF; i++) if ($i == o) return $(i + 1); return "" }
    {
      if (NF < 9) bad("short line: " $0)
      if ($5 == "level2") { l2++; l2name = $1; l2ch = opt("--channels"); if (opt("--level") != 2) bad("level 2 without --level 2") }
      else if ($5 == "level1") {
        if ($6 != l1) bad("level-1 copd " l1 " has CNTNO " $6)
        name[l1] = $1; ch[l1] = opt("--channels"); par[l1] = opt("--parent"); cnt[l1] = opt("--cntno"); l1++
        if ($4 != "copd") bad($1 " is not a copd")
      } else if ($5 == "driver") {
        d++
        node = $8; want_c = int((node - 1) / k); want_ch = (node - 1) % k + 1
        if (node != d) bad("driver " d " is node " node)
        if ($1 != "node" node || $2 != "h" node || $3 != "h" node || $4 != "copdrv") bad("node " node ": " $1 " on " $2 ", " $4)
        if ($6 != want_c || $7 != want_ch) bad("node " node " at CNTNO " $6 " channel " $7 ", not " want_c " / " want_ch)
        if (opt("--channel") != want_ch) bad("node " node ": --channel " opt("--channel"))
        if (opt("--controller") != "@" name[want_c]) bad("node " node ": --controller " opt("--controller") ", not @" name[want_c])
      } else bad("role " $5)
    }
    END {
      if (failed) exit 1
      ctls = int((n + k - 1) / k)
      if (l1 != ctls) bad(l1 " level-1 copd, not " ctls)
      if (d != n) bad(d " copdrv, not " n)
      if (l2 != (ctls > 1)) bad(l2 " level-2 copd for " ctls " level-1")
      if (l2 && l2ch != ctls) bad("level 2 of " l2ch " channels, not " ctls)
      for (c = 0; c < ctls; c++) {
        if (ch[c] != (ctls > 1 ? k : n)) bad("copd " c " has " ch[c] " channels")
        if (ctls > 1 && (par[c] != "@" l2name || cnt[c] != c)) bad("copd " c ": --parent " par[c] " --cntno " cnt[c])
        if (ctls == 1 && (par[c] != "" || cnt[c] != "")) bad("a lone copd with --parent or --cntno")
      }
      print "ok: " n " nodes, K=" k ": " l2 " level 2, " l1 " level 1, " d " copdrv"
    }' <<<"$out" || fail "the plan of $n nodes, K=$k (above)"
}

check 1 64
check 4 64
check 5 2
check 4096 64
# One copd's names and addresses: copd on the given port, copdrv naming it.
out=$("$daemon" plan --hosts a,b --controllers ctl=10.0.0.1 --port 7040 --names hosts)
[ "$out" = "$(printf 'copd\tctl\t10.0.0.1\tcopd\tlevel1\t0\t0\t0\t--listen\t10.0.0.1:7040\t--channels\t2
copdrv\ta\ta\tcopdrv\tdriver\t0\t1\t1\t--channel\t1\t--controller\t10.0.0.1:7040
copdrv\tb\tb\tcopdrv\tdriver\t0\t2\t2\t--channel\t2\t--controller\t10.0.0.1:7040')" ] || fail "one copd on 7040: $out"
# A level-1 copd per host (Ansible): each on the port, the level 2 on its own.
out=$("$daemon" plan --hosts n1,n2,n3 --per-controller 2 --controllers c=1.0.0.1,c1=1.0.0.2 --port 7040 \
  --level2-port 7041 --names hosts)
grep -qP '^copd-l2\tc\t1.0.0.1\tcopd\tlevel2\t.*--listen\t1.0.0.1:7041\t' <<<"$out" || fail "level 2 on c:7041: $out"
grep -qP '^copd\tc1\t1.0.0.2\tcopd\tlevel1\t1\t2\t0\t--listen\t1.0.0.2:7040\t.*--parent\t1.0.0.1:7041$' <<<"$out" ||
  fail "copd of CNTNO 1 on c1: $out"
grep -qP '^copdrv\tn3\tn3\tcopdrv\tdriver\t1\t1\t3\t--channel\t1\t--controller\t1.0.0.2:7040$' <<<"$out" || fail "n3: $out"
# Only some nodes (scripts/cop-stack start 2 5): channels as many as the highest node.
out=$("$daemon" plan --hosts a,a,a,a,a --nodes 2,5)
[ "$(cut -f1,6,7,8 <<<"$out" | tr '\t\n' ' :')" = "copd 0 0 0:node2 0 2 2:node5 0 5 5:" ] || fail "--nodes 2,5: $out"
grep -qP '^copd\t.*--channels\t5$' <<<"$out" || fail "--nodes 2,5: copd not of 5 channels: $out"
echo "ok: names, ports, subsets"
# The same plan as JSON (for Ansible and other readers).
work=$(mktemp -d /tmp/cop-plan-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
args=(--hosts "n1,n2,n3,n4,n5" --per-controller 2 --controllers "c=1.0.0.1,c1=1.0.0.2,c2=1.0.0.3" --port 7040 --names hosts)
"$daemon" plan "${args[@]}" >"$work/plan.tsv"
"$daemon" plan "${args[@]}" --json >"$work/plan.json"
python3 "$(dirname "$0")/../lib/checks.py" plan-json "$work/plan.json" "$work/plan.tsv" || fail "--json differs from the lines"
echo "ok: --json"

# refused REASON ARG...: the plan exits 2 with one line naming the fault.
refused() {
  local want=$1 err rc=0
  shift
  err=$("$daemon" plan "$@" 2>&1 >/dev/null) || rc=$?
  [ "$rc" = 2 ] || fail "plan $*: exit $rc, not 2"
  grep -q -- "$want" <<<"$err" || fail "plan $*: '$err' does not say '$want'"
  local what="$*"
  echo "ok: refused ${what:0:80}: ${err%%$'\n'*}"
}
refused "hosts is required" --per-controller 2
refused "per-controller must be 1..64" --hosts a --per-controller 0
refused "per-controller must be 1..64" --hosts a --per-controller 65
refused "hosts must be 1..4096" --hosts "$(hosts_of 4097)"
refused "needs more than 64 level-1 controllers" --hosts "$(hosts_of 65)" --per-controller 1
refused "a node must be 1..2" --hosts a,b --nodes 3
refused "ascending" --hosts a,b,c --nodes 3,2
refused "channels is for one controller" --hosts a,b,c --per-controller 2 --channels 4
refused "too few for node3" --hosts a,b,c --channels 2
refused "2 controller hosts given for 3" --hosts a,b,c --per-controller 1 --controllers x,y
refused "two copd on 1.0.0.1:7040" --hosts a,b --per-controller 1 --controllers x=1.0.0.1 --port 7040 --level2-port 7040
refused "two daemons named copdrv on host a" --hosts a,a --names hosts
refused "not a host" --hosts a,=b
refused "not a host" --hosts "a b"
refused "names" --hosts a --names other
refused "port must be 0..65535" --hosts a --port 70000
echo "ok: every bad request refused"
