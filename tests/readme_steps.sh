#!/bin/sh
# Runs the steps of a tutorial README (plugins/example/README.md) as a reader
# would, so that the page never drifts from what works. Fenced code blocks
# are read in order; the info string after ``` decides what happens:
#   ```LANG file=PATH   the block's text is written to PATH (folders made)
#   ```diff apply       the block is a unified diff, applied with patch -p0
#   ```sh step          the block runs with sh -e
#   anything else       only for reading (output samples, setup to adapt)
# Everything happens in a fresh temporary folder, the reader's "empty
# folder"; each step starts there (a cd does not carry over), and the lines
# of a step that begin with `export ` do carry over to later steps, as they
# would in one terminal. The steps see what README's setup block asks the
# reader to set, taken from the build tree:
#   ALLOY_SRC     the checkout (default: the folder above this script)
#   ALLOY_BUILD   the build folder (argument 2, default build)
#   ALLOY_GOLDEN  the golden corpus (argument 3, default ../shared/golden)
#   PATH          with $ALLOY_BUILD/bin first, for `alloy`
# Each block that does something counts; the first failure stops the run
# (later steps build on it) and prints the block's output. Last line:
# "N passed, N failed".
# usage: tests/readme_steps.sh README.md [BUILD_DIR [GOLDEN_DIR]]
readme=$1
src=$(cd "$(dirname "$0")/.." && pwd)
abspath() { (cd "$1" 2>/dev/null && pwd) || echo "$1"; }
ALLOY_SRC=${ALLOY_SRC:-$src}
ALLOY_BUILD=$(abspath "${2:-$ALLOY_SRC/build}")
ALLOY_GOLDEN=$(abspath "${3:-$ALLOY_SRC/../shared/golden}")
PATH=$ALLOY_BUILD/bin:$PATH
export ALLOY_SRC ALLOY_BUILD ALLOY_GOLDEN PATH
# The reader's environment must not leak in: only the README's exports.
unset ALLOY_PLUGIN_PATH ALLOY_BACKENDS

pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/alloy-readme.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
work=$tmp/work
mkdir -p "$work" "$tmp/blocks" "$tmp/bin"
: > "$tmp/env"

# A sanitizer build (make asan) can only load and link code built the same
# way: the README's `cc` then means the build's compiler with its -fsanitize
# flags (a cc first on PATH says so).
lib=$ALLOY_BUILD/lib/liballoy.so
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
  done < "$tmp/blocks/manifest"
fi
if [ $((pass + fail)) -eq 0 ]; then
  echo "FAIL $readme has no runnable blocks"
  fail=1
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
