#!/bin/sh
# bench/cpu/deps.sh [VENV]: the project's PyTorch virtual environment, one
# venv for the torch.compile tests (tests/python.sh, make test) and the
# side-by-side benchmarks (bench/cpu/run.sh). VENV is $ALLOY_VENV, else
# $BENCH_VENV, else build-bench-venv/ (ignored by git). `make deps` runs it.
#
# It creates the venv when missing and installs PyTorch $TORCH_SPEC
# (torch==2.11.*, the version the golden corpus was made with), NumPy,
# safetensors and Transformers (gpt2_tiny's model class, for its dynamic
# torch.compile test) from PyPI, then the Alloy package itself in editable mode (so
# that torch.compile(backend="alloy") finds it through its entry point).
# Idempotent: a venv that has them already costs one `python -c` (well
# under a second). A fresh install downloads PyPI's Linux wheel with its
# CUDA libraries (about 4.7 GB on disk; README.md says how long it took).
#
# Never fails: without a network (or pip, or python3 -m venv) it prints a
# warning and exits 0, and the torch tests then print "skipped: no torch"
# and count nothing. ALLOY_VENV_STRICT=1 makes a failure exit 1.
VENV=${1:-${ALLOY_VENV:-${BENCH_VENV:-build-bench-venv}}}
PY=${PYTHON:-python3}
TORCH_SPEC=${TORCH_SPEC:-torch==2.11.*}
want=$(echo "$TORCH_SPEC" | sed -n 's/^torch==\([0-9.]*\)\**$/\1/p')
here=$(cd "$(dirname "$0")/../.." && pwd)

warn() {
  echo "warning: $1"
  echo "warning: the PyTorch venv $VENV is incomplete: the torch and torch.compile tests will"
  echo "warning: print 'skipped: no torch' (rerun make deps with a network to install it)"
  [ "${ALLOY_VENV_STRICT:-0}" = 1 ] && exit 1
  exit 0
}

# Present and of the version wanted (the metadata, not an import of torch:
# quick), with NumPy, safetensors and the alloy package's entry point.
ready() {
  "$VENV/bin/python" - "$want" <<'EOF' 2>/dev/null
import sys
from importlib import metadata as md
v = md.version("torch")
assert not sys.argv[1] or v.split("+")[0].startswith(sys.argv[1].rstrip(".") + ".") \
    or v.split("+")[0] == sys.argv[1], v
md.version("numpy"); md.version("safetensors"); md.version("transformers")
assert any(e.name == "alloy" for e in md.entry_points(group="torch_dynamo_backends"))
EOF
}

if [ -x "$VENV/bin/python" ] && ready; then
  v=$("$VENV/bin/python" -c 'from importlib import metadata as m; print(m.version("torch"))')
  echo "$VENV: torch $v, numpy, safetensors, transformers and alloy (editable) already"
  exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating the venv $VENV ($($PY --version 2>&1))"
  "$PY" -m venv "$VENV" || warn "'$PY -m venv $VENV' failed (Debian: apt-get install python3-venv)"
fi
start=$(date +%s)
echo "installing $TORCH_SPEC, numpy, safetensors and transformers from PyPI into $VENV (minutes: PyTorch's wheel"
echo "and its CUDA libraries, about 4.7 GB)"
"$VENV/bin/pip" install --timeout 60 --retries 2 "$TORCH_SPEC" numpy safetensors transformers ||
  warn "pip could not install $TORCH_SPEC into $VENV (no network? PyPI unreachable?)"
# The package in editable mode, without its dependencies (installed above):
# backend="alloy" then resolves through the entry point. What setuptools
# leaves in the source tree is removed (only what was not there before).
left=""
for d in alloy.egg-info build; do [ -e "$here/sdk/python/$d" ] || left="$left $d"; done
if ! "$VENV/bin/pip" install --timeout 60 --no-deps -q -e "$here/sdk/python"; then
  echo "warning: pip could not install sdk/python (editable) into $VENV: torch.compile(backend="
  echo "warning: \"alloy\") needs alloy.dynamo.alloy_backend there (the tests pass it directly)"
fi
for d in $left; do rm -rf "${here:?}/sdk/python/$d"; done
"$VENV/bin/python" -c 'import torch, numpy, safetensors' ||
  warn "$VENV still cannot import torch, numpy and safetensors"
v=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)')
echo "$VENV: torch $v installed in $(($(date +%s) - start)) s"
