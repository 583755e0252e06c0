#!/bin/sh
# The ABI checked by machine (issue 21; docs/release.md): abidiff, from
# Debian's abigail-tools, compares against the baselines of the last
# release in tests/abi/
#   - liballoy.so (its exported functions and the public types they reach:
#     the application's ABI) with tests/abi/liballoy.abi;
#   - the plugin-facing headers (alloy/plugin.h, alloy/kernel_table.h: the
#     structs and enums a plugin and the host exchange by pointer), through
#     tests/abi/probe.c built against them, with tests/abi/plugin.abi.
# Allowed (tests/abi/suppressions.txt, --no-added-syms): new functions, and
# fields appended at a struct's end. Anything else fails with abidiff's
# report. Then the test shows that it bites: a copy of the headers with a
# field inserted in the middle of alloy_kernel_table must fail, and one with
# a field appended at its end must pass.
# `make abi-baseline` rewrites the baselines (at a release only).
# usage: tests/abidiff.sh BUILD_DIR
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
if ! command -v abidiff > /dev/null 2>&1; then
  echo "FAIL abidiff is not installed (Debian's abigail-tools: make deps installs it)"
  echo "0 passed, 1 failed"
  exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/alloy-abidiff-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define ALLOY_VERSION_STRING "\(.*\)"$/\1/p' "$root/sdk/include/alloy/version.h")
lib=$build/lib/liballoy.so.$version
supp=$root/tests/abi/suppressions.txt
cc=${CC:-cc}
probe() { # probe INCLUDE_DIR OUT.so
  $cc -std=c11 -g -O0 -fPIC -shared -fvisibility=hidden -I"$1" "$root/tests/abi/probe.c" -o "$2"
}
# abidiff's exit status: 0 same or allowed, else a bit field (4 a change,
# 8 an incompatible one, 1 and 2 its own errors).
diff_lib() { # diff_lib BASELINE.abi LIB.so HEADERS_DIR > report
  abidiff --no-added-syms --drop-private-types --suppressions "$supp" --hd2 "$3/alloy" "$1" "$2"
}

if [ ! -f "$lib" ]; then
  bad "no $lib (build first)"
elif diff_lib "$root/tests/abi/liballoy.abi" "$lib" "$root/sdk/include" > "$tmp/lib.txt" 2>&1; then ok
else
  bad "liballoy.so's ABI broke against tests/abi/liballoy.abi (abidiff's report):"
  sed 's/^/  | /' "$tmp/lib.txt" | head -n 60
fi

if ! probe "$root/sdk/include" "$tmp/probe.so" 2> "$tmp/cc.txt"; then
  bad "tests/abi/probe.c does not build: $(head -n 5 "$tmp/cc.txt")"
elif diff_lib "$root/tests/abi/plugin.abi" "$tmp/probe.so" "$root/sdk/include" > "$tmp/plugin.txt" 2>&1; then ok
else
  bad "the plugin ABI broke against tests/abi/plugin.abi (abidiff's report):"
  sed 's/^/  | /' "$tmp/plugin.txt" | head -n 60
fi

# It bites: a field inserted in the middle of alloy_kernel_table fails, naming it.
cp -r "$root/sdk/include" "$tmp/broken"
sed -i 's/^  int count;$/  int count;\n  int32_t inserted; \/* a field in the middle: breaks the ABI *\//' \
  "$tmp/broken/alloy/kernel_table.h"
if ! grep -q 'int32_t inserted;' "$tmp/broken/alloy/kernel_table.h"; then
  bad "could not make the broken header (alloy_kernel_table has no 'int count;' line)"
elif probe "$tmp/broken" "$tmp/broken.so" 2> "$tmp/cc.txt" &&
     ! diff_lib "$root/tests/abi/plugin.abi" "$tmp/broken.so" "$tmp/broken" > "$tmp/broken.txt" 2>&1 &&
     grep -q "'int32_t reserved' offset changed" "$tmp/broken.txt"; then ok
else
  bad "a field inserted in the middle of alloy_kernel_table was not caught:"
  sed 's/^/  | /' "$tmp/broken.txt" 2>/dev/null | head -n 20
fi
# ... and a field appended at its end, as a minor does, passes.
cp -r "$root/sdk/include" "$tmp/grown"
sed -i 's/^  int32_t reserved2; \/\* zero \*\/$/  int32_t reserved2; \/* zero *\/\n  const char *appended;/' \
  "$tmp/grown/alloy/kernel_table.h"
if ! grep -q 'const char \*appended;' "$tmp/grown/alloy/kernel_table.h"; then
  bad "could not make the grown header (alloy_kernel_table has no 'int32_t reserved2; /* zero */' line)"
elif probe "$tmp/grown" "$tmp/grown.so" 2> "$tmp/cc.txt" &&
     diff_lib "$root/tests/abi/plugin.abi" "$tmp/grown.so" "$tmp/grown" > "$tmp/grown.txt" 2>&1; then ok
else
  bad "a field appended at the end of alloy_kernel_table was reported as a break:"
  sed 's/^/  | /' "$tmp/grown.txt" 2>/dev/null | head -n 20
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
