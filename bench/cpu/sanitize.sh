#!/bin/sh
# bench/cpu/sanitize.sh MODE BUILD [GOLDEN]: the cpu backend under a
# sanitizer, on every golden model.
#
#   tsan      BUILD built with clang -fsanitize=thread (make tsan builds
#             build-tsan/ and runs this): every golden model with --check,
#             --backends cpu and --backends cpu,ref, at its recorded batch
#             (.aten.pt2, .core.pt2) and at batches 1 and 64
#             (SANITIZE_BATCHES) where it has a symbolic batch
#             (.dyn.core.pt2); --backends cpu with the pool at 2 threads,
#             cpu,ref at 4 (more workers than this machine's cores: more
#             interleavings); bench/cpu/tsan_concurrent.c (several
#             programs of one runtime in flight at once, runtimes on several
#             threads) on each static export at 1, 2 and 4 threads; then
#             `alloy conform --backend cpu` on a subset of the samples
#             (SANITIZE_OPS: --ops globs, one conform each) and the ABI
#             tests.
#             LLVM's and OpenBLAS's own code is not instrumented: races inside
#             the JIT's kernels are not seen, the pool's handing out of
#             rows and everything around it is. Suppressions:
#             plugins/cpu/tsan.supp.
#   valgrind  BUILD a normal build: every golden model with --check and
#             --backends cpu under memcheck --leak-check=full; definitely
#             or indirectly lost blocks are errors (exit 99).
#             Suppressions: plugins/cpu/valgrind.supp.
#
# Each run's log is kept in BUILD/sanitize/; a run that reports anything
# fails the script, and the summary names it.
MODE=$1
BUILD=${2:-build}
GOLDEN=${3:-../shared/golden}
ALLOY=$BUILD/bin/alloy
M=$GOLDEN/models
LOGS=$BUILD/sanitize
OPS=${SANITIZE_OPS:-aten._softmax.* aten._log_softmax.* aten.native_layer_norm.* aten.mm.* aten.bmm.* aten.addmm.*
     aten.add.Tensor aten.mul.Tensor aten.gelu.* aten.sum.dim_IntList aten.mean.dim aten.embedding.* aten.cat.*
     aten.where.self aten.cumsum.* aten.gather.* aten.index.Tensor aten.amax.* aten.exp.* aten.tanh.*}
if [ ! -x "$ALLOY" ]; then echo "sanitize: no $ALLOY"; exit 1; fi
if [ ! -f "$M/models.json" ]; then
  echo "sanitize: skipped: no golden models at $M (../shared beside the clone)"
  exit 0
fi
mkdir -p "$LOGS" && rm -f "$LOGS"/*.log
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
here=$(pwd)
failed=0
runs=0
names=$(sed -n 's/^ *"name": "\([^"]*\)".*/\1/p' "$M/models.json")

case $MODE in
tsan)
  # halt_on_error=0: every report of a run, not the first alone
  export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 suppressions=$here/plugins/cpu/tsan.supp $TSAN_OPTIONS"
  one() { # LOG ARGS...: one run; a TSan report or a failure counts
    log=$LOGS/$1; shift
    runs=$((runs + 1))
    "$@" > "$log" 2>&1
    rc=$?
    reports=$(grep -c 'WARNING: ThreadSanitizer' "$log")
    if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then
      failed=$((failed + 1))
      echo "FAIL (exit $rc, $reports TSan reports): $* (log $log)"
    fi
  }
  # the harness of concurrent runs, built with the same flags as BUILD
  # (the compiler and flags make tsan used: SANITIZE_CC, SANITIZE_CFLAGS)
  CONC=$BUILD/bin/tsan_concurrent
  ${SANITIZE_CC:-clang} -std=c11 -O1 -g -D_GNU_SOURCE -I. -Isdk/include ${SANITIZE_CFLAGS:--fsanitize=thread} \
    bench/cpu/tsan_concurrent.c "$BUILD/lib/liballoy.a" -o "$CONC" -lzip -lz -ljansson -lffi -ldl -lpthread -lm ||
    { echo "sanitize: cannot build $CONC"; exit 1; }
  for n in $names; do
    io=$M/$n.io.safetensors
    [ -f "$io" ] || continue
    # --backends cpu with the pool at 2 threads (this machine's cores), cpu,ref
    # at 4 (more workers than cores: other interleavings)
    for bt in cpu:2 cpu,ref:4; do
      be=${bt%:*} th=${bt#*:}
      for v in aten core; do
        [ -f "$M/$n.$v.pt2" ] || continue
        one "$n.$v.$be.t$th.log" "$ALLOY" run "$M/$n.$v.pt2" --inputs "$io" --check "$io" \
          --backends "$be" --backend-opt cpu.threads=$th --repeat 2
      done
      [ -f "$M/$n.dyn.core.pt2" ] && one "$n.dyn.$be.t$th.log" "$ALLOY" run "$M/$n.dyn.core.pt2" \
        --inputs "$io" --check "$io" --backends "$be" --backend-opt cpu.threads=$th --batch ${SANITIZE_BATCHES:-1,64} --repeat 2
    done
    # concurrent runs of the static export (every node on cpu; a model whose
    # output0 is not float32 is left out by the harness itself)
    [ -f "$M/$n.core.pt2" ] && for th in 1 2 4; do
      one "$n.concurrent.t$th.log" env CPU_THREADS=$th "$CONC" "$M/$n.core.pt2" "$io" 3 5
    done
  done
  # the conformance suite's samples forked one test at a time (-j1), and the
  # plugin-ABI tests (several queues on one backend)
  set -f # the globs are conform's, not the shell's
  for op in $OPS; do
    set +f
    one "conform-$op.log" "$ALLOY" conform --backend cpu --only samples --ops "$op" --golden "$GOLDEN"
  done
  one conform-abi.log "$ALLOY" conform --backend cpu --only abi --golden "$GOLDEN"
  cat "$LOGS"/conform-*.log | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p' |
    awk '{p += $1; f += $2; s += $3} END {print "conform (samples of the ops above, abi): " p " passed, " f " failed, " s " skipped"}'
  ;;
valgrind)
  VG="valgrind --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
      --error-exitcode=99 --suppressions=$here/plugins/cpu/valgrind.supp"
  for n in $names; do
    io=$M/$n.io.safetensors
    [ -f "$io" ] || continue
    for v in aten dyn.core; do
      [ -f "$M/$n.$v.pt2" ] || continue
      batch=""
      [ $v = dyn.core ] && batch="--batch 1,64"
      log=$LOGS/vg.$n.$v.log
      runs=$((runs + 1))
      # shellcheck disable=SC2086
      $VG "$ALLOY" run "$M/$n.$v.pt2" --inputs "$io" --check "$io" --backends cpu $batch > "$log" 2>&1
      rc=$?
      echo "$n.$v (exit $rc): $(grep -E 'ERROR SUMMARY' "$log" | sed 's/^==[0-9]*== //')"
      grep -E 'definitely lost|indirectly lost|still reachable' "$log" | sed 's/^==[0-9]*== /    /'
      [ "$rc" -ne 0 ] && failed=$((failed + 1)) && echo "FAIL: $n.$v (log $log)"
    done
  done
  ;;
*)
  echo "usage: bench/cpu/sanitize.sh tsan|valgrind BUILD [GOLDEN]"
  exit 2
  ;;
esac
echo "sanitize $MODE: $runs runs, $failed failed (logs in $LOGS)"
[ "$failed" -eq 0 ]
