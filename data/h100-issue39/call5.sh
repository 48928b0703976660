#!/usr/bin/env bash
# Issue 39, call 5: RMSNorm backward alone, a PR job before and after issue 39 on one machine,
# one after the other: the new pipeline (capture in the measuring process, compile cache),
# then the tree of 769b128 (.old-tree/) with its capture as a process of its own a side (what
# bench-pr.yml ran at repeat 1 before), each 2 repeats a side alternated, A/A.
set -uo pipefail
mkdir -p results/logs
export RMSNORM_BENCH_FUSIONS=rmsnorm_bwd RMSNORM_BENCH_CAPTURE_FUSIONS=rmsnorm_bwd
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/results.tgz" -C results .; }
rm -rf /tmp/perfbot-cache
RECORD_CAPTURE=1 RECORD_TIME_LIMIT=120 RECORD_REPEATS=2 RMSNORM_BENCH_CACHE_ROOT=/tmp/perfbot-cache \
  bash data/record.sh --pair stock-1 stock-2 > results/logs/new-pair.log 2>&1
echo "new pair status $?" >> results/logs/new-pair.log
pack
(cd .old-tree && RECORD_TIME_LIMIT=120 RECORD_REPEATS=2 bash data/record.sh --pair stock-1 stock-2 > ../results/logs/old-pair.log 2>&1
 echo "old pair status $?" >> ../results/logs/old-pair.log
 for side in 1 2; do
   t0=$(date +%s.%N)
   timeout 100 python3 -m benchmarks.engine.capture --out ../results/old-capture --state "stock-$side" --fusions rmsnorm_bwd --size-set pr > "../results/logs/old-capture-$side.log" 2>&1
   echo "old capture status $? from $t0 to $(date +%s.%N)" >> "../results/logs/old-capture-$side.log"
 done)
rm -rf results/old && cp -r .old-tree/results results/old
pack
