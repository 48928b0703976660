#!/usr/bin/env bash
# Issue 39, call 6 (an H100: the device lent no H200): the GPU tests; RMSNorm backward alone,
# a PR job before and after on this machine (job.sh); then the two timers side by side over
# the whole catalog's `pr` set (benchmarks/engine/timer_check.py), if CALL_LIMIT (default
# 570 s) leaves a minute for it. Everything under /tmp/keep-1, packed into $OUT after each step.
# Ran with CALL_LIMIT=420 (the timer check then had no minute left: call 7 ran it).
#   source .gpu/setup.sh && bash data/h100-issue39/call6.sh        (.gpu and .old-tree carried)
set -uo pipefail
keep=/tmp/keep-1
rm -rf "$keep" results && mkdir -p "$keep"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/call6.tgz" -C "$keep" .; }
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
python3 -c 'import torch, thunder, nvfuser_direct; print("torch", torch.__version__, "thunder", thunder.__version__, "nvfuser", nvfuser_direct.version())' >> "$keep/gpu.txt" 2>&1
t0=$(date +%s)
timeout 150 python3 -m pytest -m gpu tests/gpu --noconftest -o addopts="" -p no:cacheprovider -q > "$keep/gpu-tests.log" 2>&1
echo "gpu tests status $? in $(( $(date +%s) - t0 )) s" >> "$keep/gpu-tests.log"
pack
bash data/h100-issue39/job.sh before rmsnorm_bwd "$keep" rmsnorm-before; pack
bash data/h100-issue39/job.sh after rmsnorm_bwd "$keep" rmsnorm-after; pack
left=$(( ${CALL_LIMIT:-570} - ($(date +%s) - start) ))
[ "$left" -ge 60 ] || { echo "timer_check: not run ($left s left of CALL_LIMIT)" > "$keep/timer-pr-all.log"; exit 0; }
t0=$(date +%s)
RMSNORM_BENCH_SIZES=pr RMSNORM_BENCH_FUSIONS=all timeout "$left" python3 -m benchmarks.engine.timer_check \
  "$keep/timer/pr-all.jsonl" > "$keep/timer-pr-all.log" 2>&1
echo "timer_check status $? in $(( $(date +%s) - t0 )) s (limit $left)" >> "$keep/timer-pr-all.log"
pack
