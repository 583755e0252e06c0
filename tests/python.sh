#!/bin/sh
# The Python package's tests (sdk/python/tests/, plain unittest) against
# this build's library, ending with "N passed, N failed" as every suite.
# usage: tests/python.sh BUILD_DIR [GOLDEN_DIR]
#
# The tests run with the first of $ALLOY_PYTHON, python3 and /usr/bin/python3
# that imports NumPy (Debian's python3-numpy, which make deps installs, is
# /usr/bin/python3's). The torch tests (DLPack, torch tensors in and out,
# torch.compile(backend="alloy") and the golden models through it) run with
# the first of $ALLOY_TORCH_PYTHON, the project's PyTorch venv ($ALLOY_VENV,
# else build-bench-venv/, which make deps fills: bench/cpu/deps.sh) and that
# same interpreter, that imports torch; without one they print "skipped: no
# torch" and count nothing.
build=${1:-build}
golden=${2:-../shared/golden}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build="$root/$build" ;; esac
case $golden in /*) ;; *) golden="$(pwd)/$golden" ;; esac
export ALLOY_LIBRARY="$build/lib/liballoy.so"
export ALLOY_GOLDEN="$golden"
unset ALLOY_BACKENDS
run="$root/sdk/python/tests/run.py"
if [ ! -f "$ALLOY_LIBRARY" ]; then
  echo "no $ALLOY_LIBRARY: build first (make BUILD=$build)"
  echo "0 passed, 1 failed"
  exit 1
fi

py=""
for p in ${ALLOY_PYTHON:-} python3 /usr/bin/python3; do
  if "$p" -c "import numpy" 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "no python3 that imports numpy (make deps installs Debian's python3-numpy)"
  echo "0 passed, 1 failed"
  exit 1
fi
tpy=""
venv=${ALLOY_VENV:-${BENCH_VENV:-build-bench-venv}}
case $venv in /*) ;; *) venv="$root/$venv" ;; esac
for p in ${ALLOY_TORCH_PYTHON:-} "$venv/bin/python" "$py"; do
  if [ -x "$(command -v "$p")" ] && "$p" -c "import torch, numpy" 2>/dev/null; then tpy=$p; break; fi
done

pass=0
fail=0
add() { # the totals line of one run.py output, from stdin
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  if [ -z "$last" ]; then fail=$((fail + 1)); return; fi
  pass=$((pass + $(echo "$last" | sed 's/^\([0-9]*\) passed.*/\1/')))
  fail=$((fail + $(echo "$last" | sed 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/')))
}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "-- $py: the package, NumPy"
"$py" "$run" > "$out" 2>&1
status=$?
cat "$out"
add < "$out"
[ "$status" -ne 0 ] && ! grep -qE '^[0-9]+ passed, [1-9]' "$out" && fail=$((fail + 1))
if [ -n "$tpy" ] && [ "$tpy" != "$py" ]; then
  echo "-- $tpy: torch tensors through DLPack, torch.compile, the golden models through it"
  "$tpy" "$run" --only test_torch --only test_dynamo --only test_dynamo_models > "$out" 2>&1
  status=$?
  cat "$out"
  add < "$out"
  [ "$status" -ne 0 ] && ! grep -qE '^[0-9]+ passed, [1-9]' "$out" && fail=$((fail + 1))
elif [ -z "$tpy" ]; then
  echo "torch tests: skipped: no torch (make deps installs it into $venv; or set"
  echo "  ALLOY_TORCH_PYTHON to a python with torch)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
