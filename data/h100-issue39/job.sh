#!/usr/bin/env bash
# Issue 39 on the GPU: one PR job as bench-pr.yml runs it, before or after issue 39, from caches
# as empty as a fresh runner's, into KEEP/NAME (the job's results/, its logs, its wall times).
#   bash data/h100-issue39/job.sh before|after|turns FUSIONS KEEP NAME
# before: the tree of 769b128 (.old-tree/, `git archive 769b128 benchmarks data/record.sh
#   asv.conf.json`), whose repeat 1 captured in a process of its own (run_gpu.sh --capture,
#   which record.sh of then did not pass: the one line below adds it, as bench-pr.yml did);
# after: this tree, repeat 1 capturing in its measuring process, the job's compile cache;
# turns: this tree, its four processes building at once and timing in turns (RECORD_TURNS=1).
# Both: 2 repeats a side, alternated, A/A (stock-1 and stock-2 are the same code), the `pr`
# set, FUSIONS measured and captured (rmsnorm_bwd or all).
set -uo pipefail
which=$1 fusions=$2 keep=$3 name=$4
root=$(pwd)
tree=$root
[ "$which" != before ] || tree=$root/.old-tree
mkdir -p "$keep/$name"
rm -rf /tmp/perfbot-cache /tmp/torchinductor_* ~/.triton ~/.nv/ComputeCache "$tree/results"
if [ "$which" = before ] && ! grep -q RECORD_CAPTURE "$tree/data/record.sh"; then
  sed -i 's|^    \[ -z "\$variants" \] \|\| extra+=(--variants "\$variants")$|&\n    [ "${RECORD_CAPTURE:-0}" != 1 ] \|\| [ "$rep" -ne 1 ] \|\| extra+=(--capture)|' \
    "$tree/data/record.sh"
  grep -q RECORD_CAPTURE "$tree/data/record.sh" || { echo "job.sh: could not add --capture" >&2; exit 2; }
fi
cache=()
[ "$which" = before ] || cache=(RMSNORM_BENCH_CACHE_ROOT=/tmp/perfbot-cache)
[ "$which" != turns ] || cache+=(RECORD_TURNS=1)
t0=$(date +%s.%N)
(cd "$tree" && env OUT= RMSNORM_BENCH_FUSIONS="$fusions" RMSNORM_BENCH_CAPTURE_FUSIONS="$fusions" \
   RECORD_CAPTURE=1 RECORD_TIME_LIMIT=200 RECORD_REPEATS=2 "${cache[@]}" \
   bash data/record.sh --pair stock-1 stock-2) > "$keep/$name/pair.log" 2>&1
status=$?
t1=$(date +%s.%N)
echo "job $which $fusions: status $status, $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s from $t0 to $t1" \
  | tee -a "$keep/$name/pair.log"
[ "$which" = before ] || { find /tmp/perfbot-cache -maxdepth 2 | sort > "$keep/$name/cache-tree.txt"
  for d in /tmp/perfbot-cache/nvfuser-*/nvfuser_kernel_db; do wc -l "$d/db.csv"; done >> "$keep/$name/cache-tree.txt" 2>&1; }
cp -r "$tree/results/." "$keep/$name/"
