#!/bin/sh
# The model commands end to end: alloy run, check, convert and partition on
# every golden model (../shared/golden/models).
# Every .core.pt2 and .dyn.core.pt2 must pass --check against PyTorch's
# outputs; each .dyn.core.pt2 also runs at batch sizes 1, 2, 7 and 64 from
# one import (the inputs' rows cycled, the expected outputs likewise).
# usage: tests/models.sh path/to/alloy GOLDEN_DIR
alloy=$1
models=$2/models
build=$(dirname "$(dirname "$alloy")")
tmp=${TMPDIR:-/tmp}/alloy-models-$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # check NAME COMMAND...: the command must succeed
  name=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name"; tail -n 5 "$tmp/out"; fi
}
refuses() { # refuses NAME WANT COMMAND...: fails, and says WANT
  name=$1
  want=$2
  shift 2
  if "$@" >"$tmp/out" 2>&1; then fail=$((fail + 1)); echo "FAIL $name: succeeded";
  elif grep -qF -- "$want" "$tmp/out"; then pass=$((pass + 1));
  else fail=$((fail + 1)); echo "FAIL $name: no '$want' in:"; tail -n 3 "$tmp/out"; fi
}

if [ -d "$models" ]; then
  # The commands themselves, on the dynamic mlp (what `make run` runs): its
  # io file holds 8 samples, so cycled batches of other sizes differ from it.
  ex="$models/mlp.dyn.core"
  io="$models/mlp.io.safetensors"
  check "run $ex.pt2 --check" "$alloy" run $ex.pt2 --inputs $io --check $io
  check "run $ex.pt2 at batch 1,2,7,64" "$alloy" run $ex.pt2 --inputs $io \
    --check $io --batch 1,2,7,64
  check "check $ex.pt2" sh -c "'$alloy' check $ex.pt2 | grep -q '^# ok: 9 nodes'"
  check "convert $ex.pt2 to .air" "$alloy" convert $ex.pt2 "$tmp/mlp.air"
  check "the .air names its weights file" grep -q '^weights "mlp.safetensors"$' "$tmp/mlp.air"
  check "run the converted .air --check" "$alloy" run "$tmp/mlp.air" --inputs $io \
    --check $io --batch 5
  check "run --outputs writes output0" sh -c "'$alloy' run $ex.pt2 --inputs $io \
    --outputs '$tmp/y.safetensors' && '$alloy' run $ex.pt2 --inputs $io \
    --check '$tmp/y.safetensors' | grep -q 'max abs err 0 '"
  refuses "a batch outside the range constraint" "outside the range [1, 64] of symbol s77" \
    "$alloy" run $ex.pt2 --inputs $io --batch 65
  # Outputs of samples 0 and 1, cycled to 3 rows, against samples 0, 1 and 2.
  refuses "a failing check" "FAIL (first mismatch at [2, " sh -c "'$alloy' run $ex.pt2 \
    --inputs $io --batch 2 --outputs '$tmp/y2.safetensors' && '$alloy' run $ex.pt2 \
    --inputs $io --check '$tmp/y2.safetensors' --batch 3"
  refuses "a missing input tensor" "has no tensor input0" "$alloy" run $ex.pt2 --inputs "$tmp/y.safetensors"
  refuses "an unknown backend" "no usable backend 'nope'" "$alloy" run $ex.pt2 \
    --inputs $io --backends nope
  refuses "a file that is not a model" "not-a-model.air:1:1" sh -c \
    "echo 'garbage here' > '$tmp/not-a-model.air' && '$alloy' run '$tmp/not-a-model.air'"
  refuses "a truncated archive" "not a readable ZIP archive" sh -c \
    "head -c 20000 $ex.pt2 > '$tmp/cut.pt2' && '$alloy' check '$tmp/cut.pt2'"

  # Mixtures: the example plugin beside ref, partitioned by the cost model and
  # with free moves (the priority choice: many partitions).
  check "run $ex.pt2 on example,ref" sh -c "'$alloy' run $ex.pt2 --inputs $io \
    --check $io --backends example,ref --cost-model free --batch 3,5 | grep -q ' partitions:'"
  check "partition $ex.pt2 with a picture" sh -c "'$alloy' partition $ex.pt2 --backends example,ref \
    --inputs $io --cost-model free --dot '$tmp/p.dot' | grep -q 'example' && \
    grep -q 'subgraph cluster_1' '$tmp/p.dot' && grep -q 'penwidth=3' '$tmp/p.dot'"
  refuses "partition of a symbolic model needs --inputs" "give --inputs X.safetensors" \
    "$alloy" partition $ex.pt2 --backends example,ref

  for f in "$models"/*.core.pt2; do
    name=$(basename "$f" .pt2)
    io="$models/${name%%.*}.io.safetensors"
    check "run $name --check" "$alloy" run "$f" --inputs "$io" --check "$io"
    check "run $name on example,ref --check" "$alloy" run "$f" --inputs "$io" --check "$io" \
      --backends example,ref
    check "run $name on example,ref, free moves, --check" "$alloy" run "$f" --inputs "$io" \
      --check "$io" --backends example,ref --cost-model free
    # The testing backend chooser (ref's kernels) claiming a random half.
    check "run $name on chooser,ref with random claims --check" env \
      ALLOY_PLUGIN_PATH="$build/tests/plugins" ALLOY_CHOOSER=random=11:50 "$alloy" run "$f" \
      --inputs "$io" --check "$io" --backends chooser,ref --cost-model free
    case $name in
      *.dyn.core) check "run $name at batch 1,2,7,64" "$alloy" run "$f" --inputs "$io" \
                    --check "$io" --batch 1,2,7,64 ;;
    esac
    # devsim, the simulated accelerator (its own memory, asynchronous
    # queues): alone, the weights go over once (the second run copies 0
    # weight bytes); beside ref, with the matrix products and convolutions
    # left to ref, values cross both ways and still match PyTorch.
    check "run $name on devsim: weights copied once --check" sh -c \
      "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' run '$f' --inputs '$io' --check '$io' \
        --backends devsim --repeat 2 --stats > '$tmp/ds' && grep -q 'backend devsim' '$tmp/ds' && \
        grep -q 'all outputs PASS' '$tmp/ds' && grep -q 'weights in 0 B' '$tmp/ds'"
    check "run $name on devsim,ref --check" sh -c \
      "ALLOY_PLUGIN_PATH='$build/tests/plugins' ALLOY_DEVSIM_SKIP='aten.mm*,aten.addmm*,aten.bmm*,aten.convolution*' \
        '$alloy' run '$f' --inputs '$io' --check '$io' --backends devsim,ref --repeat 2 --stats \
        > '$tmp/dsr' && grep -q 'all outputs PASS' '$tmp/dsr' && \
        ! grep -q 'same-backend host round trips [1-9]' '$tmp/dsr'"
  done
  # ATen-level graphs: functionalized (squeezenet's relu_), decomposed where
  # ref does not claim an op, or forced down to Core ATen or to prims.
  for f in "$models"/*.aten.pt2; do
    name=$(basename "$f" .pt2)
    io="$models/${name%%.*}.io.safetensors"
    check "run $name --check" "$alloy" run "$f" --inputs "$io" --check "$io"
    check "run $name --decompose core --check" "$alloy" run "$f" --inputs "$io" --check "$io" \
      --decompose core
    check "run $name --decompose prims --check" "$alloy" run "$f" --inputs "$io" --check "$io" \
      --decompose prims
  done
  for f in "$models"/*.dyn.core.pt2; do
    name=$(basename "$f" .pt2)
    io="$models/${name%%.*}.io.safetensors"
    check "run $name --decompose prims at batch 1,7" "$alloy" run "$f" --inputs "$io" \
      --check "$io" --decompose prims --batch 1,7
  done
  for f in "$models"/*.pt2; do
    check "check $(basename "$f")" "$alloy" check "$f"
  done
  check "convert squeezenet1_1.dyn.core to .air and run it" sh -c \
    "'$alloy' convert '$models/squeezenet1_1.dyn.core.pt2' '$tmp/sq.air' && \
     '$alloy' run '$tmp/sq.air' --inputs '$models/squeezenet1_1.io.safetensors' \
       --check '$models/squeezenet1_1.io.safetensors' --batch 2,3"
else
  echo "the golden models are missing: expected $models (../shared beside the clone): counted as 1 failure"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
