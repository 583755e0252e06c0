#!/bin/sh
# tests/zoo/run_zoo.sh: runs every model tests/zoo/export_zoo.py exported,
# at the ATen level as exported and decomposed to prims, each checked
# against PyTorch's outputs (alloy run --check). Not part of make test: the
# models are made with PyTorch from PyPI and are too large for the repo.
# usage: tests/zoo/run_zoo.sh path/to/alloy ZOO_DIR
alloy=$1
dir=$2
pass=0
fail=0
for pt2 in "$dir"/*.aten.pt2; do
  name=$(basename "$pt2" .aten.pt2)
  io="$dir/$name.io.safetensors"
  for level in aten prims; do
    dec=""
    [ "$level" = prims ] && dec="--decompose prims"
    if out=$("$alloy" run "$pt2" --inputs "$io" --check "$io" $dec 2>&1); then
      pass=$((pass + 1))
      echo "ok   $name ($level)"
    else
      fail=$((fail + 1))
      echo "FAIL $name ($level):"
      printf '%s\n' "$out" | grep -v "^  \|PASS" | head -n 5 | sed 's/^/       /'
    fi
  done
done
echo "$pass passed, $fail failed"
