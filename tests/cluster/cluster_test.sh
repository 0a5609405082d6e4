#!/usr/bin/env bash
# One step of the cluster lifecycle test (tests/cluster/CMakeLists.txt runs them
# in order as CTest fixtures):
#   up          bring up 3 compute hosts + copctl; every host answers ssh as itself
#   site        site.yml provisions it without failures; status reports all healthy
#   mpi         MPI_Allreduce across the 3 hosts, checked; no traffic on the COP network
#   pvm         pvm_barrier + pvm_reduce across the virtual machine, checked, and
#               PVM host numbers equal the channel order
#   armci       ARMCI_Rmw fetch-and-add and a global sum across the 3 hosts, checked
#   cop         libcop across the hosts (one task per host, on its own copdrv):
#               every libcop check in the table and the direct tid mapping, then
#               rounds of cop_barrier + cop_reduce + cop_bcast, checked, while
#               interface byte counters show the COP traffic on the COP network,
#               at the controller, and (static groups) next to none on the primary
#   slurm       Slurm (role slurm, on in the emulated cluster): sinfo lists every
#               compute host idle in the partition, at its primary address;
#               srun -N 3 hostname answers once from each host (and -N 4 is refused)
#   campaign_slurm  a campaign through --launcher slurm (tests/campaign/slurm_test.sh):
#               every point runs as a Slurm job (pvm and cop with their pvmd,
#               copd and copdrv private to the job, gone from every host after it,
#               also after scancel), a cancelled job's point fails with Slurm's
#               reason and --resume completes it; the same campaign without Slurm
#               matches in kind
#   idempotent  a second site.yml run changes nothing (the slurm role included)
#   teardown    teardown.yml stops the services (status names them missing, no
#               Slurm daemon runs); a second run changes nothing; a crashed host
#               is named by status
#   down        teardown leaves no namespace, link or process
# Usage: cluster_test.sh STEP BINDIR. Exits 77 (skip) when not root.
set -uo pipefail

step=${1:?step}
bindir=${2:?directory of the test programs}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cluster="$repo/scripts/cluster"

# A cluster of its own, beside any the user has up (COPBENCH_CLUSTER_TEST_ID
# picks another id where two builds' tests may run at once).
export COPBENCH_CLUSTER_ID=${COPBENCH_CLUSTER_TEST_ID:-7}
export COPBENCH_CLUSTER_STATE=${COPBENCH_CLUSTER_TEST_STATE:-$bindir/../tests/cluster/cluster-state}
# The hosts run this build's programs and daemons (copd, copdrv, PVM's spawn path).
export COPBENCH_BUILD=${COPBENCH_BUILD:-$(cd "$bindir/.." && pwd)}
prefix=cb$COPBENCH_CLUSTER_ID
nodes=3
hosts="node1 node2 node3"

fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/../lib/wait.sh"  # wait_until TIMEOUT_S COMMAND...
[ "$(id -u)" -eq 0 ] || { echo "not root: the emulated cluster needs network namespaces; skipped"; exit 77; }

# One lifecycle at a time: a second ctest run in the same build (someone else's
# scripts/test) would take the same cluster down under this one. The ctest process
# that ran `up` owns the cluster until its `down`.
lock="$COPBENCH_CLUSTER_STATE.owner"
owner() { cat "$lock" 2>/dev/null; }
# The cluster is free (no owner, or an owner that is gone) or already this run's.
cluster_free() {
  local o
  o=$(owner)
  [ -z "$o" ] || [ "$o" = "$PPID" ] || ! kill -0 "$o" 2>/dev/null
}
take_cluster() {
  WAIT_EVERY_S=1 wait_until 300 cluster_free || fail "the test cluster is held by another test run (process $(owner))"
  mkdir -p "$(dirname "$lock")" && echo "$PPID" >"$lock"
}
check_owner() {
  [ "$(owner)" = "$PPID" ] || fail "the test cluster is not this run's (held by process $(owner)): run the steps through ctest -L cluster"
}

on_node1() { "$cluster" ssh node1 "$@"; }

# rx+tx bytes of one interface inside each host, summed over the hosts.
net_bytes() {
  local dev=$1 h total=0 v
  for h in $hosts; do
    v=$(ip netns exec "$prefix-$h" cat "/sys/class/net/$dev/statistics/rx_bytes" "/sys/class/net/$dev/statistics/tx_bytes" |
      awk '{s += $1} END {print s}')
    total=$((total + v))
  done
  echo $total
}

# Runs a collective; it must print OK, the primary network must carry traffic and,
# while no COP daemon runs, the COP network none at all.
collective() {
  local what=$1 pri0 cop0 pri1 cop1 out
  shift
  pri0=$(net_bytes pri0) cop0=$(net_bytes cop0)
  out=$(on_node1 "$@" 2>&1)
  local rc=$?
  pri1=$(net_bytes pri0) cop1=$(net_bytes cop0)
  echo "$out"
  echo "$what: primary network +$((pri1 - pri0)) bytes, COP network +$((cop1 - cop0)) bytes"
  [ $rc -eq 0 ] || fail "$what exited with $rc"
  grep -qx OK <<<"$out" || fail "$what did not print OK"
  [ $((pri1 - pri0)) -gt 0 ] || fail "$what: no traffic on the primary network"
  if [ ! -x "$COPBENCH_BUILD/bin/copdrv" ] && [ ! -x "$COPBENCH_BUILD/bin/copd" ]; then
    [ $((cop1 - cop0)) -eq 0 ] || fail "$what: traffic on the COP network"
  fi
}

# The suite's own check of every collective of a backend across the hosts, two tasks per
# host (ranks 2k, 2k+1 on host k+1): copbench verify --hostfile must pass.
suite_verify() {
  local out
  out=$(on_node1 "$bindir/copbench" verify --backend "$1" --nodes "$nodes" --tasks-per-node 2 \
    --hostfile .copbench/mpi-hostfile 2>&1) || { echo "$out" >&2; fail "copbench verify --backend $1 across the hosts failed"; }
  grep -q "on $nodes nodes x 2 tasks" <<<"$out" || { echo "$out" >&2; fail "copbench verify --backend $1: not $nodes nodes x 2 tasks"; }
  echo "  copbench verify --backend $1 --nodes $nodes --tasks-per-node 2 --hostfile: $(grep -c '^  ok ' <<<"$out") operations ok"
}

# One libcop run across the compute hosts (cop_libcop_check --hosts ...); it must
# pass. Sets pri, cop (bytes on the compute hosts' pri0 / cop0, rx+tx summed over
# the hosts), ctl_cop and ctl_pri (the controller host's cop0 / pri0).
cop_run() {
  local p0 c0 x0 y0 out rc
  p0=$(net_bytes pri0) c0=$(net_bytes cop0)
  x0=$(hosts=copctl net_bytes cop0) y0=$(hosts=copctl net_bytes pri0)
  out=$(on_node1 "$bindir/cop_libcop_check" --hosts "${hosts// /,}" "$@" 2>&1)
  rc=$?
  pri=$(($(net_bytes pri0) - p0)) cop=$(($(net_bytes cop0) - c0))
  ctl_cop=$(($(hosts=copctl net_bytes cop0) - x0)) ctl_pri=$(($(hosts=copctl net_bytes pri0) - y0))
  if [ $rc -ne 0 ] || ! grep -q '^passed: ' <<<"$out"; then
    echo "$out" >&2
    fail "cop_libcop_check $* (exit $rc)"
  fi
  echo "$(tail -n 1 <<<"$out") [$*]: primary +$pri B, COP +$cop B; controller: COP +$ctl_cop B, primary +$ctl_pri B"
}

# Running, not a zombie.
alive() { [ -e "/proc/$1" ] && ! awk '$1 == "State:" && $2 == "Z" {z = 1} END {exit !z}' "/proc/$1/status" 2>/dev/null; }
gone() { ! alive "$1"; }

changed_counts() { awk '/ : ok=/ {for (i = 1; i <= NF; i++) if ($i ~ /^changed=/) print $1, $i}'; }

case $step in
  up)
    take_cluster
    "$cluster" down >/dev/null || fail "down before up (a cluster of an interrupted run?)"
    "$cluster" up $nodes || fail "up"
    "$cluster" up $nodes 2>/dev/null && fail "a second up did not refuse"
    for h in $hosts copctl; do
      [ -e "/run/netns/$prefix-$h" ] || fail "no namespace $prefix-$h"
      got=$("$cluster" ssh "$h" hostname) || fail "ssh $h"
      [ "$got" = "$h" ] || fail "ssh $h answers as '$got'"
      got=$("$cluster" exec "$h" hostname) || fail "exec $h"
      [ "$got" = "$h" ] || fail "exec $h answers as '$got'"
    done
    # Each host has its own process table and /tmp.
    "$cluster" exec node1 sh -c 'echo node1 >/tmp/copbench-cluster-test'
    "$cluster" exec node2 test -e /tmp/copbench-cluster-test && fail "node2 sees node1's /tmp"
    [ "$("$cluster" exec node2 sh -c 'echo $$')" -lt 1000 ] || fail "node2 has no process table of its own"
    # The health check names what is missing before provisioning.
    out=$("$cluster" status) && fail "status is healthy before site.yml"
    grep -q "node1: pvmd MISSING" <<<"$out" || fail "status does not name the missing pvmd: $out"
    echo "up: ok"
    ;;
  site)
    check_owner
    out=$("$cluster" provision 2>&1)
    rc=$?
    echo "$out" | tail -8
    [ $rc -eq 0 ] || { echo "$out" >&2; fail "site.yml failed"; }
    "$cluster" status || fail "status after site.yml"
    echo "site: ok"
    ;;
  mpi)
    check_owner
    collective "mpi allreduce" mpirun --hostfile .copbench/mpi-hostfile -np $nodes "$bindir/cluster_mpi_allreduce"
    suite_verify mpi
    ;;
  pvm)
    check_owner
    collective "pvm reduce" "$bindir/cluster_pvm_reduce" $hosts
    suite_verify pvm
    ;;
  armci)
    check_owner
    collective "armci rmw" mpirun --hostfile .copbench/mpi-hostfile -np $nodes "$bindir/cluster_armci_rmw"
    ;;
  cop)
    check_owner
    [ -x "$bindir/cop_libcop_check" ] || fail "$bindir/cop_libcop_check is not built"
    [ -x "$COPBENCH_BUILD/bin/copd" ] && [ -x "$COPBENCH_BUILD/bin/copdrv" ] || fail "copd/copdrv are not built in $COPBENCH_BUILD"
    # Every libcop check (tables of ch. V, shared memory, gather/scatter ...),
    # two tasks per host, in both tid mappings; the direct one must hold here.
    cop_run --tasks 2 --mapping table
    cop_run --tasks 2 --mapping direct --access normal
    # Traffic: the same program with no COP operation (spawn, group join,
    # pvm_barrier, reports: PVM's own control traffic) and with R rounds of
    # barrier + reduce + bcast. Static groups: the tids are asked of PVM's group
    # server once, so the COP operations themselves should use only the COP network.
    # (What the primary carries beyond the baseline is a few KB whatever R is.)
    rounds=1000 ops=$((1000 * 3 + 1))
    cop_run --tasks 1 --scenario collectives --rounds 0 --static-groups 1
    base_pri=$pri base_cop=$cop
    for mapping in table direct; do
      cop_run --tasks 1 --scenario collectives --rounds $rounds --static-groups 1 --mapping $mapping
      extra_pri=$((pri - base_pri)) extra_cop=$((cop - base_cop))
      echo "  $ops COP operations ($mapping mapping): COP network +$extra_cop B ($((extra_cop / ops)) B/op), primary +$extra_pri B beyond the baseline"
      [ $extra_cop -ge $((ops * 100)) ] || fail "COP operations did not cross the COP network (+$extra_cop B for $ops operations)"
      # What the compute hosts sent to and got from the COP network, the controller got and sent.
      [ $((ctl_cop * 10)) -ge $((cop * 9)) ] || fail "COP traffic did not go to the controller (hosts +$cop B, controller +$ctl_cop B)"
      [ $((extra_pri * 50)) -le $extra_cop ] || fail "COP operations put $extra_pri B on the primary network (over 2 % of their $extra_cop B on the COP network)"
      [ $ctl_pri -lt 1024 ] || fail "the controller host got $ctl_pri B on the primary network"
    done
    # Without static groups libcop asks the group server (a PVM task) for the
    # group's tids at every call, over the primary network: shown, not an error.
    rounds=200 ops=$((200 * 3 + 1))
    cop_run --tasks 1 --scenario collectives --rounds $rounds --static-groups 0
    echo "  without static groups, $ops operations: primary +$((pri - base_pri)) B ($(((pri - base_pri) / ops)) B/op) beyond the baseline: group server queries"
    [ $((cop - base_cop)) -ge $((ops * 100)) ] || fail "COP operations did not cross the COP network"
    # The suite's cop backend on the cluster: --hostfile makes it use the cluster's
    # virtual machine and each host's copdrv (no private loopback stack); the barrier
    # must cross the COP network and the result must say so.
    c0=$(net_bytes cop0)
    out=$(on_node1 "$bindir/copbench" run barrier --backend cop --nodes "$nodes" --hostfile .copbench/mpi-hostfile \
      --reps 3 --iters 100 --json 2>&1) || { echo "$out" >&2; fail "copbench run barrier --backend cop --hostfile failed"; }
    cop_bytes=$(($(net_bytes cop0) - c0))
    grep -q '"link_profile": "cluster"' <<<"$out" || { echo "$out" >&2; fail "copbench run on the cluster: context does not say cluster"; }
    grep -q '"name": "barrier/nodes:'"$nodes"'"' <<<"$out" || { echo "$out" >&2; fail "copbench run on the cluster: no barrier point for $nodes nodes"; }
    [ $cop_bytes -ge $((100 * 100)) ] || fail "copbench's cop barrier did not cross the COP network (+$cop_bytes B)"
    echo "  copbench run barrier --backend cop --hostfile: ok, COP network +$cop_bytes B"
    suite_verify cop
    echo "cop: ok"
    ;;
  slurm)
    check_owner
    slurm_logs() {
      local h
      for h in $hosts; do
        echo "--- $h" >&2
        "$cluster" exec "$h" sh -c 'tail -n 20 /run/copbench/slurm/var/log/slurm/*.log /run/copbench/slurm/var/log/munge/*.log' >&2
      done
    }
    # Every compute host, by its own hostname, idle in the one partition.
    # (on_node1 is ssh: the remote shell splits the command line again.)
    got=$(on_node1 "sinfo --noheader --Node --format '%N %P %T'" 2>&1) || { echo "$got" >&2; slurm_logs; fail "sinfo failed"; }
    echo "$got"
    want=$(for h in $hosts; do echo "$h compute* idle"; done)
    [ "$(sort <<<"$got" | tr -s ' ')" = "$want" ] || { slurm_logs; fail "sinfo does not show every compute host idle: $got"; }
    # slurmctld reaches each slurmd on the primary network.
    for h in $hosts; do
      addr=$(on_node1 scontrol show node "$h" | grep -o 'NodeAddr=[^ ]*') || fail "scontrol show node $h"
      [ "$addr" = "NodeAddr=198.18.$COPBENCH_CLUSTER_ID.${h#node}" ] || fail "$h: $addr, not its primary address"
    done
    # One task on each of the 3 hosts: each name exactly once.
    got=$(on_node1 srun -N $nodes hostname 2>&1) || { echo "$got" >&2; slurm_logs; fail "srun -N $nodes hostname failed"; }
    [ "$(sort <<<"$got" | paste -sd' ')" = "$hosts" ] || fail "srun -N $nodes hostname gave '$(paste -sd' ' <<<"$got")', want each of $hosts once"
    echo "srun -N $nodes hostname: $(paste -sd' ' <<<"$got")"
    # The job steps ran under slurmstepd on each host, as Slurm's tasks.
    got=$(on_node1 "srun -N $nodes --ntasks-per-node 2 sh -c 'echo \$SLURM_NODEID \$SLURM_PROCID \$(hostname)'" 2>&1) ||
      { echo "$got" >&2; fail "srun --ntasks-per-node 2 failed"; }
    want=$(i=0; for h in $hosts; do echo "$i $((2 * i)) $h"; echo "$i $((2 * i + 1)) $h"; i=$((i + 1)); done)
    [ "$(sort -k2n <<<"$got")" = "$want" ] || fail "srun -N $nodes --ntasks-per-node 2: node ids, ranks and hosts wrong: $got"
    # More nodes than the partition holds: refused, not run on fewer.
    out=$(on_node1 srun -N $((nodes + 1)) hostname 2>&1) && fail "srun -N $((nodes + 1)) ran on a $nodes-host partition: $out"
    grep -qi 'node configuration is not available\|node count specification invalid' <<<"$out" ||
      fail "srun -N $((nodes + 1)) failed without saying why: $out"
    echo "slurm: ok"
    ;;
  campaign_slurm)
    check_owner
    # tests/campaign/slurm_test.sh on the head node against the cluster's own Slurm:
    # barrier and echo on mpi, armci, pvm and cop at 2 and 3 nodes through
    # --launcher slurm (cop with a job-private copd on the COP network, and a cop
    # job cancelled while it runs; a job held PENDING behind a job on every node,
    # cancelled: failed with Slurm's reason, completed by --resume), and the same campaign
    # without Slurm alike in kind. The results lie in this tree, which every host sees.
    work="$bindir/../tests/cluster/campaign-slurm"
    out=$(on_node1 "$repo/tests/campaign/slurm_test.sh" "$bindir/copbench" "$repo/tests/campaign/data/slurm.yml" \
      "$work" "$COPBENCH_CLUSTER_STATE/inventory.yml" 2>&1)
    rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "the Slurm campaign test failed (results in $work)"
    left=$(on_node1 "squeue -h -o '%i %j %T'")
    [ -z "$left" ] || fail "jobs left in the queue: $left"
    echo "campaign_slurm: ok"
    ;;
  idempotent)
    check_owner
    out=$("$cluster" provision 2>&1)
    rc=$?
    [ $rc -eq 0 ] || { echo "$out" >&2; fail "second site.yml failed"; }
    grep -q '^TASK \[slurm : Start slurmd\]' <<<"$out" || fail "the second site.yml did not run the slurm role"
    counts=$(changed_counts <<<"$out")
    echo "$counts"
    [ "$(wc -l <<<"$counts")" -eq $((nodes + 1)) ] || fail "no recap for every host"
    if grep -qv 'changed=0$' <<<"$counts"; then
      awk '/^TASK / {t = $0} /^changed: / {print t; print}' <<<"$out" >&2
      fail "second site.yml changed something"
    fi
    echo "idempotent: ok"
    ;;
  teardown)
    check_owner
    out=$("$cluster" playbook teardown.yml 2>&1) || { echo "$out" >&2; fail "teardown.yml failed"; }
    out=$("$cluster" status) && fail "status is healthy after teardown.yml"
    echo "$out"
    grep -q "node1: pvmd MISSING" <<<"$out" || fail "pvmd still runs after teardown.yml"
    grep -q "sshd MISSING" <<<"$out" && fail "teardown.yml took sshd down"
    for h in $hosts; do
      "$cluster" exec "$h" pgrep -x 'slurmd|slurmctld|munged' && fail "a Slurm daemon still runs on $h after teardown.yml"
    done
    on_node1 sinfo >/dev/null 2>&1 && fail "sinfo still answers after teardown.yml"
    out=$("$cluster" playbook teardown.yml 2>&1) || { echo "$out" >&2; fail "second teardown.yml failed"; }
    grep -q 'changed=[1-9]' <<<"$out" && fail "second teardown.yml changed something"
    # A host that crashes is named by the health check (and down still cleans up).
    read -r _ init <"$COPBENCH_CLUSTER_STATE/pids/node3.pid"
    kill -KILL "$init"
    wait_until 3 gone "$init" || true  # the status check below names it either way
    out=$("$cluster" status) && fail "status is healthy with node3 gone"
    grep -q "node3: MISSING host" <<<"$out" || fail "status does not name the missing host: $out"
    echo "teardown: ok"
    ;;
  down)
    o=$(owner)
    if [ -n "$o" ] && [ "$o" != "$PPID" ] && kill -0 "$o" 2>/dev/null; then
      echo "the test cluster belongs to another test run (process $o): left to it"
      exit 77
    fi
    # Every process inside the cluster, as this machine sees them, before down.
    pids=""
    for ns in $(ip netns list | awk -v p="^$prefix-" '$1 ~ p {print $1}'); do
      pids+=" $(ip netns pids "$ns" | tr '\n' ' ')"
    done
    "$cluster" down || fail "down"
    "$cluster" down || fail "second down"
    left=$(ip netns list | awk -v p="^$prefix-" '$1 ~ p')
    [ -z "$left" ] || fail "namespaces left: $left"
    left=$(ip -o link show | awk -F': ' -v p="^$prefix-" '$2 ~ p {print $2}')
    [ -z "$left" ] || fail "links left: $left"
    # A dead process may stay a zombie until this machine's init reaps it: that
    # one runs no more. A live one must be gone within a moment.
    for pid in $pids; do
      wait_until 3 gone "$pid" 2>/dev/null || true  # a zombie of another namespace is judged below
      alive "$pid" && [ "$(readlink "/proc/$pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] &&
        fail "process $pid of the cluster still runs: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
    done
    # Nothing else refers to the cluster's state: no init, sshd or ssh master left.
    for p in /proc/[0-9]*; do
      [ "${p#/proc/}" = $$ ] && continue
      alive "${p#/proc/}" || continue
      cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
      [[ $cmd == *"$COPBENCH_CLUSTER_STATE"* && $cmd != *cluster_test.sh* ]] && fail "process ${p#/proc/} left: $cmd"
    done
    rm -f "$lock"
    echo "down: ok (checked ${pids:+$(wc -w <<<"$pids")} processes gone)"
    ;;
  *) fail "unknown step $step" ;;
esac
