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
check "ops --level aten lists every aten op" test "$(ops_count aten)" -ge 400
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
check "backends shows a refused plugin with its reason" \
  sh -c "printf '%s\n' \"$(row other_major)\" | grep -q 'refused: built for ABI 2.0, this host speaks ABI 1.1'"
check "ALLOY_BACKENDS puts example first, ref stays last" \
  sh -c "ALLOY_BACKENDS=EXAMPLE '$alloy' backends | sed -n '2p;\$p' | awk '{print \$1}' | tr '\n' ' ' | grep -q '^example ref $'"
# The conformance suite on a deliberately broken plugin (tests/plugins/broken.c):
# wrong values on add, a segfault on mul, a hang on neg. Each is reported as a
# failure with its cause, the suite completes, and the exit status says so.
golden=$2
if [ -f "$golden/ops/ops.jsonl" ]; then
  tmp=${TMPDIR:-/tmp}/alloy-cli-$$
  mkdir -p "$tmp"
  broken() { # broken OPS WANT: conform on the broken backend fails, says WANT, completes
    # (Under make asan, ASan would catch the segfault itself and exit: let
    # the signal through, as a plain build sees it.)
    ASAN_OPTIONS="handle_segv=0:${ASAN_OPTIONS:-}" \
    ALLOY_PLUGIN_PATH="$build/tests/plugins" ALLOY_CONFORM_TIMEOUT=1 "$alloy" conform \
      --backend broken --golden "$golden/ops" --ops "$1" --dtype float32 \
      --junit "$tmp/junit.xml" --json "$tmp/cases.jsonl" > "$tmp/out" 2>&1
    status=$?
    [ "$status" -ne 0 ] && grep -q -- "$2" "$tmp/out" && grep -qE '^0 passed, [1-9][0-9]* failed, 0 skipped$' "$tmp/out"
  }
  check "conform reports wrong values on a broken plugin" broken aten.add.Tensor "max abs err 1,"
  check "conform reports a segfault in a plugin and goes on" broken aten.mul.Tensor "crashed: signal 11"
  check "conform reports a hang in a plugin and goes on" broken aten.neg.default "timed out after 1 s"
  # The JUnit file of the last run: well-formed, counts matching the cases.
  check "the JUnit report is well-formed XML" sh -c "! command -v xmllint >/dev/null || xmllint --noout '$tmp/junit.xml'"
  check "the JUnit report counts every case as a failure" sh -c \
    "n=\$(grep -c '<testcase ' '$tmp/junit.xml'); grep -q \"<testsuite name=.* tests=\\\"\$n\\\" failures=\\\"\$n\\\"\" '$tmp/junit.xml' && [ \$(grep -c '<failure message=\"timed out' '$tmp/junit.xml') -eq \$n ]"
  check "the JSON report has one line per case" sh -c \
    "[ \$(wc -l < '$tmp/cases.jsonl') -eq \$(grep -c '<testcase ' '$tmp/junit.xml') ] && grep -q '\"result\":\"failed\"' '$tmp/cases.jsonl'"
  rm -rf "$tmp"
else
  echo "the golden corpus is missing: the broken-plugin checks need $golden/ops: counted as 1 failure"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
