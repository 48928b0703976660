#!/usr/bin/env bash
# Issue 39, part 6: one day's A/A runs of the catalog's `pr` set with today's timer, for the
# out-of-sample calibration of every fusion (docs/CALIBRATION.md, "Each fusion on its own"),
# then made slowdowns at two fusions other than Bias+GELU (the suite's hook, real sleep kernels).
#
#   source .gpu/setup.sh && bash data/issue39-calibration/day.sh [RUNS] [STATE ...]
#
# RUNS (default 6) processes of the same tree, each its own state stock-<UTC date>-<i> and its
# own process, measuring what a PR's repeats measure (nvFuser, thunder-prims, thunder-func: no
# context), under the job's compile cache; then each STATE once (default:
# slow-softmax_bwd-thunder-2 slow-layernorm_bwd-nvfuser-2). data/record.sh packs results/ into
# $OUT after every process, so a call cut short keeps what finished: commit what comes back
# under data/<gpu>-calibration/day-<date>/ and run the next day's on another day (12 runs over
# at least two days, the bar). About 50-80 s a process on an H100.
set -uo pipefail
runs=${1:-6}
[ $# -eq 0 ] || shift
case "$runs" in ''|*[!0-9]*|0) echo "day.sh: RUNS must be a whole number >= 1" >&2; exit 2 ;; esac
day=$(date -u +%Y-%m-%d)
states=()
for i in $(seq 1 "$runs"); do states+=("stock-$day-$i"); done
if [ $# -gt 0 ]; then states+=("$@"); else states+=(slow-softmax_bwd-thunder-2 slow-layernorm_bwd-nvfuser-2); fi
RECORD_VARIANTS=nvfuser,thunder-prims,thunder-func RECORD_TIME_LIMIT=150 \
  RMSNORM_BENCH_CACHE_ROOT=/tmp/perfbot-compile-cache bash data/record.sh "${states[@]}"
