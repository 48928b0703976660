#!/usr/bin/env bash
# Issue 39, call 7 (the machine of call 6, warm): the whole catalog's PR job after issue 39
# (job.sh after all), then the two timers side by side over the catalog's `pr` set
# (benchmarks/engine/timer_check.py) in the seconds left of 560.
#   source .gpu/setup.sh && bash data/h100-issue39/call7.sh        (.gpu carried)
# (Run as data/h200-issue39/call3.sh followed by the timer check typed on the command line:
# the same commands, gathered here.)
set -uo pipefail
keep=/tmp/keep-3
s=$(date +%s)
rm -rf "$keep" results && mkdir -p "$keep"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
bash data/h100-issue39/job.sh after all "$keep" catalog-after
[ -z "${OUT:-}" ] || tar -czf "$OUT/call3.tgz" -C "$keep" .
left=$(( 560 - ($(date +%s) - s) ))
if [ "$left" -ge 60 ]; then
  RMSNORM_BENCH_SIZES=pr RMSNORM_BENCH_FUSIONS=all timeout "$left" python3 -m benchmarks.engine.timer_check \
    "$keep/timer/pr-all.jsonl" > "$keep/timer-pr-all.log" 2>&1
  echo "timer_check status $? (limit $left)" >> "$keep/timer-pr-all.log"
  [ -z "${OUT:-}" ] || tar -czf "$OUT/call3.tgz" -C "$keep" .
fi
