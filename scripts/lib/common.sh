# Shared helpers for the entry points in scripts/. Source it; do not run it.
set -euo pipefail

COPBENCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COPBENCH_BUILD=${COPBENCH_BUILD:-$COPBENCH_ROOT/build}

log() { printf '[copbench] %s\n' "$*" >&2; }
die() { printf '[copbench] error: %s\n' "$*" >&2; exit 1; }

# Installs every package of LIST (default scripts/lib/packages.txt) that is missing
# (apt-get update first), as root. A user without root installs nothing: the packages
# are the administrator's (a cluster provisioned with ansible/site.yml has them all); it
# says so and goes on when every package is there, and otherwise fails naming the
# missing ones and the apt-get command an administrator runs.
ensure_packages() {
  local list=${1:-$COPBENCH_ROOT/scripts/lib/packages.txt} wanted missing=()
  [ -r "$list" ] || die "no package list $list"
  wanted=$(grep -v '^#' "$list" | grep -v '^$')
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "$(id -u)" -ne 0 ]; then
    [ ${#missing[@]} -eq 0 ] && { log "not root: installing nothing (every package of $(basename "$list") is installed)"; return 0; }
    die "not root, and ${#missing[@]} Debian package(s) are missing: ${missing[*]}; an administrator installs them with: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Configures (Release) and builds into build/, through ccache where installed
# (scripts/lib/packages.txt) with the source root as its base directory: a copy of the
# tree built the same way (tests/suite/add_workload_test.sh) then finds every unchanged
# object in the cache. With targets, only those (and what they depend on); without,
# everything. scripts/bench builds the `copbench` target only (the tool, the workers of
# real nodes: cop, pvm, mpi and armci, with copd and copdrv; what the main job runs,
# not the simulated backends' workers nor the tests); scripts/test builds everything.
build() {
  local launcher=() targets=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$COPBENCH_ROOT}
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  [ $# -eq 0 ] || targets=(--target "$@")
  cmake -S "$COPBENCH_ROOT" -B "$COPBENCH_BUILD" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build "$COPBENCH_BUILD" -j "$(nproc)" "${targets[@]}"
}
build_all() { build; }
