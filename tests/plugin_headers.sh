#!/bin/sh
# The plugin headers declare only what a plugin can reach (DESIGN.md, plugin
# ABI rule 9): alloy/plugin.h and alloy/kernel_table.h, and every header they
# include, may declare the host table, header-only (static inline) helpers
# and the static kernel-table helper, and nothing of liballoy. A plugin built
# as docs/abi.md says must then never fail to load on a missing symbol.
#
# How: gcc -aux-info lists every function the headers declare; a probe
# plugin refers to each of them (inline or not: an inline helper that calls
# into liballoy is caught too), is compiled with the plugin flags against
# the public headers only, linked -shared -Wl,--no-undefined against nothing
# but BUILD/lib/liballoy_kernel_table.a -lffi -lm -lc, and dlopen'ed with
# RTLD_NOW. A liballoy function declared in those headers fails the link,
# naming the function. The headers must also compile as C++ (their
# extern "C" blocks say they may be), when a C++ compiler is there.
# One check per step; the last line is "N passed, N failed".
# usage: tests/plugin_headers.sh BUILD_DIR
#   $ALLOY_INCLUDE: the include folder to check (default sdk/include), for
#   trying the test on a changed copy of the headers.
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
include=${ALLOY_INCLUDE:-$root/sdk/include}
include=$(cd "$include" && pwd)
cc=${CC:-cc}
kt="$build/lib/liballoy_kernel_table.a"
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
finish() {
  rm -rf "$tmp"
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/alloy-headers-XXXXXX") || { echo "FAIL mktemp"; echo "0 passed, 1 failed"; exit 1; }
printf '#include "alloy/plugin.h"\n#include "alloy/kernel_table.h"\n' > "$tmp/headers.c"

# 1. The functions the headers declare, from gcc's -aux-info (only gcc has
# it): one line per function, "/* FILE:LINE:NC */ extern int f (int);"
# ("NF" and "static" for an inline definition).
aux_cc=gcc
command -v gcc > /dev/null 2>&1 || aux_cc=$cc
if ! $aux_cc -std=c11 -I"$include" -c "$tmp/headers.c" -o "$tmp/headers.o" \
     -aux-info "$tmp/aux.txt" 2> "$tmp/aux.err"; then
  bad "cannot list the headers' functions with $aux_cc -aux-info: $(head -n 5 "$tmp/aux.err")"
  finish
fi
grep -F "/* $include/alloy/" "$tmp/aux.txt" > "$tmp/decls.txt"
# A function's name: the identifier before its parameter list, which
# -aux-info writes "name (" ("(*name (" when it returns a function pointer).
names_of() {
  sed -e 's|^/\* [^ ]* \*/ ||' \
      -e '/(\*[A-Za-z_][A-Za-z0-9_]* (/{s/.*(\*\([A-Za-z_][A-Za-z0-9_]*\) (.*/\1/;b' -e '}' \
      -e 's/ (.*//' -e 's/.*[^A-Za-z0-9_]//'
}
names_of < "$tmp/decls.txt" | sort -u > "$tmp/names.txt"
echo "headers: $($aux_cc -std=c11 -I"$include" -MM "$tmp/headers.c" | tr ' \\' '\n\n' |
  grep -F "$include/" | sed "s|^$include/||" | sort -u | tr '\n' ' ')"
echo "functions: $(wc -l < "$tmp/names.txt"); not inline: $(grep -v ' static ' "$tmp/decls.txt" | names_of | sort -u | tr '\n' ' ')"
# A parse that finds nothing would pass everything below: the two functions
# every version has must be there, and every name must be an identifier.
if grep -qx alloy_kernel_table_plugin "$tmp/names.txt" && grep -qx alloy_dtype_size "$tmp/names.txt" &&
   ! grep -qv '^[A-Za-z_][A-Za-z0-9_]*$' "$tmp/names.txt"; then
  ok
else
  bad "the function list from -aux-info looks wrong: $(tr '\n' ' ' < "$tmp/names.txt")"
  finish
fi

# 2. The probe plugin: every function referred to, and called on a path
# that never runs, so that no compiler drops a reference.
{
  echo '#include <stddef.h>'
  echo '#include "alloy/plugin.h"'
  echo '#include "alloy/kernel_table.h"'
  echo 'typedef void (*probe_fn)(void);'
  echo 'static const probe_fn probe_refs[] __attribute__((used)) = {'
  sed 's/.*/    (probe_fn)&,/' "$tmp/names.txt"
  echo '};'
  echo 'ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host);'
  echo 'ALLOY_PLUGIN_EXPORT const alloy_plugin_api *alloy_plugin_init(const alloy_host_api *host) {'
  echo '  if (!host)'
  echo '    for (size_t i = 0; i < sizeof probe_refs / sizeof probe_refs[0]; i++) probe_refs[i]();'
  echo '  return NULL;'
  echo '}'
} > "$tmp/probe.c"
plugin_flags="-std=c11 -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Wshadow
  -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wvla"
# shellcheck disable=SC2086
if $cc $plugin_flags -I"$include" -c "$tmp/probe.c" -o "$tmp/probe.o" 2> "$tmp/cc.err"; then
  ok
else
  bad "the probe plugin does not compile against the public headers alone: $(head -n 10 "$tmp/cc.err")"
  finish
fi

# 3. Linked with nothing of liballoy: a declared liballoy function is an
# undefined reference here. A sanitizer build's helper needs the sanitizer
# runtime, which a plugin gets from the program that loads it: not checked.
if [ ! -f "$kt" ]; then
  bad "no $kt (is $build a build folder?)"
  finish
fi
if nm "$kt" 2> /dev/null | grep -Eq ' U __(asan|ubsan|tsan|msan)_'; then
  echo "note: $kt is built with a sanitizer: link and dlopen not checked"
  finish
fi
if $cc -shared -Wl,--no-undefined -o "$tmp/liballoy-header_probe.so" "$tmp/probe.o" "$kt" \
     -lffi -lm -lc 2> "$tmp/ld.err"; then
  ok
else
  bad "a plugin calling what plugin.h and kernel_table.h declare does not link without liballoy: $(grep -o "undefined reference to [^ ]*" "$tmp/ld.err" | sort -u | tr '\n' ' ')$(grep -q 'undefined reference' "$tmp/ld.err" || head -n 5 "$tmp/ld.err")"
  finish
fi

# 4. And it loads.
cat > "$tmp/load.c" << 'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  if (!h) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  if (!dlsym(h, "alloy_plugin_init")) {
    printf("no alloy_plugin_init\n");
    return 1;
  }
  return 0;
}
EOF
if $cc -o "$tmp/load" "$tmp/load.c" -ldl 2> "$tmp/load.err"; then
  if out=$("$tmp/load" "$tmp/liballoy-header_probe.so"); then ok; else bad "the probe plugin does not load: $out"; fi
else
  bad "cannot build the loader: $(head -n 5 "$tmp/load.err")"
fi

# 5. The headers as C++ (a vendor's plugin may be C++).
cxx=${CXX:-c++}
if command -v "$cxx" > /dev/null 2>&1; then
  if "$cxx" -x c++ -std=c++11 -Wall -Wextra -Werror -I"$include" -fsyntax-only "$tmp/headers.c" \
       2> "$tmp/cxx.err"; then
    ok
  else
    bad "the plugin headers do not compile as C++: $(head -n 10 "$tmp/cxx.err")"
  fi
else
  echo "note: no C++ compiler ($cxx): the headers were not compiled as C++"
fi
finish
