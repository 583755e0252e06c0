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
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
