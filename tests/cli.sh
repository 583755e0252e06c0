#!/bin/sh
# Command-line contract tests: what scripts and CI rely on.
# usage: tests/cli.sh path/to/alloy GOLDEN_DIR
alloy=$1
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
check "backends shows a refused plugin with its reason" \
  sh -c "printf '%s\n' \"$(row other_major)\" | grep -q 'refused: built for ABI 2.0, this host speaks ABI 1.2'"
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
check "the JUnit report counts every hang as a failure" sh -c \
  "n=\$(grep -c '<testcase ' '$tmp/junit.xml'); f=\$(grep -c '<failure message=\"timed out' '$tmp/junit.xml'); [ \$n -gt 0 ] && grep -q \"<testsuite name=.* tests=\\\"\$n\\\" failures=\\\"\$f\\\"\" '$tmp/junit.xml'"
check "the JSON report has one line per case" sh -c \
  "[ \$(wc -l < '$tmp/cases.jsonl') -eq \$(grep -c '<testcase ' '$tmp/junit.xml') ] && grep -q '\"result\":\"failed\"' '$tmp/cases.jsonl'"
# The plugin-ABI tests (conformance/abi.c) call the plugin table directly:
# copies, queues, events, the optional 1.2 entries, and, with entry counting
# on, a check that every required entry was exercised.
check "conform --only abi passes every ABI test on ref" sh -c \
  "'$alloy' conform --backend ref --only abi | grep -qE '^6 passed, 0 failed, 0 skipped$'"
check "conform --only abi passes on the simulated device devsim" sh -c \
  "ALLOY_PLUGIN_PATH='$build/tests/plugins' '$alloy' conform --backend devsim --only abi | \
     grep -qE '^[1-9][0-9]* passed, 0 failed, [0-9]+ skipped$'"
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
  '^abi 5 abi.entries .*: required entries never exercised: compile, execute, executable_release'
# Levels, the summary table and --perf on the example plugin.
"$alloy" conform --backend example --only samples --ops 'aten.mm.default' --perf \
  --summary "$tmp/summary.md" > "$tmp/out" 2>&1
check "conform on example reaches the claimed level" grep -q '^  claimed    reached' "$tmp/out"
check "conform on example does not reach core-aten with mm alone" grep -q '^  core-aten  not reached' "$tmp/out"
check "conform --perf prints GB/s and GFLOP/s" grep -qE '^aten.mm.default +float32 +[0-9.]+ +[0-9.]+' "$tmp/out"
check "conform --summary writes the op and dtype table" grep -qE '^\| aten.mm.default \| float32 \| [1-9]' "$tmp/summary.md"
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
