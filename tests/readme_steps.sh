#!/bin/sh
# Runs the steps of a tutorial README (plugins/example/README.md) as a reader
# would, against an installed Alloy, so that the page never drifts from what
# works: `make install` into a fresh temporary prefix first, then the page's
# commands, with nothing of the source tree on any path they see.
# Fenced code blocks are read in order; the info string after ``` decides
# what happens:
#   ```LANG file=PATH   the block's text is written to PATH (folders made)
#   ```diff apply       the block is a unified diff, applied with patch -p0
#   ```sh step          the block runs with sh -e
#   anything else       only for reading (output samples, setup to adapt)
# Everything happens in a fresh temporary folder, the reader's "empty
# folder"; each step starts there (a cd does not carry over), and the lines
# of a step that begin with `export ` do carry over to later steps, as they
# would in one terminal. The steps see what the README's setup block asks
# the reader to set:
#   ALLOY_PREFIX  the temporary prefix `make install PREFIX=...` filled
#   ALLOY_GOLDEN  the golden corpus (argument 3, default ../shared/golden)
# and no ALLOY_PLUGIN_PATH, ALLOY_BACKENDS, PKG_CONFIG_PATH or
# LD_LIBRARY_PATH of the person running the tests. The page's runnable
# blocks must not name the checkout or a build folder, and must run
# `alloy conform --backend` on what they built (the walkthrough ends with a
# backend the suite passes: issue 21).
# Each block that does something counts, and each of those two rules; the
# first failing block stops the run (later steps build on it) and prints
# its output. Last line: "N passed, N failed".
# usage: tests/readme_steps.sh README.md [BUILD_DIR [GOLDEN_DIR]]
readme=$1
src=$(cd "$(dirname "$0")/.." && pwd)
abspath() { (cd "$1" 2>/dev/null && pwd) || echo "$1"; }
build=$(abspath "${2:-$src/build}")
ALLOY_GOLDEN=$(abspath "${3:-$src/../shared/golden}")
make=${MAKE:-make}
# The reader's environment must not leak in: only the README's exports.
unset ALLOY_PLUGIN_PATH ALLOY_BACKENDS ALLOY_SRC ALLOY_BUILD PKG_CONFIG_PATH LD_LIBRARY_PATH

pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/alloy-readme.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
work=$tmp/work
mkdir -p "$work" "$tmp/blocks" "$tmp/bin"
: > "$tmp/env"

# The reader's "make install PREFIX=/tmp/x", into a prefix of our own.
ALLOY_PREFIX=$tmp/prefix
export ALLOY_PREFIX ALLOY_GOLDEN
if ! $make -s --no-print-directory -C "$src" install BUILD="$build" PREFIX="$ALLOY_PREFIX" \
     > "$tmp/install.log" 2>&1; then
  echo "FAIL make install PREFIX=$ALLOY_PREFIX"
  tail -n 20 "$tmp/install.log"
  echo "0 passed, 1 failed"
  exit 1
fi

# A sanitizer build (make asan) can only load and link code built the same
# way: the README's `cc` then means the build's compiler with its -fsanitize
# flags (a cc first on PATH says so).
lib=$ALLOY_PREFIX/lib/liballoy.so
sanitize=
nm -D "$lib" 2>/dev/null | grep -q ' __asan_init' && sanitize=address
nm -D "$lib" 2>/dev/null | grep -q ' __ubsan_handle' && sanitize=${sanitize:+$sanitize,}undefined
if [ -n "$sanitize" ]; then
  compiler=gcc
  readelf -p .comment "$lib" 2>/dev/null | grep -q clang && compiler=clang
  printf '#!/bin/sh\nexec %s "$@" -fsanitize=%s\n' "$compiler" "$sanitize" > "$tmp/bin/cc"
  chmod +x "$tmp/bin/cc"
  PATH=$tmp/bin:$PATH
fi

if [ ! -f "$readme" ]; then
  echo "FAIL no README at $readme"
  echo "0 passed, 1 failed"
  exit 1
fi
readme=$(cd "$(dirname "$readme")" && pwd)/$(basename "$readme")

# Split the README into blocks/N (text) and a manifest "N LINE KIND ARG".
awk -v dir="$tmp/blocks" '
  /^```/ && !inside {
    inside = 1; n++; kind = "read"; arg = "-"
    info = substr($0, 4)
    if (match(info, /file=[^ ]+/)) { kind = "file"; arg = substr(info, RSTART + 5, RLENGTH - 5) }
    else if (info ~ /^sh[ ]+step([ ]|$)/) kind = "step"
    else if (info ~ /^diff[ ]+apply([ ]|$)/) kind = "apply"
    print n, NR, kind, arg > (dir "/manifest")
    printf "" > (dir "/" n)
    next
  }
  /^```[ ]*$/ && inside { inside = 0; close(dir "/" n); next }
  inside { print >> (dir "/" n) }
' "$readme"

run_block() { # run_block N KIND ARG: runs one block in $work, output to $tmp/out
  block=$tmp/blocks/$1
  case $2 in
    file)
      mkdir -p "$work/$(dirname "$3")" && cp "$block" "$work/$3" ;;
    apply)
      (cd "$work" && patch -p0 --forward --batch < "$block") ;;
    step)
      (cd "$work" && sh -ec '. "$1"; . "$2"' sh "$tmp/env" "$block") || return 1
      grep '^export ' "$block" >> "$tmp/env" || true ;;
  esac
}

# The two rules on the runnable blocks, checked before any runs.
steps=$(awk '$3 == "step" || $3 == "apply" {print $1}' "$tmp/blocks/manifest" 2>/dev/null)
named=$(for n in $steps; do grep -nE 'ALLOY_SRC|ALLOY_BUILD|build/(bin|lib)|sdk/include|plugins/example' \
          "$tmp/blocks/$n" | sed "s/^/block $n line /"; done)
if [ -z "$named" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL $readme: a runnable block names the source tree or a build folder, not the installed prefix:"
  printf '%s\n' "$named" | sed 's/^/  | /'
fi
if [ -n "$steps" ] && for n in $steps; do cat "$tmp/blocks/$n"; done | grep -q '^alloy conform --backend '; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
  echo "FAIL $readme: no step runs alloy conform --backend on the backend it built"
fi

if [ -f "$tmp/blocks/manifest" ]; then
  while read -r n line kind arg; do
    [ "$kind" = read ] && continue
    if run_block "$n" "$kind" "$arg" > "$tmp/out" 2>&1; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      what="the $kind block"
      [ "$kind" = file ] && what="writing $arg"
      echo "FAIL $readme:$line: $what failed; its output:"
      tail -n 30 "$tmp/out" | sed 's/^/  | /'
      remaining=$(awk -v n="$n" '$1 > n && $3 != "read"' "$tmp/blocks/manifest" | wc -l)
      [ "$remaining" -gt 0 ] && echo "stopped: $remaining later blocks not run"
      break
    fi
    # A conform step's totals, for the log of make test.
    [ "$kind" = step ] && grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$tmp/out" |
      sed "s|^|$(basename "$readme"):$line: alloy conform: |"
  done < "$tmp/blocks/manifest"
fi
if [ $((pass + fail)) -le 2 ]; then
  echo "FAIL $readme has no runnable blocks"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
