#!/bin/sh
# bench/bench_conform.sh: how long the whole conformance suite takes on the
# reference backend (issue 8's goal: under 10 minutes on 2 cores), with
# the golden corpus when ../shared/golden is there. Usage:
#   sh bench/bench_conform.sh BUILD_DIR [GOLDEN_DIR]
build=${1:-build}
golden=${2:-../shared/golden}
alloy="$build/bin/alloy"
goal=600
set -- --backend ref -j "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
if [ -d "$golden/ops" ]; then
  set -- "$@" --golden "$golden" --known-failures conformance/ref_known_failures.txt
  what="samples, graphs, golden ops and models"
else
  what="samples and graphs (no golden corpus at $golden)"
fi
start=$(date +%s.%N)
"$alloy" conform "$@" > "${TMPDIR:-/tmp}/bench-conform.$$" 2>&1
status=$?
end=$(date +%s.%N)
echo "# make bench: bench/bench_conform.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), $(getconf _NPROCESSORS_ONLN) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "alloy conform $*: $what"
grep -E '^(alloy conform:|samples:|  [a-z-]+ +(reached|not reached)|[0-9]+ passed|[0-9]+ known)' "${TMPDIR:-/tmp}/bench-conform.$$"
awk -v a="$start" -v b="$end" -v goal="$goal" \
  'BEGIN { s = b - a; printf "wall %.1f s (goal: under %d s)%s\n", s, goal, (s > goal ? ": MISSED" : "") }'
rm -f "${TMPDIR:-/tmp}/bench-conform.$$"
exit $status
