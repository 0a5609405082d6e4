#!/usr/bin/env bash
# scale_file_test.sh COPBENCH SOURCE DATA: suite/campaigns/scale.yml (the thesis's node
# range) is valid on a 64-node cluster and holds every benchmark on every backend at
# 2, 4, 8, 16, 32 and 64 nodes (72 points), cop beside its transport's floor (the
# emulation benchmark) at 2 to 16 (4 points), and cop at two levels (two level-1
# controllers of K = nodes/2 channels) at 4, 8, 16 and 64 (12 points, ids .kK); an
# 8-node cluster refuses its 16 nodes, naming the line.
set -uo pipefail
copbench=$1 src=$2 data=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
file=$src/suite/campaigns/scale.yml

out=$(COPBENCH_HOSTFILE=$data/inventory-64.yml "$copbench" campaign check "$file" --cluster "$data/inventory-64.yml") ||
  fail "campaign check on 64 nodes failed: $out"
for n in 2 4 8 16 32 64; do
  for b in barrier reduce broadcast; do
    for m in cop-direct mpi pvm-direct-raw armci; do
      grep -qx "$b.$m.n$n.native" <<<"$out" || fail "missing point $b.$m.n$n.native"
    done
  done
done
for n in 4 8 16 64; do
  for b in barrier reduce broadcast; do
    grep -qx "$b.cop-direct.n$n.native.k$((n / 2))" <<<"$out" || fail "missing two-level point $b.cop-direct.n$n.native.k$((n / 2))"
  done
done
for n in 2 4 8 16; do
  grep -qx "emulation.cop-direct.n$n.native" <<<"$out" || fail "missing point emulation.cop-direct.n$n.native"
done
grep -q '^campaign scale: 88 points' <<<"$out" || fail "not 88 points: $(tail -1 <<<"$out")"

err=$(COPBENCH_HOSTFILE=$data/inventory-8.yml "$copbench" campaign check "$file" --cluster "$data/inventory-8.yml" 2>&1) &&
  fail "an 8-node cluster did not refuse scale.yml"
grep -q 'scale.yml:[0-9]*: 16 nodes is more than the cluster offers' <<<"$err" || fail "unexpected refusal: $err"
echo "scale.yml: 84 points on 64 nodes (12 of cop at two levels), refused on 8"
