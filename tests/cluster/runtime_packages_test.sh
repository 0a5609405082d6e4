#!/usr/bin/env bash
# cluster.runtime_packages: scripts/lib/runtime-packages.sh, which gives role suite's
# copy mode the Debian packages a host needs to run the copied programs (needs no root,
# no cluster). Asserts:
#   - on this build's programs (the ones copy mode copies: bin/copbench*, copd, copdrv,
#     bin/lib/) it succeeds, lists libsodium's runtime package (libsodium23, the COP
#     link's MACs) and the C++ runtime (libstdc++6), and every package it lists is
#     installed here (each came from dpkg's own database);
#   - a program needing a library the loader does not find is refused (non-zero exit,
#     the library named), and so is one needing a library that belongs to no package
#     (a locally built one outside the build tree);
#   - the same library inside the --own tree (the suite's own, which travels with the
#     copy) is left out, and the program's other libraries (libc6) are still listed.
# Usage: runtime_packages_test.sh BINDIR
set -uo pipefail

bindir=${1:?directory of copd and copbench}
here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../scripts/lib/runtime-packages.sh"
build=$(cd "$bindir/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

# The real build.
out=$(cd "$build" && "$script" --own . bin/copbench* bin/copd bin/copdrv bin/lib) ||
  fail "runtime-packages.sh failed on the build's programs"
echo "packages of the copied programs: $(tr '\n' ' ' <<<"$out")"
for want in libsodium23 libstdc++6 libc6; do
  grep -qx "$want" <<<"$out" || fail "$want is not in the list"
done
while IFS= read -r p; do
  [[ "$p" =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || fail "'$p' is not a Debian package name"
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -qx 'install ok installed' ||
    fail "listed package $p is not installed here"
done <<<"$out"

# Fake programs: one linking a library of its own (rpath into a directory outside any
# package), built here with the C compiler.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree/lib"
printf 'int copbench_fake(void) { return 7; }\n' >"$work/fake.c"
printf 'int copbench_fake(void);\nint main(void) { return copbench_fake() == 7 ? 0 : 1; }\n' >"$work/main.c"
cc -shared -fPIC -o "$work/tree/lib/libcopbench_fake.so" "$work/fake.c" || fail "cannot build the fake library"
cc -o "$work/tree/prog" "$work/main.c" -L"$work/tree/lib" -lcopbench_fake -Wl,-rpath,"$work/tree/lib" ||
  fail "cannot build the fake program"
"$work/tree/prog" || fail "the fake program does not run"

# A library that belongs to no package is refused, naming it.
err=$("$script" "$work/tree/prog" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] || fail "a program with a library of no package was accepted"
grep -q 'libcopbench_fake.so.*belongs to no Debian package' <<<"$err" || fail "the refusal does not name the library: $err"
echo "refused (exit $rc): $err"

# Inside the --own tree it travels with the copy: left out, the rest still listed.
out=$("$script" --own "$work/tree" "$work/tree") || fail "the fake program inside --own was refused"
grep -q copbench_fake <<<"$out" && fail "the own library was listed"
grep -qx libc6 <<<"$out" || fail "the fake program's libc6 is not listed: $out"

# A library the loader does not find is refused, naming it.
rm "$work/tree/lib/libcopbench_fake.so"
err=$("$script" --own "$work/tree" "$work/tree/prog" 2>&1 >/dev/null)
rc=$?
[ $rc -ne 0 ] || fail "a program with a missing library was accepted"
grep -q 'needs libcopbench_fake.so, which the loader does not find' <<<"$err" || fail "the refusal does not name the library: $err"
echo "refused (exit $rc): $err"

# No program at all is an error, not an empty list.
"$script" "$build/bin/lib" >/dev/null 2>&1 && fail "a directory without ELF programs was accepted"
echo "PASS"
