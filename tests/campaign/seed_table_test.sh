#!/usr/bin/env bash
# seed_table_test.sh COPBENCH DATA REFERENCE WORK TABLE: the report of the fixed directory
# data/seed-tables (every point the seed tables read, made-up medians, decoys beside the
# right points) against the shipped seed table REFERENCE/TABLE.csv. Checks which points
# each row reads or divides, per backend and node count (tables/TABLE.pairing.csv), and
# the table, against data/seed-tables-expected; then the pairings this test states by hand
# below, so a reference row that reads or divides the wrong points fails here.
set -euo pipefail
copbench=$1 data=$2 reference=$3 work=$4 table=$5
fail() { echo "FAIL: $table: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$copbench" report "$data/seed-tables" --out "$work" --no-plots --reference "$reference" >"$work/out" 2>&1 ||
  fail "report failed: $(cat "$work/out")"
pairing=$work/tables/$table.pairing.csv
[ -s "$pairing" ] || fail "no pairing dump $pairing"
diff -u "$data/seed-tables-expected/$table.pairing.csv" "$pairing" || fail "pairing differs from the expected one (above)"
diff -u "$data/seed-tables-expected/$table.csv" "$work/tables/$table.csv" || fail "table differs from the expected one (above)"

# expect ROW-PREFIX BACKEND NODES POINT DIVIDED-BY VALUE: the row (first match of the
# prefix) read POINT (÷ DIVIDED-BY) of BACKEND at NODES and printed VALUE.
expect() {
  python3 "$(dirname "$0")/../lib/checks.py" pairing "$pairing" "$@" || fail "row '$1' on $2: expected $4 ÷ '$5' at $3 nodes = $6"
}

# verdict ROW-PREFIX COLUMN TEXT: the row's (first match) cell in the table's column COLUMN
# is TEXT; verdict_none: the table has no verdict column (no row carries a tolerance).
verdict() {
  python3 "$(dirname "$0")/../lib/checks.py" csv-cell "$work/tables/$table.csv" "$@" || fail "row '$1': expected '$3' in column '$2'"
}
verdict_none() {
  if head -1 "$work/tables/$table.csv" | grep -q "verdict"; then fail "a verdict column in a table whose rows carry no tolerance"; fi
}

case $table in
  armci-ratios)
    # Seed 004 3.2: one Fence per target ÷ the windowed AllFence at its best K (K = 2 is the
    # fixture's fastest, not the first or last window, and the plain AllFence is a decoy).
    expect "AllFence, 3.1.1 ÷ 3.1.2, 8 nodes" mpi 8 fence/puts+sequential-fences fence/puts+allfence-window:2 2.00
    expect "AllFence, 3.1.1 ÷ 3.1.2, 4 nodes" mpi 4 fence/puts+sequential-fences fence/puts+allfence-window:2 1.50
    expect "AllFence, 3.1.1 ÷ 3.1.2, 8 nodes" armci 8 fence/puts+sequential-fences "fence/puts+allfence-window:*" "not offered"
    # Seed 004 4.4: AllFence + MPI_Barrier ÷ the combined fence + barrier, not a barrier alone.
    expect "barrier, 4.1 ÷ 4.2, 8 nodes" armci 8 fence/puts+allfence+barrier fence/puts+fence-barrier 2.50
    expect "barrier, 4.1 ÷ 4.2, 8 nodes" mpi 8 fence/puts+allfence+barrier fence/puts+fence-barrier "not offered"
    # Seed 004 5.3: server queue lock ÷ software queuing (MCS) lock, same backend and node count.
    expect "lock, 5.1 ÷ 5.2.2" mpi 4 lock/server-queue/nodes:4 lock/mcs/nodes:4 0.69
    expect "lock, 5.1 ÷ 5.2.2" pvm/direct 4 lock/server-queue/nodes:4 lock/mcs/nodes:4 0.58
    expect "lock, 5.1 ÷ 5.2.2" armci 4 lock/server-queue/nodes:4 lock/mcs/nodes:4 "not offered"
    expect "lock, 5.1 ÷ 5.2.2" cop/direct 4 lock/server-queue/nodes:4 lock/mcs/nodes:4 "not offered"
    ;;
  thesis-table3)
    expect "cop_write for integer" cop/direct 2 shared/write "" "not offered"
    expect "cop_read for double" cop/direct 2 shared/read "" 957.5
    expect "cop_reduce for integer" mpi 8 reduce/int/size:4 "" 1719
    expect "cop_reduce for double" mpi 8 reduce/double/size:8 "" 2146
    expect "cop_barrier" cop/direct 8 barrier/nodes:8 "" 821.8
    # best to max: cop's modelled 393.6 µs is within 9.45 to 3840 (its measured 3936 would not be).
    verdict "cop_reduce for double" "verdict published µs best" "within the seed's spread"
    verdict "cop_write for integer" "verdict published µs best" "—"
    ;;
  thesis-table4)
    expect "16K Broadcast" pvm/direct 5 broadcast/size:16384 "" 4695
    expect "16K Multicast" armci 5 multicast/size:16384 "" "not offered"
    expect "Barrier using" cop/direct 5 barrier/nodes:5 "" 1073
    expect "Reduction of 1024" pvm/direct 5 reduce/double/size:8192 "" 3897
    expect "16K point-to-point" pvm/direct 2 echo/size:16384 "" 4744
    expect "16K point-to-point" cop/direct 2 echo/size:16384 "" "not offered"
    verdict_none
    ;;
  parastation2-table3)
    expect "Pentium II 350 MHz latency" mpi 2 echo/size:4 "" 630.1
    expect "Alpha 21164 500 MHz throughput" pvm/direct 2 bandwidth/size:32768 "" 50.76
    expect "Alpha 21164 600 MHz N/2" armci 2 bandwidth/size:32768 "" 2838
    # HAL's tolerance, the seed's 65 to 90 MByte/s: mpi's 69.42 within, armci's 99.75 (÷ 90 =
    # 1.11) and pvm's 50.76 (÷ 90 = 0.564) outside; N/2 has no stated spread: no verdict.
    verdict "Pentium II 350 MHz throughput" "verdict published HAL" \
      "pvm/direct: outside (ours 0.564x the seed); mpi: within the seed's spread; armci: outside (ours 1.11x the seed)"
    verdict "Alpha 21164 500 MHz throughput" "verdict published HAL" \
      "pvm/direct: outside (ours 0.781x the seed); mpi: within the seed's spread; armci: outside (ours 1.53x the seed)"
    verdict "Pentium II 350 MHz N/2" "verdict published HAL" "—"
    # The latency range 14.5 to 18 µs: mpi's 630.1 µs is 43.5x the Pentium's 14.5.
    verdict "Pentium II 350 MHz latency" "verdict published HAL" \
      "pvm/direct: outside (ours 208x the seed); mpi: outside (ours 43.5x the seed); armci: outside (ours 114x the seed)"
    ;;
  parastation2-table4)
    expect "n=1000 uniprocessor" mpi 1 matmul/n:1000 "" 800.1
    expect "n=2000 2 nodes MFlop" armci 2 matmul/n:2000 "" 2415
    expect "n=2000 4 nodes efficiency" pvm/direct 4 matmul/n:2000 "" 0.50
    expect "n=1000 1 node MFlop" cop/direct 1 matmul/n:1000 "" "—"
    # 772 to 790 MFLOP: armci's 770.7 is just below, mpi's 800.1 just above; both outside.
    verdict "n=1000 uniprocessor" "verdict published ParaStation2" \
      "pvm/direct: outside (ours 0.907x the seed); mpi: outside (ours 1.02x the seed); armci: outside (ours 0.986x the seed)"
    verdict "n=1000 2 nodes MFlop" "verdict published ParaStation2" "—"
    ;;
  ncube-table1)
    expect "Fixed Overhead" mpi 4 ring/size:256 "" 337.1
    expect "Incremental Cost" pvm/direct 4 ring/size:256 "" 0.57
    ;;
  ncube-table2)
    expect "8 bytes" mpi 4 ring/size:8 "" 149.6
    expect "256 bytes" armci 4 ring/size:256 "" 115.1
    ;;
  ncube-table3)
    expect "128x128 image (32x32 subimages) fraction" mpi 4 halo/image:128/frames:100 "" 0.39
    expect "32x32 image (8x8 subimages) speedup" cop/direct 4 halo/image:32/frames:100 "" 1.38
    ;;
  libsplitc-table8)
    expect "barrier" mpi 4 barrier/nodes:4 "" 1321
    expect "reduce" armci 4 reduce/double/size:8 "" 909.9
    expect "scan" pvm/direct 4 scan/size:8 "" "not offered"
    ;;
  libsplitc-table9 | libsplitc-table10 | libsplitc-table11)
    # 64 nodes (Table 9) is compared at the fixture's largest count, 8; 10 and 11 are at 8.
    expect "barrier" armci 8 barrier/nodes:8 "" 813.1
    expect "broadcast" mpi 8 broadcast/size:8 "" 1686
    expect "scan" mpi 8 scan/size:8 "" 1808
    ;;
  *) fail "no hand-written pairings for this table: add them" ;;
esac
echo "ok: $table reads and divides the expected points"
