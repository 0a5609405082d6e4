#!/usr/bin/env bash
# add_workload_test.sh SOURCE_DIR BUILD_DIR: "a new benchmark is one file" (README,
# "Adding a workload"). Copies the source tree to a temporary directory, adds a throwaway
# benchmark made of existing operations (barrier, broadcast) as suite/bench/throwaway.cpp
# and nothing else (no CMake line, no list), configures and builds only copbench and the
# mpi worker there, and asserts that `copbench list` (text and --json) shows it offered
# by the backends that have both operations, and that `copbench run throwaway --backend
# mpi` runs it and writes its points. The copy is laid out as the tree is (build/ inside it), so with
# ccache (the build's own CCACHE_DIR, or one kept in BUILD_DIR) the unchanged files are
# cache hits; the temporary directory is removed at the end.
set -uo pipefail
src=$(cd "${1:?source directory}" && pwd)
build=$(cd "${2:?build directory}" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/copbench-add-workload.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# The tree without builds, results and the cluster's state (the same files a clone has,
# plus the edits not committed yet).
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude='./.cluster*' \
    --exclude=./results/campaigns --exclude=./results/model -cf - . | tar -C "$tmp" -xf - || fail "copying $src"

cat >"$tmp/suite/bench/throwaway.cpp" <<'EOF'
// throwaway: a barrier then a broadcast of the size's bytes, timed as one collective
// (tests/suite/add_workload_test.sh adds this file to a copy of the tree).
#include "bench/common.h"

namespace copbench::bench {
namespace {

class Throwaway final : public Benchmark {
 public:
  std::string_view name() const override { return "throwaway"; }
  std::string_view description() const override { return "a barrier then a broadcast (test workload)"; }
  std::vector<Op> needs() const override { return {Op::barrier, Op::broadcast}; }
  std::vector<std::size_t> default_sizes() const override { return {8, 64}; }

  void run(Backend& b, const RunParams& params, Reporter& out) const override {
    for (std::size_t size : sizes_for(*this, params)) {
      std::vector<std::byte> buffer(size);
      report_collective(b, params, out, "throwaway/size:" + std::to_string(size), [&] {
        b.barrier();
        b.broadcast(buffer, 0);
      }, {{"bytes", static_cast<double>(size)}});
    }
  }
};

const RegisterWorkload<Throwaway> registered{WorkloadKind::benchmark, 999};

}  // namespace
}  // namespace copbench::bench
EOF

# ccache where installed, based at the copy's root as the build is at the tree's
# (scripts/test builds so): the build's own cache when it was built through ccache (every
# unchanged file a hit), else one kept in the build directory between runs.
launcher=()
if command -v ccache >/dev/null; then
  grep -q '^CMAKE_CXX_COMPILER_LAUNCHER:[A-Z]*=.*ccache' "$build/CMakeCache.txt" ||
    export CCACHE_DIR=${CCACHE_DIR:-$build/add-workload-ccache}
  export CCACHE_BASEDIR=$tmp
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$tmp" -B "$tmp/build" -G "Unix Makefiles" -DCMAKE_BUILD_TYPE="${type:-Release}" "${launcher[@]}" \
  >"$tmp/configure.log" 2>&1 || { tail -20 "$tmp/configure.log"; fail "configure failed"; }
# Only what the check needs: the libraries copbench links, then copbench itself without
# its dependency on every worker (copbench/fast), and the mpi worker.
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$tmp/build" -j "$jobs" --target copbench_control copbench_workloads cop_model copbench-worker-mpi \
  >"$tmp/build.log" 2>&1 || { tail -30 "$tmp/build.log"; fail "build failed"; }
cmake --build "$tmp/build" -j "$jobs" --target copbench/fast >>"$tmp/build.log" 2>&1 ||
  { tail -30 "$tmp/build.log"; fail "build of copbench failed"; }
copbench=$tmp/build/bin/copbench

"$copbench" list >"$tmp/list.txt" || fail "copbench list failed"
grep -Eq '^throwaway +offered +offered +offered' "$tmp/list.txt" || { cat "$tmp/list.txt"; fail "throwaway is not listed as offered"; }
"$copbench" list --json >"$tmp/list.json" || fail "copbench list --json failed"
python3 "$(dirname "$0")/../lib/checks.py" throwaway-listed "$tmp/list.json" || fail "copbench list --json does not show throwaway as a benchmark offered by mpi"

"$copbench" run throwaway --backend mpi --nodes 2 --sizes 8,64 --reps 2 --max-reps 3 --iters 3 --warmup 1 \
  --timeout 120 --json >"$tmp/run.json" 2>"$tmp/run.err" || { cat "$tmp/run.err"; fail "copbench run throwaway failed"; }
python3 "$(dirname "$0")/../lib/checks.py" throwaway-ran "$tmp/run.json" || fail "the run wrote no throwaway points"
echo "ok: a benchmark added as one file is built, listed and runs"
