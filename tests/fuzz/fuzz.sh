#!/usr/bin/env bash
# fuzz.sh build SRC BUILD            configure and build the fuzz targets with clang
# fuzz.sh run BUILD TARGET CORPUS SECONDS
#                                    fuzz TARGET for SECONDS over a copy of CORPUS
#                                    (the known-crash inputs, crash-*, left out)
# fuzz.sh crashes BUILD TARGET CORPUS
#                                    run TARGET once on CORPUS/crash-* (passes when
#                                    the bugs they found are fixed)
set -euo pipefail
fail() { echo "FAIL: $*"; exit 1; }
case "${1:-}" in
  build)
    src=$2 build=$3
    command -v clang >/dev/null && command -v clang++ >/dev/null ||
      fail "clang is not installed (Debian: clang libclang-rt-14-dev, in scripts/lib/packages.txt)"
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    CC=clang CXX=clang++ cmake -S "$src" -B "$build" "${launcher[@]}" >"$build.configure.log" 2>&1 ||
      { cat "$build.configure.log"; fail "configuring the fuzz targets failed"; }
    cmake --build "$build" -j2 || fail "building the fuzz targets failed"
    ;;
  run)
    build=$2 target=$3 corpus=$4 seconds=$5
    bin=$build/fuzz_$target
    [ -x "$bin" ] || fail "$bin is not built"
    work=$build/work/$target
    rm -rf "$work" && mkdir -p "$work/corpus" "$work/artifacts"
    find "$corpus" -maxdepth 1 -type f ! -name 'crash-*' -exec cp {} "$work/corpus/" \;
    [ -n "$(ls "$work/corpus")" ] || fail "no seeds in $corpus"
    # Inputs that crashed the core once (crash-*) are replayed by their own test.
    set +e
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1
    rc=$?
    set -e
    grep -E '^#[0-9]+ +DONE|average_exec_per_sec|new_units_added' "$work/log" || true
    if [ "$rc" -ne 0 ]; then
      grep -E 'ERROR:|invariant failed|SUMMARY' "$work/log" | head -5
      fail "fuzz_$target found a crash after $(grep -c '' "$work/log") log lines: $(ls "$work/artifacts") (log: $work/log; reproduce with $bin FILE)"
    fi
    grep -q 'DONE' "$work/log" || fail "fuzz_$target did not finish its run (log: $work/log)"
    echo "ok: fuzz_$target ran ${seconds}s without a crash"
    ;;
  crashes)
    build=$2 target=$3 corpus=$4
    files=("$corpus"/crash-*)
    [ -e "${files[0]}" ] || { echo "ok: no known crashes for $target"; exit 0; }
    "$build/fuzz_$target" "${files[@]}" || fail "a known crash input of $target still crashes"
    echo "ok: the ${#files[@]} known crash inputs of $target no longer crash"
    ;;
  *) fail "usage: fuzz.sh build|run|crashes ..." ;;
esac
