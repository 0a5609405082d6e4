#!/usr/bin/env bash
# cop_difftest draws only programs that are well-formed for the COP's operation identity
# (cop/include/cop/cop.h "Operation identity"): every task counts its own calls on a
# (group, tag) word (a multicast's "group": its recipients) and a sender outside the group
# counts only its sends, so an outside sender must have sent every round the receivers made
# on that word before (else it names an earlier round: on two levels mask_in_use and the
# receivers' timeouts, difftest seed 21 step 73). Checked here from the printed programs,
# without a stack, over many seeds of the classes whose groups never change (a join, a
# leave or a kill starts a new view's counts).
#   well_formed_test.sh COP_DIFFTEST
set -euo pipefail
exe=$1
features=barrier,reduce,gather,faa,bcast,mcast
bad=0
for seed in $(seq 1 300); do
  "$exe" --print --seed "$seed" --features "$features" --steps 120 | awk -v seed="$seed" '
    $1 == "group" { sub(":", "", $2); for (i = 3; i <= NF; i++) member[$2, $i] = 1; next }
    $1 == "step" {
      line = $0; sub(/^ *step [0-9]+: (\(pvm_barrier\) )?/, "", line); n = split(line, w, " ")
      if (w[1] != "bcast" && w[1] != "mcast") next
      for (i = 1; i <= n; i++) { if (w[i] == "tag") tag = w[i + 1]; if (w[i] == "sender") sender = w[i + 1] }
      if (w[1] == "bcast") { site = w[3] " " tag; outside = !((w[3], sender) in member) }
      else { site = "mcast " tag; for (i = 1; i <= n && w[i] != "to"; i++); for (i++; i <= n && w[i] != "srctid"; i++) site = site " " w[i]; outside = 1 }
      if (outside && sent[sender, site] + 0 != rounds[site] + 0) {
        printf "seed %d step %s sender %d outside (%s) has sent %d of its %d rounds\n", seed, substr($2, 1, length($2) - 1), sender, site, sent[sender, site], rounds[site]
        bad = 1
      }
      if (outside) sent[sender, site]++
      rounds[site]++
    }
    END { exit bad }' || bad=1
done
[ "$bad" = 0 ] || { echo "well-formed: programs with an outside sender out of step (above)"; exit 1; }
echo "well-formed: ok (seeds 1-300, $features)"
