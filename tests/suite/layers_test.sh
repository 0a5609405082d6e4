#!/usr/bin/env bash
# layers_test.sh SOURCE_DIR [RANK_LIB WORKLOAD_OBJECTS(:-separated) CATALOG_LIB CONTROL_LIB]:
# the libraries as drawn (docs/ARCHITECTURE.md, "Libraries"). Layers, lowest first:
# 1 copbench_rank, 2 copbench_workloads, 3 copbench_catalog (and the backends' workers),
# 4 copbench_control, 5 the CLI. (a) No file of the suite includes a header of a layer
# above its own; a file or header not named below fails the test until it is given a
# layer. (b) With the built libraries: no library leaves undefined a symbol that a
# library above it defines (a call upwards by a declaration of its own, as the old
# registry's apps::app_benchmarks() was).
set -u
src=${1:?source directory}
cd "$src" || exit 1

layer_of() {  # a path relative to the source tree, or an include as written
  case "$1" in
    copbench/catalog.h|baselines/catalog.cpp) echo 3 ;;
    copbench/campaign.h|copbench/compare.h|copbench/csv.h|copbench/files.h|copbench/launch.h|copbench/log.h|\
    copbench/process.h|copbench/report.h) echo 4 ;;
    copbench/*.h) echo 1 ;;
    suite/include/copbench/*) layer_of "${1#suite/include/}" ;;
    suite/core/backend.cpp|suite/core/sizes.cpp|suite/core/workloads.cpp|suite/timing/*|suite/worker/*|worker/*|\
    suite/results/gbench_json.cpp|suite/results/atomic_write.cpp|suite/results/provenance.cpp|suite/results/table.cpp) echo 1 ;;
    suite/bench/*|bench/*|apps/*) echo 2 ;;
    baselines/*|common/*) echo 3 ;;
    suite/core/files.cpp|suite/core/process.cpp|suite/core/log.cpp|suite/launch/*|launch/*|suite/results/compare.cpp|\
    suite/campaign/*|campaign/*|suite/report/*|report/*) echo 4 ;;
    suite/cli/*|cli/*) echo 5 ;;
    *) echo 0 ;;
  esac
}

bad=0
files=$(find suite apps baselines -name '*.h' -o -name '*.cpp' | grep -v '^apps/examples/' | sort)
for f in $files; do
  mine=$(layer_of "$f")
  if [ "$mine" = 0 ]; then echo "$f: no layer (tests/suite/layers_test.sh)"; bad=1; continue; fi
  for inc in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
    case "$inc" in copbench/*|bench/*|worker/*|launch/*|campaign/*|report/*|cli/*) ;; *) continue ;; esac
    theirs=$(layer_of "$inc")
    if [ "$theirs" -gt "$mine" ]; then
      echo "$f (layer $mine) includes $inc (layer $theirs)"
      bad=1
    fi
  done
done
[ $bad -eq 0 ] && echo "no file includes a layer above its own ($(echo "$files" | wc -l) files)"

if [ $# -ge 5 ]; then
  IFS=: read -r -a workload_objects <<<"$3"
  defined() { nm -C --defined-only "$@" 2>/dev/null | awk '$2 ~ /^[TWDBRV]$/ { $1 = ""; $2 = ""; sub(/^  /, ""); print }' | sort -u; }
  undefined() { nm -C --undefined-only "$@" 2>/dev/null | awk '$1 == "U" { $1 = ""; sub(/^ /, ""); print }' | grep '^copbench::' | sort -u; }
  check() {  # NAME "files below" "files above"
    local name=$1 up
    up=$(comm -12 <(undefined $2) <(defined $3))
    if [ -n "$up" ]; then echo "$name uses what a layer above defines:"; printf '%s\n' "$up" | head -20 | sed 's/^/  /'; bad=1; fi
  }
  check copbench_rank "$2" "${workload_objects[*]} $4 $5"
  check copbench_workloads "${workload_objects[*]}" "$4 $5"
  check copbench_catalog "$4" "$5"
  [ $bad -eq 0 ] && echo "no library uses a symbol of a library above it"
fi
exit $bad
