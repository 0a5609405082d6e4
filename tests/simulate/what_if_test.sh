#!/usr/bin/env bash
# what_if_test.sh COPBENCH SOURCE_DIR: suite/campaigns/what-if-ci.yml (what-if.yml at CI
# size) run by `copbench campaign run`, which ends with the report: tables/what-if.csv
# has a simulated row for every platform, operation and node count, each with the COP's
# (sim-cop) and Open MPI's (smpi) median read back from the raw result files and the
# ratio smpi ÷ sim-cop computed from them; the published reference rows, each with a
# source; tables/what-if-crossover.csv one row per platform and operation, its crossover
# agreeing with the ratios; the ratio and time plots drawn; smpi's results name the
# algorithms chosen in place of the selector's (smpi_allreduce).
set -u
copbench=$1 src=$2
out=$(mktemp -d /tmp/copbench-what-if-test.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
log=$("$copbench" campaign run "$src/suite/campaigns/what-if-ci.yml" --results "$out" --quiet 2>&1) ||
  fail "campaign run exited $?: $log"
echo "$log"
dir=$(sed -n 's/^results: //p' <<<"$log")
[ -d "$dir" ] || fail "no results directory in: $log"
grep -q "^report: $dir/index.md" <<<"$log" || fail "the run did not end with its report"
python3 "$(dirname "$0")/../lib/checks.py" what-if-report "$dir" || exit 1
