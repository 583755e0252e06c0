#!/bin/sh
# Command-line contract tests: what scripts and CI rely on.
# usage: tests/cli.sh path/to/alloy GOLDEN_DIR
alloy=$1
golden=${2:-../shared/golden}
pass=0
fail=0
check() { # check NAME COMMAND...: the command must succeed
  name=$1
  shift
  if "$@" >/dev/null 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name"; fi
}
ops_count() { "$alloy" ops --level "$1" | tail -n 1 | sed 's/ ops$//'; }

check "ops --level core lists 193 ops" test "$(ops_count core)" -eq 193
check "ops --level prims lists at least 126 ops" test "$(ops_count prims)" -ge 126
check "ops --level aten lists every aten op" test "$(ops_count aten)" -ge 3852
check "ops --coverage holds its floor" "$alloy" ops --coverage --floor tests/coverage_floor.txt
check "ops rejects an unknown level" sh -c "! '$alloy' ops --level nope"
check "check accepts the bundled example" "$alloy" check examples/mlp.air
check "check rejects a missing file" sh -c "! '$alloy' check /nonexistent.air"
check "conform needs --backend" sh -c "! '$alloy' conform"
check "conform reports a missing corpus" sh -c "'$alloy' conform --backend meta --golden /nonexistent 2>&1 | grep -q missing"
check "unknown command fails" sh -c "! '$alloy' frobnicate"

# alloy backends: found beside the program, and on ALLOY_PLUGIN_PATH.
build=$(dirname "$(dirname "$alloy")")
backends=$(ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" backends 2>&1)
row() { printf '%s\n' "$backends" | grep -E "^$1 "; }
check "backends lists ref, ok" sh -c "printf '%s\n' \"$(row ref)\" | grep -q ' ok '"
check "backends lists example, ok" sh -c "printf '%s\n' \"$(row example)\" | grep -q ' ok '"
# The cuda backend (when the toolkit's headers let it build) loads on any
# machine: with a GPU it lists the card, without one "no device" and why.
if [ -f "$build/lib/alloy/liballoy-cuda.so" ]; then
  check "backends lists cuda: its GPU, or no device with the reason" \
    sh -c "printf '%s\n' \"$(row cuda)\" | grep -Eq '\(gpu\) +ok|no device: [a-z]'"
else
  echo "skipped: backends lists cuda (not built: no CUDA headers)"
fi
# So does the hip backend, the same sources built against HIP's headers:
# without an AMD GPU, "no device" and the HIP runtime's reason.
if [ -f "$build/lib/alloy/liballoy-hip.so" ]; then
  check "backends lists hip: its GPU, or no device with the HIP runtime's reason" \
    sh -c "printf '%s\n' \"$(row hip)\" | grep -Eq '\(gpu\) +ok|no device: (hipInit|libamdhip64)'"
else
  echo "skipped: backends lists hip (not built: no HIP headers)"
fi
check "backends shows a refused plugin with its reason" \
  sh -c "printf '%s\n' \"$(row other_major)\" | grep -q 'refused: built for ABI 2.0, this host speaks ABI 1.3'"
# Kernel tables (issue 21): a misspelled op refuses the plugin at load,
# naming the row and the nearest op; a table may name its device.
check "backends refuses a kernel table with a misspelled op, naming the row and the nearest op" \
  sh -c "printf '%s\n' \"$(row kt_typo)\" | grep -q 'refused: .*kernel table kt_typo is wrong: row 1 (aten.relu.defualt): .*the nearest is aten.relu.default'"
check "backends lists the device a kernel table names" \
  sh -c "printf '%s\n' \"$(row kt_device)\" | grep -q ' npu0 (accelerator) *ok '"
check "conform on a kernel table with a misspelled op fails at once with the reason" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend kt_typo --only samples > '$build/kt_typo.out' 2>&1; \
   [ \$? -eq 2 ] && grep -q 'the nearest is aten.relu.default' '$build/kt_typo.out' && ! grep -q 'tests on' '$build/kt_typo.out'; \
   s=\$?; rm -f '$build/kt_typo.out'; exit \$s"
check "ALLOY_BACKENDS puts example first, ref stays last" \
  sh -c "ALLOY_BACKENDS=EXAMPLE '$alloy' backends | sed -n '2p;\$p' | awk '{print \$1}' | tr '\n' ' ' | grep -q '^example ref $'"
# The conformance suite on a deliberately broken plugin (tests/plugins/broken.c):
# wrong values on add, a segfault on mul, a hang on neg. Each is reported as a
# failure with its cause, the suite completes, and the exit status says so.
# The generated samples need no corpus.
tmp=${TMPDIR:-/tmp}/alloy-cli-$$
mkdir -p "$tmp"
broken() { # broken OPS WANT [ARGS]: conform on the broken backend fails, says WANT, completes
  ops=$1 want=$2
  shift 2
  # (Under make asan, ASan would catch the segfault itself and exit: let
  # the signal through, as a plain build sees it.)
  ASAN_OPTIONS="handle_segv=0:${ASAN_OPTIONS:-}" \
  ALLOY_PLUGIN_PATH="$build/tests/plugins" ALLOY_CONFORM_TIMEOUT=1 "$alloy" conform \
    --backend broken --only samples --ops "$ops" --dtype float32 \
    --junit "$tmp/junit.xml" --json "$tmp/cases.jsonl" "$@" > "$tmp/out" 2>&1
  status=$?
  [ "$status" -eq 1 ] && grep -q -- "$want" "$tmp/out" &&
    grep -qE '^[0-9]+ passed, [1-9][0-9]* failed, [0-9]+ skipped$' "$tmp/out"
}
check "conform reports wrong values on a broken plugin" broken aten.add.Tensor "max abs err 1,"
check "conform writes a repro of a failure" broken aten.add.Tensor "repro: $tmp/repro/" --repro-dir "$tmp/repro"
repro=$(ls "$tmp"/repro/*.air 2>/dev/null | head -n 1)
check "a repro replays the failure on the broken plugin" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend broken --replay '$repro' | grep -qE '^0 passed, 1 failed, 0 skipped'"
check "a repro passes on ref" sh -c "'$alloy' conform --backend ref --replay '$repro' | grep -qE '^1 passed, 0 failed'"
# A failure line's rerun arguments reproduce exactly that failure.
first=$(grep -m1 '^samples [0-9]* aten.add.Tensor' "$tmp/out")
rerun=$(printf '%s\n' "$first" | sed -n 's/.*(rerun: \(.*\))$/\1/p')
msg=$(printf '%s\n' "$first" | sed 's/  (rerun: .*//; s/ \[repro: [^]]*\]//')
check "a failure's rerun line runs that one sample and fails the same way" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend broken $rerun > '$tmp/rerun' 2>&1; \
   grep -qE '^0 passed, 1 failed, 0 skipped' '$tmp/rerun' && grep -qF -- '$msg' '$tmp/rerun'"
# A golden failure's rerun names the corpus folder given, not a placeholder.
if [ -f "$golden/ops/ops.jsonl" ]; then
  ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform --backend broken --only golden --golden "$golden" \
    --ops aten.add.Tensor > "$tmp/gold" 2>&1
  grerun=$(grep -m1 '^golden [0-9]* aten.add.Tensor' "$tmp/gold" | sed -n 's/.*(rerun: \(.*\))$/\1/p')
  check "a golden failure's rerun line names the corpus and fails again" sh -c \
    "case \"$grerun\" in *DIR*|'') exit 1;; esac; ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform \
     --backend broken $grerun > '$tmp/grerun' 2>&1; grep -qE '^0 passed, [1-9][0-9]* failed' '$tmp/grerun'"
else
  echo "skipped: a golden failure's rerun line (no golden corpus at $golden)"
fi
# The same words listed as a known failure: expected, so the run succeeds.
printf '%s  # wrong on purpose\n' "$(printf '%s\n' "$first" | cut -d' ' -f1-3)" > "$tmp/known.txt"
check "a sample listed in --known-failures is expected to fail" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend broken $rerun \
     --known-failures '$tmp/known.txt' > '$tmp/known' 2>&1 && grep -q '^1 known failures' '$tmp/known'"
check "--repro-all writes a replayable repro of every sample, passed ones too" sh -c \
  "'$alloy' conform --backend ref --only samples --ops aten.sub.Tensor --dtype float32 \
     --repro-dir '$tmp/all' --repro-all > '$tmp/all.out' && \
   n=\$(sed -n 's/^\\([0-9]*\\) passed, 0 failed.*/\\1/p' '$tmp/all.out') && \
   [ \"\$n\" -gt 0 ] && [ \$(ls '$tmp'/all/*.air | wc -l) -eq \"\$n\" ] && \
   '$alloy' conform --backend ref --replay \$(ls '$tmp'/all/*.air | head -n 1) | grep -q '^1 passed'"
check "-j2 gives the same totals as one worker" sh -c \
  "a=\$('$alloy' conform --backend ref --only samples --ops 'aten.sub.Tensor' | tail -n 1); \
   b=\$('$alloy' conform --backend ref --only samples --ops 'aten.sub.Tensor' -j2 | tail -n 1); [ \"\$a\" = \"\$b\" ] && [ -n \"\$a\" ]"
check "conform reports a segfault in a plugin and goes on" broken aten.mul.Tensor "crashed: signal 11" -j2
check "conform reports a hang in a plugin and goes on" broken aten.neg.default "timed out after 1 s"
check "conform compares only dtype and shape of empty's undefined values" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend broken --only samples \
     --ops aten.empty.memory_format --dtype float32 | grep -qE '^[1-9][0-9]* passed, 0 failed, 0 skipped'"
# The JUnit file of the last run: well-formed, counts matching the cases.
check "the JUnit report is well-formed XML" sh -c "! command -v xmllint >/dev/null || xmllint --noout '$tmp/junit.xml'"
# Its header counts every test, the skipped ones too (which it lists by
# reason, not one element each: see the JUnit checks further down).
total=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$tmp/out" | awk '{print $1 + $2 + $3}')
check "the JUnit report counts every hang as a failure" sh -c \
  "f=\$(grep -c '<failure message=\"timed out' '$tmp/junit.xml'); [ \$f -gt 0 ] && [ -n '$total' ] && \
   grep -q \"<testsuite name=.* tests=\\\"$total\\\" failures=\\\"\$f\\\"\" '$tmp/junit.xml'"
check "the JSON report has one line per case" sh -c \
  "[ \$(wc -l < '$tmp/cases.jsonl') -eq '$total' ] && grep -q '\"result\":\"failed\"' '$tmp/cases.jsonl'"
# The failure report (issue 21). A crash or a hang leaves a repro too: a
# fresh process reruns the test on ref alone to write the graph, its inputs
# and ref's outputs, and the failure line names the file, which crashes the
# plugin again when replayed.
crash_repro() {
  rm -rf "$tmp/crash"
  ASAN_OPTIONS="handle_segv=0:${ASAN_OPTIONS:-}" ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform \
    --backend broken --only samples --ops aten.mul.Tensor --dtype float32 --sample 0 \
    --repro-dir "$tmp/crash" > "$tmp/crash.out" 2>&1
  [ $? -eq 1 ] || return 1
  f=$(sed -n 's/^samples 0 aten.mul.Tensor \[float32\]: crashed: signal 11 .* \[repro: \(.*\.air\)\]  (rerun: .*)$/\1/p' "$tmp/crash.out")
  [ "$f" = "$tmp/crash/samples-aten.mul.Tensor-0-float32.air" ] && [ -f "$f" ] &&
    [ -f "${f%.air}.safetensors" ] && grep -qx '# failed: crashed: signal 11 (Segmentation fault)' "$f" &&
    ASAN_OPTIONS="handle_segv=0:${ASAN_OPTIONS:-}" ALLOY_PLUGIN_PATH="$build/tests/plugins" \
      "$alloy" conform --backend broken --replay "$f" > "$tmp/crash.replay" 2>&1
  [ $? -eq 1 ] && grep -q '^replay 0 aten.mul.Tensor \[float32, replay\]: crashed: signal 11' "$tmp/crash.replay" &&
    "$alloy" conform --backend ref --replay "$f" | grep -qx '1 passed, 0 failed, 0 skipped'
}
check "a crash writes a repro, names it, and the repro crashes the plugin again (and passes on ref)" crash_repro
check "a hang writes a repro and names it" sh -c \
  "rm -rf '$tmp/hang'; ALLOY_PLUGIN_PATH='$build/tests/plugins' ALLOY_CONFORM_TIMEOUT=1 '$alloy' conform --backend broken \
     --only samples --ops aten.neg.default --dtype float32 --sample 0 --repro-dir '$tmp/hang' 2>&1 | \
   grep -qF 'timed out after 1 s (the worker was killed) [repro: $tmp/hang/samples-aten.neg.default-0-float32.air]' && \
   grep -qx '# failed: timed out after 1 s (the worker was killed)' '$tmp/hang/samples-aten.neg.default-0-float32.air'"
# A wrong graph result is pinned to its first diverging node. The plugin
# tests/plugins/quick_gelu.c is exact on relu and add and wrong on gelu;
# beside ref, graph.pointwise_sum runs mul on ref, then its add (right) and
# its gelu (wrong), then sum on ref: the third node of four is the one.
pinned() { # pinned TEST NODE WANT [ARGS]: the failure of TEST names NODE; its repro is one node that fails again
  test=$1 node=$2 want=$3
  shift 3
  rm -rf "$tmp/pin"
  ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform --backend quick_gelu --only graphs --ops "$test" \
    --repro-dir "$tmp/pin" "$@" > "$tmp/pin.out" 2>&1
  [ $? -eq 1 ] || return 1
  line=$(grep "^graphs [0-9]* $test \[float32, beside ref[],]" "$tmp/pin.out")
  printf '%s\n' "$line" | grep -qF "; first diverging node: $want: given ref's inputs, max abs err" || return 1
  f=$(printf '%s\n' "$line" | sed -n 's/.* \[node repro: \([^]]*\.air\)\].*/\1/p')
  [ -f "$f" ] && [ "$(grep -c '^%.* = ' "$f")" -eq 1 ] && grep -q "^%$node = aten.gelu.default(" "$f" &&
    grep -q "^# alloy conform repro: .* beside ref$" "$f" || return 1
  ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform --backend quick_gelu --replay "$f" > "$tmp/pin.replay" 2>&1
  [ $? -eq 1 ] && grep -q '^replay 0 aten.gelu.default \[float32, replay\]: max abs err' "$tmp/pin.replay" &&
    "$alloy" conform --backend ref --replay "$f" | grep -qx '1 passed, 0 failed, 0 skipped'
}
check "a graph test's wrong result is pinned to its first diverging node, whose repro fails alone" \
  pinned graph.pointwise_sum gelu "3 of 4, aten.gelu.default %gelu"
check "a graph with a symbolic batch is pinned at the size it failed" \
  pinned graph.dyn.mlp g "3 of 10, aten.gelu.default %g"
if [ -d "$golden/models" ]; then
  check "a golden model's mismatch is pinned to its first diverging node (mlp: relu right, gelu wrong)" \
    pinned model.mlp.core gelu "3 of 9, aten.gelu.default %gelu" --golden "$golden"
else
  echo "skipped: a golden model's mismatch is pinned (no golden corpus at $golden)"
fi
# Replay labels its line with the repro's dtype, never "[, replay]".
check "replay prints the repro's dtype and no stray comma" sh -c \
  "grep -q '^replay 0 aten.gelu.default \[float32, replay\]' '$tmp/pin.replay' && ! grep -q '\[, ' '$tmp/pin.replay'"
# Golden cases report their tensors' dtypes (OpInfo's label is not one:
# case 538 is a view of int64 indices in a float32 sample).
if [ -f "$golden/ops/ops.jsonl" ]; then
  check "a golden case reports its tensors' dtype, not OpInfo's label" sh -c \
    "grep -q '\"id\": 538, \"op\": \"aten.view.default\", .*\"dtype\": \"float32\"' '$golden/ops/ops.jsonl' && \
     '$alloy' conform --backend ref --only golden --golden '$golden' --ops aten.view.default --dtype int64 \
       --json '$tmp/golden.jsonl' > /dev/null && grep -q '\"id\":538,\"op\":\"aten.view.default\",\"dtype\":\"int64\"' '$tmp/golden.jsonl'"
  check "a golden case whose output has another dtype says so" sh -c \
    "'$alloy' conform --backend ref --only golden --golden '$golden' --ops aten.acos.default -v | \
       grep -qx 'golden 7 aten.acos.default \[int64, out float32\]: ok'"
else
  echo "skipped: golden cases report their tensors' dtypes (no golden corpus at $golden)"
fi
# JUnit: a testcase with its time per test that ran; the skipped ones, by
# far the most on a backend that claims a few ops, one element per reason.
"$alloy" conform --backend example --only samples --ops 'aten.m*' -j2 --junit "$tmp/ex.xml" > "$tmp/ex.out" 2>&1
junit_small() {
  set -- $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$tmp/ex.out")
  p=$1 f=$2 sk=$3
  groups=$(grep -c '^skipped [0-9]*: ' "$tmp/ex.out")
  cases=$(grep -c '<testcase ' "$tmp/ex.xml")
  timed=$(grep -c '<testcase [^>]* time="[0-9]*\.[0-9]*"' "$tmp/ex.xml")
  counted=$(sed -n 's/.*<skipped message="\([0-9]*\) tests skipped: .*/\1/p' "$tmp/ex.xml" | awk '{s += $1} END {print s + 0}')
  [ "$sk" -gt 1000 ] && [ "$p" -gt 0 ] && [ "$groups" -ge 1 ] && [ "$cases" -eq $((p + f + groups)) ] &&
    [ "$timed" -eq "$cases" ] && [ "$counted" -eq "$sk" ] &&
    grep -q "<testsuite name=.* tests=\"$((p + f + sk))\" failures=\"$f\" errors=\"0\" skipped=\"$sk\" time=\"" "$tmp/ex.xml" &&
    [ "$(wc -c < "$tmp/ex.xml")" -lt $((200 * (p + f + groups) + 1000)) ]
}
check "JUnit: one timed testcase per test that ran, one per reason for the skipped ones" junit_small
check "JUnit: the summarized file is well-formed XML" sh -c "! command -v xmllint >/dev/null || xmllint --noout '$tmp/ex.xml'"
# Test ids and what they name do not depend on --seed (only the values do),
# so a known-failures list or a CI history stays valid across seeds.
seed_ids() { "$alloy" conform --backend ref --only samples --ops 'aten.fmod.Tensor' --seed "$1" -v 2>/dev/null |
  grep '^samples [0-9]* ' | sed 's/\]: .*/]/' | sort; }
seed_stable() {
  seed_ids 0 > "$tmp/seed0" && seed_ids 99 > "$tmp/seed99" && [ "$(wc -l < "$tmp/seed0")" -gt 50 ] &&
    cmp -s "$tmp/seed0" "$tmp/seed99" && [ "$(grep -c 'int32' "$tmp/seed0")" -gt 0 ]
}
check "test ids name the same sample for every --seed" seed_stable
# A sum of products whose sum of |terms| overflows float32 has no bound: a
# backend summing in float32 meets inf - inf (NaN) where ref's double sum
# rounds to inf, and equal infinities differ by NaN. Both failed the
# example's matmul sample 5 of seed 12345, found by the seed check above.
check "a contraction whose terms overflow float32 passes: equal infinities, NaN past the bound" sh -c \
  "'$alloy' conform --backend example --only samples --ops aten.matmul.default --sample 5 --seed 12345 | \
     grep -qx '1 passed, 0 failed, 0 skipped'"

# The plugin-ABI tests (conformance/abi.c) call the plugin table directly:
# copies, queues, events, the optional 1.2 entries, and, with entry counting
# on, a check that every required entry was exercised; ref, a kernel table,
# has no streams of a caller's (queue_import, 1.3): that one test skips.
check "conform --only abi passes every ABI test on ref" sh -c \
  "'$alloy' conform --backend ref --only abi | grep -qE '^6 passed, 0 failed, 1 skipped$'"
check "conform --only abi passes on the simulated device devsim" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only abi | \
     grep -qE '^[1-9][0-9]* passed, 0 failed, [0-9]+ skipped$'"
# --backend-opt sets an option of the backend under test (devsim takes
# "seed"); a known failure "unless KEY=VALUE" is dropped when the run passes
# that option: listed without it, relu's sample 0 passes and fails the run
# as a stale entry; with it, the entry is gone and the run passes.
printf 'samples 0 aten.relu.default  unless seed=7  # a failure only without seed=7\n' > "$tmp/kf-unless"
printf 'samples 0 aten.relu.default  unless\n' > "$tmp/kf-bad"
check "conform --backend-opt of an unknown key is refused, naming it" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only samples --ops aten.relu.default \
     --backend-opt nosuch=1 2>&1 | grep -q 'devsim has no option \"nosuch\"'"
check "a known failure 'unless seed=7' holds without the option (a stale entry fails the run)" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only samples --ops aten.relu.default \
     --known-failures '$tmp/kf-unless' > '$tmp/kfo' 2>&1; test \$? -eq 1 && grep -q 'passes but is listed' '$tmp/kfo'"
check "a known failure 'unless seed=7' is dropped with --backend-opt seed=7" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only samples --ops aten.relu.default \
     --known-failures '$tmp/kf-unless' --backend-opt seed=7 | grep -qE '^89 passed, 0 failed, 0 skipped$'"
check "a malformed 'unless' entry is a usage error naming the file and line" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only samples --ops aten.relu.default \
     --known-failures '$tmp/kf-bad' > '$tmp/kfb' 2>&1; test \$? -eq 2 && grep -q 'kf-bad:1: expected' '$tmp/kfb'"
# tests/plugins/bad_copy.c: its buffer_copy ignores the source offset, and it
# claims none of the graphs abi.entries runs.
abi_bad() { # abi_bad PATTERN: conform --only abi fails bad_copy and prints PATTERN
  ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform --backend bad_copy --only abi \
    > "$tmp/abi" 2>&1
  [ $? -eq 1 ] && grep -q -- "$1" "$tmp/abi" &&
    grep -qE '^[0-9]+ passed, [1-9][0-9]* failed, [0-9]+ skipped$' "$tmp/abi"
}
check "conform --only abi fails a plugin whose buffer_copy is wrong, naming it" abi_bad \
  '^abi 0 abi.buffers .*: buffer_copy (queue NULL, 1000 bytes from offset 64 to offset 128) is wrong'
check "conform --only abi fails a backend whose required entries were never exercised" abi_bad \
  '^abi 6 abi.entries .*: required entries never exercised: compile, execute, executable_release'
# Levels, the summary table and --perf on the example plugin.
"$alloy" conform --backend example --only samples --ops 'aten.mm.default' --perf \
  --summary "$tmp/summary.md" > "$tmp/out" 2>&1
check "conform on example reaches the claimed level" grep -q '^  claimed    reached' "$tmp/out"
check "conform on example does not reach core-aten with mm alone" grep -q '^  core-aten  not reached' "$tmp/out"
check "conform --perf prints GB/s and GFLOP/s" grep -qE '^aten.mm.default +float32 +[0-9.]+ +[0-9.]+' "$tmp/out"
check "conform --summary writes the op and dtype table" grep -qE '^\| aten.mm.default \| float32 \| [1-9]' "$tmp/summary.md"
# The command line explains itself (issue 21): --version, help for every
# command (naming the environment variables that apply), bad flags named,
# a missing backend, a file that is not a model and a model run without its
# inputs each said plainly, with exit status 2.
check "--version prints the version and the plugin ABI" sh -c \
  "'$alloy' --version | grep -qE '^alloy [0-9]+\.[0-9]+\.[0-9]+ \(plugin ABI [0-9]+\.[0-9]+\)$'"
check "help lists every command" sh -c \
  "'$alloy' help > '$tmp/help' && for c in backends ops check run convert partition conform; do \
     grep -q \"^  \$c \" '$tmp/help' || exit 1; done"
for cmd in backends ops check run convert partition conform help; do
  check "alloy help $cmd and alloy $cmd --help print its usage" sh -c \
    "'$alloy' help $cmd > '$tmp/h1' && '$alloy' $cmd --help > '$tmp/h2' && cmp -s '$tmp/h1' '$tmp/h2' && \
     grep -q '^usage: alloy $cmd' '$tmp/h1' && grep -q '^exit status: 0' '$tmp/h1'"
done
for cmd in backends run partition conform; do
  check "alloy help $cmd names the environment variables" sh -c \
    "'$alloy' help $cmd > '$tmp/h3' && for v in ALLOY_PLUGIN_PATH ALLOY_BACKENDS ALLOY_LOG; do \
       grep -q \"^  \$v \" '$tmp/h3' || exit 1; done"
done
for cmd in run conform; do
  check "alloy help $cmd names ALLOY_CACHE_DIR and ALLOY_REF_SEED" sh -c \
    "'$alloy' help $cmd | grep -q '^  ALLOY_CACHE_DIR ' && '$alloy' help $cmd | grep -q '^  ALLOY_REF_SEED '"
done
check "alloy help conform names ALLOY_CONFORM_TIMEOUT" sh -c "'$alloy' help conform | grep -q '^  ALLOY_CONFORM_TIMEOUT '"
check "alloy run MODEL -h is help too" sh -c "'$alloy' run examples/mlp.air -h | grep -q '^usage: alloy run'"
check "alloy help of no such command fails" sh -c "'$alloy' help frobnicate 2>&1 | grep -q \"no command 'frobnicate'\"; [ \$? -eq 0 ] && ! '$alloy' help frobnicate 2>/dev/null"
for cmd in backends ops check run convert partition conform; do
  check "docs/man/alloy-$cmd.1 names every flag of alloy help $cmd" sh -c \
    "[ -f docs/man/alloy-$cmd.1 ] && for f in \$('$alloy' help $cmd | grep -oE -- '--[a-z][a-z-]*' | sort -u); do \
       sed 's/\\\\-/-/g' docs/man/alloy-$cmd.1 | grep -q -- \"\$f\" || { echo \"no \$f\"; exit 1; }; done"
done
bad_flag() { # bad_flag CMD ARGS...: exit 2 and "alloy CMD: unknown option '--foo' (see alloy help CMD)"
  cmd=$1
  shift
  "$alloy" "$cmd" "$@" --foo > "$tmp/bad" 2>&1
  [ $? -eq 2 ] && grep -qxF "alloy $cmd: unknown option '--foo' (see alloy help $cmd)" "$tmp/bad"
}
check "a bad flag of backends is named" bad_flag backends
check "a bad flag of ops is named" bad_flag ops
check "a bad flag of check is named" bad_flag check examples/mlp.air
check "a bad flag of run is named" bad_flag run examples/mlp.air
check "a bad flag of convert is named" bad_flag convert examples/mlp.air "$tmp/x.air"
check "a bad flag of partition is named" bad_flag partition examples/mlp.air --backends example
check "a bad flag of conform is named" bad_flag conform --backend ref
check "a flag without its value says so" sh -c \
  "'$alloy' run examples/mlp.air --inputs 2>&1 | grep -qxF 'alloy run: --inputs needs a value (see alloy help run)'"
check "conform --backend nosuch fails at once, naming it and the available ones" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend nosuch > '$tmp/nosuch' 2>&1; [ \$? -eq 2 ] && \
   grep -q \"^alloy conform: no backend 'nosuch'; available: ref, meta, .*example\" '$tmp/nosuch' && \
   ! grep -q 'tests on' '$tmp/nosuch' && [ \$(wc -l < '$tmp/nosuch') -eq 1 ]"
check "conform on a refused plugin says why before any test" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend other_major > '$tmp/refused' 2>&1; [ \$? -eq 2 ] && \
   grep -q 'built for ABI 2.0' '$tmp/refused' && ! grep -q 'tests on' '$tmp/refused'"
check "check README.md says it is not a model" sh -c \
  "'$alloy' check README.md > '$tmp/readme' 2>&1; [ \$? -eq 2 ] && \
   grep -qxF 'alloy check: README.md is not a model: neither a .pt2 archive (ZIP) nor .air text (see alloy help check)' '$tmp/readme'"
check "run without --inputs lists the model's inputs" sh -c \
  "'$alloy' run tests/hostile/relu.air > '$tmp/noin' 2>&1; [ \$? -eq 2 ] && \
   grep -qF 'alloy run: tests/hostile/relu.air takes 1 input (input0: f32[4]): pass --inputs FILE.safetensors' '$tmp/noin' && \
   '$alloy' run examples/mlp.air 2>&1 | grep -qF 'takes 7 inputs (input0: f32[s0, 784], input1: f32[256, 784], '"
# stdout and stderr to one file: the progress lines (every tenth of a run of
# 1,000 tests or more) stay whole lines, and failure lines come out as they
# happen, not all at the end.
ALLOY_PLUGIN_PATH="$build/tests/plugins" "$alloy" conform --backend broken --only samples --ops 'aten.a*' \
  --dtype float32 -j2 > "$tmp/shared" 2>&1
check "the progress line never splices into a failure line" sh -c \
  "n=\$(grep -c 'conform: [0-9]*%' '$tmp/shared'); [ \$n -gt 0 ] && \
   [ \$n -eq \$(grep -c '^conform: [0-9]*% ([0-9]* of [0-9]* tests), [0-9]* failed, about [0-9]* s left$' '$tmp/shared') ] && \
   [ \$(grep -c '^samples [0-9]* aten' '$tmp/shared') -eq \$(grep -c '^samples [0-9]* aten.*(rerun: .*)$' '$tmp/shared') ] && \
   first=\$(grep -n '^samples [0-9]* aten' '$tmp/shared' | head -n 1 | cut -d: -f1) && \
   last=\$(grep -n '^conform: 100%' '$tmp/shared' | cut -d: -f1) && [ -n \"\$first\" ] && [ \"\$first\" -lt \"\$last\" ]"
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
