#!/bin/sh
# Hostile files on the command line: what `alloy run` and `alloy convert`
# make of models, inputs, expected outputs and weights that are empty,
# foreign, FIFOs, devices or folders, of .air weights lines that reach out
# of their folder, of --check files whose outputs do not match the model's,
# and of --batch sizes that overflow. Each must be refused (or fail) with
# its reason, promptly (FIFOs once blocked forever), and without quoting
# the bytes of a file it refuses. The fixed files are in tests/hostile/
# (README.md there lists them); FIFOs and links are made here.
# Then hostile plugins (tests/hostile_plugins/: one that crashes, one that
# hangs): `alloy run --isolate` must name the backend, how its process
# ended and what it was doing, and exit with a status of its own; and with
# a good plugin (tests/devsim) it must give the bits a run without it gives.
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

# --- Plugins that crash, hang or exit, run with --isolate ---------------------
# Each plugin works in a process of its own; its end is reported, never
# shared. No core files of the children are wanted here.
ulimit -c 0 2>/dev/null
build=$(cd "$(dirname "$alloy")/.." && pwd)
hp=$build/tests/hostile_plugins
tp=$build/tests/plugins
ex=$here/../examples/mlp.air
# Inputs for the example model (input0..input6, batch 4): small floats of
# a fixed pattern, written as safetensors (an 8-byte little-endian header
# length, the JSON header padded to 8 bytes, the data).
mlp_io=$tmp/mlp.io.safetensors
LC_ALL=C awk -v out="$mlp_io" 'BEGIN {
  n = split("3136 200704 256 32768 128 1280 10", cnt, " ")
  split("[4,784] [256,784] [256] [128,256] [128] [10,128] [10]", shp, " ")
  hdr = "{"; off = 0
  for (i = 1; i <= n; i++) {
    hdr = hdr sprintf("%s\"input%d\":{\"dtype\":\"F32\",\"shape\":%s,\"data_offsets\":[%d,%d]}",
                      i > 1 ? "," : "", i - 1, shp[i], off, off + 4 * cnt[i])
    off += 4 * cnt[i]
  }
  hdr = hdr "}"
  while (length(hdr) % 8) hdr = hdr " "
  len = length(hdr)
  for (b = 0; b < 8; b++) { printf "%c", len % 256 > out; len = int(len / 256) }
  printf "%s", hdr > out
  k = 0
  for (i = 1; i <= n; i++)
    for (j = 0; j < cnt[i]; j++) {
      k++
      printf "%c%c%c%c", 1 + k % 251, 1 + k % 241, 1 + k % 127, (k % 3 ? 60 : 188) > out
    }
}'
crashes() { # crashes NAME COMMAND...: the command dies by a signal (the plugin really kills)
  name=$1
  shift
  timeout 20 "$@" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -gt 128 ] && [ $rc -ne 137 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL $name: status $rc, not a signal"; tail -n 3 "$tmp/out"; fi
}
plugins="ALLOY_PLUGIN_PATH=$hp:$tp"
skip="ALLOY_DEVSIM_SKIP=aten.relu*,aten.gelu*"

crashes "without --isolate, crashy takes alloy run down" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends crashy
refuses "--isolate: a plugin that segfaults in execute" \
  "alloy run: backend 'crashy' died (signal 11, SIGSEGV) while executing the model (node 0: aten.relu.default)" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends crashy --isolate
refuses "--isolate: a plugin that segfaults in execute, in a mixture" \
  "alloy run: backend 'crashy' died (signal 11, SIGSEGV) while executing partition 1 (node 2: aten.relu.default)" \
  env "$plugins" "$alloy" run "$ex" --inputs "$mlp_io" --cost-model free --backends crashy,ref --isolate
refuses "--isolate: a plugin that aborts in execute" \
  "backend 'crashy' died (signal 6, SIGABRT) while executing the model" \
  env "$plugins" ALLOY_TEST_CRASH_BY=abort "$alloy" run "$c/relu.air" --inputs "$io" --backends crashy \
  --isolate
refuses "--isolate: a plugin that calls exit() in execute" \
  "backend 'crashy' exited with status 3 while executing the model" \
  env "$plugins" ALLOY_TEST_CRASH_BY=exit "$alloy" run "$c/relu.air" --inputs "$io" --backends crashy \
  --isolate
refuses "--isolate: a plugin that segfaults in compile" \
  "backend 'crashy' died (signal 11, SIGSEGV) while compiling the model (node 0: aten.relu.default)" \
  env "$plugins" ALLOY_TEST_CRASH_IN=compile "$alloy" run "$c/relu.air" --inputs "$io" \
  --backends crashy --isolate
refuses "--isolate: a plugin that segfaults in claim, while planning a mixture" \
  "backend 'crashy' died (signal 11, SIGSEGV) while claiming and compiling, planning the partitions over" \
  env "$plugins" ALLOY_TEST_CRASH_IN=claim "$alloy" run "$ex" --inputs "$mlp_io" --cost-model free \
  --backends crashy,ref --isolate
refuses "--isolate: a plugin that aborts when opened" \
  "backend 'crash_open' died (signal 6, SIGABRT) while opening" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends crash_open --isolate
refuses "--isolate: a plugin that hangs in execute" \
  "backend 'hang' did not finish executing the model (node 0: aten.relu.default) within 2 s (--isolate-timeout)" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends hang --isolate --isolate-timeout 2
refuses "--isolate: a plugin that hangs in execute, in a mixture" \
  "backend 'hang' did not finish executing partition 1 (node 2: aten.relu.default) within 2 s" \
  env "$plugins" "$alloy" run "$ex" --inputs "$mlp_io" --cost-model free --backends hang,ref --isolate \
  --isolate-timeout 2
refuses "--isolate: a plugin that hangs in compile" \
  "backend 'hang' did not finish compiling the model (node 0: aten.relu.default) within 2 s" \
  env "$plugins" ALLOY_TEST_HANG_IN=compile "$alloy" run "$c/relu.air" --inputs "$io" --backends hang \
  --isolate --isolate-timeout 2
refuses "--isolate: a plugin that hangs in compile, while planning a mixture" \
  "backend 'hang' did not finish claiming and compiling, planning the partitions over hang,ref within 2 s" \
  env "$plugins" ALLOY_TEST_HANG_IN=compile "$alloy" run "$ex" --inputs "$mlp_io" --cost-model free \
  --backends hang,ref --isolate --isolate-timeout 2
refuses "--isolate with --trace" "--trace cannot be combined with --isolate" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends devsim --isolate --trace "$tmp/t.json"
refuses "--isolate-timeout 0" "--isolate-timeout takes seconds, more than 0" \
  env "$plugins" "$alloy" run "$c/relu.air" --inputs "$io" --backends devsim --isolate --isolate-timeout 0

# A good plugin gives the same bits isolated or not: devsim alone, and
# devsim beside ref with relu and gelu left to ref (five partitions, two
# of them run by alloy itself), checked against the reference backend.
ok "the example model on ref" "$alloy" run "$ex" --inputs "$mlp_io" --outputs "$tmp/mlp.ref.safetensors"
for list in devsim devsim,ref; do
  ok "the example model on $list" env "$plugins" "$skip" "$alloy" run "$ex" --inputs "$mlp_io" \
    --cost-model free --backends $list --outputs "$tmp/plain.safetensors"
  ok "the example model on $list, --isolate --check" env "$plugins" "$skip" "$alloy" run "$ex" \
    --inputs "$mlp_io" --cost-model free --backends $list --isolate --check "$tmp/mlp.ref.safetensors" \
    --repeat 2 --stats --outputs "$tmp/isolated.safetensors"
  cp "$tmp/out" "$tmp/isolated.log"
  ok "the example model on $list: the same bits with --isolate" \
    cmp "$tmp/plain.safetensors" "$tmp/isolated.safetensors"
done
# (The last log is of devsim,ref.)
ok "the mixture ran ref's partitions here" grep -q '#1   ref .* here$' "$tmp/isolated.log"
ok "and devsim's in its process" grep -q '#0   devsim .* in its own process$' "$tmp/isolated.log"
if [ -n "$golden" ] && [ -f "$golden/models/mlp.dyn.core.pt2" ]; then
  # Weights: copied to the plugin's process once (the second run moves
  # none), and folded ones reach it; sizes: one plan per --batch size.
  gio=$golden/models/mlp.io.safetensors
  ok "golden mlp on devsim --isolate --repeat 2" env "$plugins" "$alloy" run \
    "$golden/models/mlp.core.pt2" --inputs "$gio" --check "$gio" --backends devsim --isolate \
    --repeat 2 --stats
  grep -A1 '^  run 2' "$tmp/out" >"$tmp/run2.log"
  ok "golden mlp on devsim --isolate: weights copied once" grep -q 'weights in 0 B' "$tmp/run2.log"
  for list in devsim devsim,ref; do
    ok "golden dynamic mlp on $list --batch 1,3" env "$plugins" ALLOY_DEVSIM_SKIP='aten.relu*' \
      "$alloy" run "$golden/models/mlp.dyn.core.pt2" --inputs "$gio" --cost-model free \
      --backends $list --batch 1,3 --outputs "$tmp/plain.safetensors"
    ok "golden dynamic mlp on $list --batch 1,3 --isolate --check" env "$plugins" \
      ALLOY_DEVSIM_SKIP='aten.relu*' "$alloy" run "$golden/models/mlp.dyn.core.pt2" --inputs "$gio" \
      --cost-model free --backends $list --batch 1,3 --isolate --check "$gio" \
      --outputs "$tmp/isolated.safetensors"
    ok "golden dynamic mlp on $list: the same bits with --isolate" \
      cmp "$tmp/plain.safetensors" "$tmp/isolated.safetensors"
  done
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
