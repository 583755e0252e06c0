#!/bin/sh
# Plugin symbol hygiene (DESIGN.md, ABI rules 1 and 3), checked with nm on
# every built plugin: BUILD/lib/alloy/*.so and BUILD/tests/plugins/*.so.
#   - no undefined alloy_ symbol: a plugin never links liballoy; everything
#     it needs comes through the host table or is linked in statically
#     (liballoy_kernel_table.a);
#   - the only exported symbol is the entry, alloy_plugin_init: the kernel
#     table helper and everything else stay hidden, so that two plugins, or
#     a plugin and liballoy, never bind to each other's copies.
# Two checks per plugin; the last line is "N passed, N failed".
# usage: tests/plugin_symbols.sh BUILD_DIR
build=${1:-build}
pass=0
fail=0

# Plugins whose exports are wrong on purpose, with the symbols they export.
# liballoy-no_entry.so: the loader test's plugin without the entry symbol.
expected_exports() {
  case $(basename "$1") in
    liballoy-no_entry.so) echo "alloy_plugin_initialize" ;;
    *) echo "alloy_plugin_init" ;;
  esac
}

# Symbols the linker itself may put in the dynamic table of any .so.
linker_symbols='^(_init|_fini|_edata|_end|__bss_start)$'

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

found=0
for so in "$build"/lib/alloy/*.so "$build"/tests/plugins/*.so; do
  [ -f "$so" ] || continue
  found=$((found + 1))
  undefined=$(nm -D --undefined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | grep '^alloy_' | tr '\n' ' ')
  if [ -z "$undefined" ]; then ok; else bad "$so needs symbols of liballoy: $undefined"; fi
  exports=$(nm -D --defined-only "$so" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' |
            grep -Ev "$linker_symbols" | sort | tr '\n' ' ' | sed 's/ $//')
  want=$(expected_exports "$so")
  if [ "$exports" = "$want" ]; then ok; else bad "$so exports \"$exports\", expected only \"$want\""; fi
done
if [ "$found" -eq 0 ]; then
  bad "no plugin found under $build/lib/alloy or $build/tests/plugins (is $build a build folder?)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
