#!/bin/sh
# Runs every test suite and prints their totals as one last line,
# "N passed, N failed". Each suite ends its own output with a line that
# starts "N passed, N failed" (conformance adds ", N skipped").
# usage: tests/run_suites.sh BUILD_DIR GOLDEN_DIR
build=$1
golden=$2
total_pass=0
total_fail=0
# Tests find the plugins this build made.
export ALLOY_TEST_BUILD="$build"

run_suite() {
  name=$1
  shift
  echo "== $name"
  out=$("$@" 2>&1)
  status=$?
  printf '%s\n' "$out" | grep -v ': ok$' | tail -n 40
  last=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
  p=$(printf '%s' "$last" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
  f=$(printf '%s' "$last" | sed -n 's/^[0-9]* passed, \([0-9]*\) failed.*/\1/p')
  if [ -z "$p" ]; then
    echo "$name: no totals line (exit status $status): counted as 1 failure"
    p=0
    f=1
  elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "$name: exit status $status with no failure counted: counted as 1 failure"
    f=1
  fi
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
}

run_suite "unit tests" "$build/tests/unit"
run_suite "command line" sh tests/cli.sh "$build/bin/alloy" "$golden"
run_suite "models: run, check, convert" sh tests/models.sh "$build/bin/alloy" "$golden"
# Hostile files (tests/hostile/: FIFOs, empty and disguised models, escaping
# weights paths, absurd batch sizes): refused with a clear message, never a
# hang, a crash or a leak of the file's contents.
run_suite "hostile files" sh tests/hostile.sh "$build/bin/alloy" "$golden"
run_suite "plugin symbols" sh tests/plugin_symbols.sh "$build"
run_suite "plugin headers declare only what a plugin can link" sh tests/plugin_headers.sh "$build"
run_suite "example plugin README steps" sh tests/readme_steps.sh plugins/example/README.md "$build" "$golden"
# make install into a temporary prefix; an application and the example
# plugin built from it with pkg-config alone; make uninstall (issue 21).
run_suite "make install, pkg-config, make uninstall" sh tests/install.sh "$build" "$golden"
run_suite "Python package (sdk/python, issue 20)" sh tests/python.sh "$build" "$golden"
# The ABI against the last release's baselines (tests/abi/, abidiff), and a
# header change that breaks it shown to fail (issue 21, docs/release.md).
run_suite "ABI against the last release (abidiff)" sh tests/abidiff.sh "$build"
if [ -f "$golden/ops/ops.jsonl" ]; then
  run_suite "golden ops, meta backend" "$build/bin/alloy" conform --backend meta --only golden \
    --golden "$golden/ops" --known-failures conformance/meta_known_failures.txt
  run_suite "golden ops, reference backend" "$build/bin/alloy" conform --backend ref --only golden \
    --golden "$golden/ops" --known-failures conformance/ref_known_failures.txt
  # Every rule checked on data: each case's op decomposed before it runs.
  run_suite "golden ops, reference backend, decomposed to Core ATen" "$build/bin/alloy" conform \
    --backend ref --only golden --golden "$golden/ops" --decompose core \
    --known-failures conformance/ref_known_failures.txt
  run_suite "golden ops, reference backend, decomposed to prims" "$build/bin/alloy" conform \
    --backend ref --only golden --golden "$golden/ops" --decompose prims \
    --known-failures conformance/ref_prims_known_failures.txt
else
  echo "== golden ops, meta and reference backends"
  echo "the golden corpus is missing: expected $golden/ops/ops.jsonl (../shared beside the clone): counted as 1 failure"
  total_fail=$((total_fail + 1))
fi
# Vectors made by PyTorch for the ops the golden corpus lacks (tests/vectors/*/,
# made by tests/vectors/make_vectors.py; they travel with the repo): each
# case as it is, and with its op decomposed to Core ATen and to prims.
for dir in tests/vectors/*/; do
  [ -f "$dir/ops/ops.jsonl" ] || continue
  fam=$(basename "$dir")
  for level in none core prims; do
    dec=""
    [ "$level" = none ] || dec="--decompose $level"
    run_suite "PyTorch vectors $fam, reference backend${dec:+, decomposed to $level}" \
      "$build/bin/alloy" conform --backend ref --only golden --golden "$dir" $dec
  done
done
# The whole suite a vendor runs (generated samples, graph-level tests and,
# when the corpus is there, the golden models), on ref and on the example
# plugin; none of it needs ../shared but the models.
with_models=""
[ -d "$golden/models" ] && with_models="--golden $golden"
run_suite "conformance suite, reference backend" "$build/bin/alloy" conform --backend ref -j2 \
  --only samples,graphs,abi $with_models
# Every rule checked on the samples too: each sample's op decomposed first.
for level in core prims; do
  run_suite "generated samples, reference backend, decomposed to $level" "$build/bin/alloy" \
    conform --backend ref -j2 --only samples --decompose $level \
    --known-failures conformance/ref_decomposed_known_failures.txt
done
run_suite "generated samples, meta backend (shape inference against ref)" "$build/bin/alloy" \
  conform --backend meta -j2 --only samples
# devsim, the simulated accelerator (tests/devsim/): the whole suite through
# the device-resident data path, on memory the host cannot see into.
run_suite "conformance suite, devsim (simulated accelerator)" env ALLOY_DEVSIM_DELAY_US=2 \
  ALLOY_PLUGIN_PATH="$build/tests/plugins" "$build/bin/alloy" conform --backend devsim -j2 \
  --only samples,graphs,abi $with_models
# The cuda backend on its GPU: every claimed op's samples, the graphs and
# the golden corpus against ref (its known differences listed with their
# reasons). Without a GPU (CI) it says so and counts nothing.
if [ -f "$build/lib/alloy/liballoy-cuda.so" ] &&
   "$build/bin/alloy" backends 2>/dev/null | grep -Eq '^cuda .*\(gpu\) +ok'; then
  run_suite "conformance suite, cuda backend" "$build/bin/alloy" conform --backend cuda -j"$(nproc)" \
    --only "samples,graphs${with_models:+,golden}" $with_models --known-failures conformance/cuda_known_failures.txt
else
  echo "== conformance suite, cuda backend"
  echo "skipped: no CUDA device"
fi
# The cpu backend (LLVM, where llvm-config was found): the graphs, the ABI
# checks and the golden models, the golden ops, and the generated samples
# of the Core ATen ops (the whole suite, 11.5 min on two cores, is for
# `alloy conform --backend cpu` by hand).
if [ -f "$build/lib/alloy/liballoy-cpu.so" ]; then
  run_suite "conformance suite, cpu backend: graphs and models" "$build/bin/alloy" conform --backend cpu -j2 \
    --only graphs,abi $with_models
  if [ -d "$golden/ops" ]; then
    run_suite "golden ops, cpu backend" "$build/bin/alloy" conform --backend cpu -j2 --only golden \
      --golden "$golden/ops"
  fi
  run_suite "generated samples of Core ATen ops, cpu backend" "$build/bin/alloy" conform --backend cpu -j2 \
    --only samples --cases core
else
  echo "== conformance suite, cpu backend"
  echo "skipped: no liballoy-cpu.so (no llvm-config when it was built)"
fi
run_suite "conformance suite, example plugin" "$build/bin/alloy" conform --backend example -j2 \
  --only samples,graphs,abi $with_models
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
