#!/bin/sh
# bench/cpu/run.sh BUILD GOLDEN: the cpu backend side by side with ref,
# PyTorch eager and torch.compile (bench/cpu/bench.py), from `make bench`.
# PyTorch comes from the venv $BENCH_VENV (build-bench-venv/ by default,
# ignored by git), which `make bench-cpu-deps` (or BENCH_INSTALL=1 make
# bench) fills from PyPI; without it, or without the golden models, this
# says so and skips: it never fails the rest of `make bench`.
# The results are appended to $BENCH_CPU_OUT
# (bench/results/DATE-cpu-bench.txt by default); BENCH_CPU_ARGS passes more
# options to bench.py (--models mlp,attn_block --repeat 10 ...).
BUILD=${1:-build}
GOLDEN=${2:-../shared/golden}
VENV=${BENCH_VENV:-build-bench-venv}
OUT=${BENCH_CPU_OUT:-bench/results/$(date -u +%F)-cpu-bench.txt}
if [ ! -f "$GOLDEN/models/models.json" ]; then
  echo "bench/cpu: skipped: no golden models at $GOLDEN/models (../shared beside the clone)"
  exit 0
fi
if [ ! -x "$BUILD/bin/alloy" ] || [ ! -f "$BUILD/lib/alloy/liballoy-cpu.so" ]; then
  echo "bench/cpu: skipped: no $BUILD/bin/alloy or no cpu backend in $BUILD/lib/alloy (LLVM missing?)"
  exit 0
fi
if [ "${BENCH_INSTALL:-0}" = 1 ]; then
  sh bench/cpu/deps.sh "$VENV" || { echo "bench/cpu: skipped: installing PyTorch into $VENV failed"; exit 0; }
fi
if ! "$VENV/bin/python" -c 'import torch, safetensors' 2>/dev/null; then
  echo "bench/cpu: skipped: no PyTorch in $VENV (make bench-cpu-deps installs it from PyPI, a few GB;"
  echo "           or BENCH_INSTALL=1 make bench; BENCH_VENV=DIR names another venv)"
  exit 0
fi
# Timing runs use the backend's own OpenBLAS choice, not a test's setting.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
echo "bench/cpu: ref, cpu, PyTorch eager and Inductor on $GOLDEN/models (minutes), appending to $OUT"
# shellcheck disable=SC2086
exec "$VENV/bin/python" bench/cpu/bench.py --alloy "$BUILD/bin/alloy" --golden "$GOLDEN" --out "$OUT" $BENCH_CPU_ARGS
