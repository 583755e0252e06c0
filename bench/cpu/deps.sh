#!/bin/sh
# bench/cpu/deps.sh VENV: installs PyTorch and safetensors into the venv
# VENV (an ignored folder, build-bench-venv/ by default) for bench/cpu/run.sh.
# Asked for only (make bench-cpu-deps or BENCH_INSTALL=1 make bench): never
# part of make test. PyTorch's CPU-only index is tried first (a smaller
# wheel); where it cannot be reached, PyPI's wheel (which pulls the CUDA
# libraries beside it: a few GB, unused here).
set -e
VENV=${1:-build-bench-venv}
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating the venv $VENV ($($PY --version))"
  "$PY" -m venv "$VENV"
fi
if "$VENV/bin/python" -c 'import torch, safetensors' 2>/dev/null; then
  echo "$VENV has torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') already"
  exit 0
fi
if ! "$VENV/bin/pip" install --timeout 30 --retries 1 torch --index-url https://download.pytorch.org/whl/cpu; then
  echo "download.pytorch.org/whl/cpu cannot be reached: PyTorch from PyPI"
  "$VENV/bin/pip" install torch
fi
"$VENV/bin/pip" install safetensors numpy
"$VENV/bin/python" -c 'import torch; print("torch", torch.__version__, "in '"$VENV"'")'
