#!/usr/bin/env bash
# slurm_no_hostfile_test.sh COPBENCH: `campaign run --cluster INVENTORY --launcher slurm` by a
# cluster user without root, who has no ~/.copbench/mpi-hostfile (role common writes it
# for ansible_user only; Slurm names the hosts): the campaign starts and its point goes to
# the Slurm launcher (here refused, no sbatch on PATH), instead of stopping at the missing
# hostfile. Without --launcher slurm the missing hostfile is still an error.
set -u
copbench=$1
fail() { echo "FAIL: $*"; exit 1; }
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir "$w/home"
printf 'all:\n  vars: {copbench_link_profile: native}\n  children:\n    compute:\n      hosts: {n1: {}, n2: {}}\n' >"$w/inv.yml"
printf 'name: nh\ndefaults: {reps: 2, max_reps: 3, iters: 3, warmup: 1, timeout: 60}\nruns:\n  - {benchmark: barrier, backends: [mpi], nodes: [2]}\n' >"$w/c.yml"
run() { (cd "$w" && env -i HOME="$w/home" PATH=/nonexistent "$copbench" campaign run c.yml --cluster inv.yml --results r --quiet "$@" 2>&1); }
out=$(run --launcher slurm); rc=$?
[ $rc -ne 0 ] || fail "no sbatch, yet exit 0: $out"
grep -q "no MPI hostfile" <<<"$out" && fail "--launcher slurm asked for the MPI hostfile: $out"
grep -q "1 points: 0 already done, 0 ran, 0 not offered, 0 skipped, 1 failed" <<<"$out" || fail "the point did not reach the launcher: $out"
grep -q '"reason": "sbatch not found on PATH' "$w"/r/nh-*/status/barrier.mpi.n2.native.json || fail "not the Slurm launcher's refusal"
out=$(run); rc=$?
[ $rc -ne 0 ] && grep -q "no MPI hostfile $w/home/.copbench/mpi-hostfile" <<<"$out" || fail "without Slurm: $out"
echo "ok"
