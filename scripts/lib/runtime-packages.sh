#!/usr/bin/env bash
# Prints the Debian packages that provide the shared libraries the given programs
# link (one package per line, sorted, no architecture): what a host needs installed to
# run a copy of this machine's build (ansible role suite, copy mode, installs them on
# every host). The build is the one source of truth: for every ELF file among PATHs
# (a directory is searched for ELF files; other files, e.g. scripts, are skipped), its
# DT_NEEDED libraries (readelf -d) resolved as the loader resolves them here (ldd) and
# mapped to the package that owns the file (dpkg -S). apt installs what those
# packages depend on in turn.
#
# Usage: runtime-packages.sh [--own DIR] PATH...
#   --own DIR  libraries resolved inside DIR (the build tree: the suite's own, which
#              travel with the copy) need no package and are left out.
# Exits non-zero, naming the library and the program, when a needed library is not
# found here or belongs to no Debian package (e.g. one built and installed locally):
# a host could not get it with apt.
set -euo pipefail

die() { printf 'runtime-packages: error: %s\n' "$*" >&2; exit 1; }

own=""
if [ "${1:-}" = --own ]; then
  [ $# -ge 2 ] || die "--own needs a directory"
  own=$(realpath -e -- "$2") || die "--own $2: no such directory"
  shift 2
fi
[ $# -ge 1 ] || die "usage: runtime-packages.sh [--own DIR] PATH... (no program given)"
for tool in readelf ldd dpkg-query realpath; do
  command -v "$tool" >/dev/null || die "$tool is not installed (binutils, libc-bin, dpkg, coreutils)"
done

is_elf() { [ -f "$1" ] && [ "$(head -c 4 -- "$1" | od -An -c | tr -d ' \n')" = '177ELF' ]; }

# The ELF files among the arguments, one per line.
elf_files() {
  local p f
  for p in "$@"; do
    [ -e "$p" ] || die "$p: no such file or directory"
    if [ -d "$p" ]; then
      while IFS= read -r -d '' f; do
        if is_elf "$f"; then printf '%s\n' "$f"; fi
      done < <(find "$p" -type f -print0 | sort -z)
    elif is_elf "$p"; then
      printf '%s\n' "$p"
    fi
  done
}

# The package owning FILE, without architecture; empty when none. Debian's merged /usr
# makes /lib/... and /usr/lib/... one file, but dpkg records only the path the package
# ships (libc6: /lib/..., most others: /usr/lib/...), and the loader reports either:
# both spellings are asked, for the path and for the file its symlinks lead to.
owner_of() {
  local path=$1 real cand out
  real=$(realpath -e -- "$path")
  for cand in "$path" "$real"; do
    for cand in "$cand" "${cand#/usr}" "/usr$cand"; do
      out=$(dpkg-query -S -- "$cand" 2>/dev/null | grep -v '^diversion by' | head -n 1) || true
      if [ -n "$out" ]; then
        # "pkg:arch[, pkg2:arch]: path"
        printf '%s\n' "${out%%: /*}" | tr ',' '\n' | sed 's/^ *//; s/:.*$//'
        return 0
      fi
    done
  done
}

# The package(s) of every library one program needs, added to found[] (owner[] caches
# them by path: the programs share most of their libraries).
declare -A owner=()
found=()
packages_of() {
  local prog=$1 needed lib path resolved
  needed=$(readelf -d -- "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
  [ -n "$needed" ] || return 0
  resolved=$(ldd -- "$prog" 2>&1) || die "ldd $prog failed: $resolved"
  for lib in $needed; do
    # "lib => /path (addr)", "lib => not found", or the loader itself: "/path/lib (addr)".
    path=$(awk -v lib="$lib" '$1 == lib && $2 == "=>" { print $3; exit }
                             substr($1, length($1) - length(lib)) == "/" lib { print $1; exit }' <<<"$resolved")
    [ -n "$path" ] && [ "$path" != not ] ||
      die "$prog needs $lib, which the loader does not find here (build it into the copy, or install its package)"
    if [ -n "$own" ] && [[ "$(realpath -e -- "$path")" == "$own"/* ]]; then
      continue
    fi
    [ -n "${owner[$path]+set}" ] || owner[$path]=$(owner_of "$path")
    [ -n "${owner[$path]}" ] ||
      die "$prog needs $lib ($path), which belongs to no Debian package: a host cannot install it with apt (built locally? put it in the build tree, which travels with the copy, or package it)"
    found+=("${owner[$path]}")
  done
}

files=$(elf_files "$@")
[ -n "$files" ] || die "no ELF program among: $*"
while IFS= read -r f; do
  packages_of "$f"
done <<<"$files"
[ ${#found[@]} -eq 0 ] || printf '%s\n' "${found[@]}" | sort -u
