#!/bin/sh
# Hostile files on the command line: what `alloy run` and `alloy convert`
# make of models, inputs, expected outputs and weights that are empty,
# foreign, FIFOs, devices or folders, of .air weights lines that reach out
# of their folder, of --check files whose outputs do not match the model's,
# and of --batch sizes that overflow. Each must be refused (or fail) with
# its reason, promptly (FIFOs once blocked forever), and without quoting
# the bytes of a file it refuses. The fixed files are in tests/hostile/
# (README.md there lists them); FIFOs and links are made here.
# usage: tests/hostile.sh path/to/alloy [GOLDEN_DIR]
alloy=$1
golden=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
corpus=$here/hostile
tmp=${TMPDIR:-/tmp}/alloy-hostile-$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { # ok NAME COMMAND...: the command succeeds
  name=$1
  shift
  if timeout 30 "$@" >"$tmp/out" 2>&1; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name"; tail -n 5 "$tmp/out"; fi
}
refuses() { # refuses NAME WANT COMMAND...: fails within 20 s (not killed), says WANT, quotes no SECRET
  name=$1
  want=$2
  shift 2
  timeout 20 "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then fail=$((fail + 1)); echo "FAIL $name: succeeded"; tail -n 3 "$tmp/out"
  elif [ $rc -eq 124 ] || [ $rc -ge 128 ]; then
    fail=$((fail + 1)); echo "FAIL $name: hung or crashed (status $rc)"; tail -n 3 "$tmp/out"
  elif ! grep -qF -- "$want" "$tmp/out"; then
    fail=$((fail + 1)); echo "FAIL $name: no '$want' in:"; tail -n 3 "$tmp/out"
  elif grep -q SECRET "$tmp/out"; then
    fail=$((fail + 1)); echo "FAIL $name: quotes the file:"; grep SECRET "$tmp/out" | head -n 2
  elif grep -q "all outputs PASS" "$tmp/out"; then
    fail=$((fail + 1)); echo "FAIL $name: says all outputs PASS"
  else pass=$((pass + 1)); fi
}
c=$corpus
io=$c/relu.io.safetensors

# Sanity: the corpus's good model runs and checks.
ok "relu.air passes its own check" "$alloy" run "$c/relu.air" --inputs "$io" --check "$io"
ok "an .air reads weights beside it" "$alloy" run "$c/weights-ok.air" --inputs "$io"

# Formats are told by content.
refuses "an empty model" "empty.air: not a model: empty file" "$alloy" run "$c/empty.air"
refuses "an empty model with --check" "not a model: empty file" \
  "$alloy" run "$c/empty.air" --inputs "$io" --check "$io"
refuses "comments only" "blank.air: not a model: no graph" "$alloy" run "$c/blank.air"
refuses "text that is not .air" "not-air.txt:1:1: not a model: neither a .pt2 archive" \
  "$alloy" run "$c/not-air.txt"
refuses "a binary file" "binary.bin: not a model: a binary file" "$alloy" run "$c/binary.bin"
refuses "an empty ZIP" "empty-zip.pt2: not a model: a ZIP file that does not begin" \
  "$alloy" run "$c/empty-zip.pt2"
refuses "an .air without outputs" "no-output.air: not a model: the graph has no output line" \
  "$alloy" run "$c/no-output.air"

# FIFOs, devices and folders are refused before they are read.
mkfifo "$tmp/fifo.air" "$tmp/fifo.safetensors"
ln -s "$tmp/fifo.air" "$tmp/link-to-fifo.air"
refuses "a FIFO as the model" "fifo.air: not a regular file (a FIFO)" "$alloy" run "$tmp/fifo.air"
refuses "a link to a FIFO as the model" "not a regular file (a FIFO)" \
  "$alloy" run "$tmp/link-to-fifo.air"
refuses "a FIFO as --inputs" "fifo.safetensors: not a regular file (a FIFO)" \
  "$alloy" run "$c/relu.air" --inputs "$tmp/fifo.safetensors"
refuses "a FIFO as --check" "fifo.safetensors: not a regular file (a FIFO)" \
  "$alloy" run "$c/relu.air" --inputs "$io" --check "$tmp/fifo.safetensors"
refuses "a FIFO as convert's model" "not a regular file (a FIFO)" \
  "$alloy" convert "$tmp/fifo.air" "$tmp/out.air"
sed 's|^weights .*|weights "fifo.safetensors"|' "$c/weights-ok.air" >"$tmp/fifo-weights.air"
refuses "a FIFO named by the weights line" "fifo.safetensors: not a regular file (a FIFO)" \
  "$alloy" run "$tmp/fifo-weights.air" --inputs "$io"
refuses "a folder as the model" "not a regular file (a directory)" "$alloy" run "$tmp"
refuses "a device as --inputs" "/dev/zero: not a regular file (a character device)" \
  "$alloy" run "$c/relu.air" --inputs /dev/zero

# The weights line names a file in the .air's folder, and is never quoted.
refuses "an absolute weights path" "the weights path is absolute" \
  "$alloy" run "$c/weights-absolute.air" --inputs "$io"
refuses "a weights path with .." "the weights path leaves the folder (..)" \
  "$alloy" run "$c/weights-dotdot.air" --inputs "$io"
refuses "weights that are not safetensors" "not-air.txt: not a safetensors file (the weights of" \
  "$alloy" run "$c/weights-not-safetensors.air" --inputs "$io"
mkdir -p "$tmp/conv"
refuses "convert with weights outside the .air's folder" "the weights file must be in the folder of" \
  "$alloy" convert "$c/weights-ok.air" "$tmp/conv/m.air" --weights "$tmp/w.safetensors"

# --check: outputs the model does not produce, and outputs the file lacks.
refuses "--check with an output the model lacks" \
  "output3  FAIL: $c/relu.extra-output.safetensors has it, but the model produces 1 user output" \
  "$alloy" run "$c/relu.air" --inputs "$io" --check "$c/relu.extra-output.safetensors"
refuses "--check without an output the model has" "has no tensor output1" \
  "$alloy" run "$c/relu2.air" --inputs "$io" --check "$c/relu2.one-output.safetensors"

# --batch sizes that would overflow the row resize.
refuses "--batch 2^58" "--batch takes sizes like 1,2,7,64, from 0 to" \
  "$alloy" run "$c/relu-dyn.air" --inputs "$io" --batch 288230376151711744
refuses "--batch past int64" "--batch takes sizes like" \
  "$alloy" run "$c/relu-dyn.air" --inputs "$io" --batch 99999999999999999999
refuses "--batch negative" "--batch takes sizes like" \
  "$alloy" run "$c/relu-dyn.air" --inputs "$io" --batch 2,-1
if [ -n "$golden" ] && [ -f "$golden/models/mlp.core.pt2" ]; then
  refuses "the issue's --batch on the golden mlp" "--batch takes sizes like" \
    "$alloy" run "$golden/models/mlp.core.pt2" --inputs "$golden/models/mlp.io.safetensors" \
    --batch 288230376151711744
  # Within the bound but far past memory: refused by the allocation, not a crash.
  refuses "--batch 2^31-1 on the golden mlp" "cannot resize to batch 2147483647" \
    "$alloy" run "$golden/models/mlp.dyn.core.pt2" --inputs "$golden/models/mlp.io.safetensors" \
    --batch 2147483647
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
