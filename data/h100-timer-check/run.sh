#!/usr/bin/env bash
# Issue 39 on a real GPU, one device call: the renamed engine's GPU tests, then the suite's timer
# and the GPU-only candidate side by side in one process (benchmarks/engine/timer_check.py) on
# RMSNorm backward's `pr` set and on the whole catalog at its `smoke` point.
#   source .gpu/setup.sh && bash data/h100-timer-check/run.sh
# Everything goes to results/timer/, packed into $OUT/timer.tgz after each step.
set -uo pipefail
out=results/timer
mkdir -p "$out"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/timer.tgz" -C results timer; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
t0=$(date +%s)
timeout 120 python3 -m pytest -m gpu tests/gpu -q -o addopts="" -p no:cacheprovider --noconftest \
  > "$out/gpu-tests.log" 2>&1
echo "gpu tests rc $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/gpu-tests.log"
pack
t0=$(date +%s)
RMSNORM_BENCH_SIZES=pr RMSNORM_BENCH_FUSIONS=rmsnorm_bwd timeout 250 python3 -m benchmarks.engine.timer_check \
  "$out/pr-rmsnorm.jsonl" > "$out/pr-rmsnorm.log" 2>&1
echo "pr rmsnorm_bwd rc $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/pr-rmsnorm.log"
pack
t0=$(date +%s)
RMSNORM_BENCH_SIZES=smoke RMSNORM_BENCH_FUSIONS=all timeout 130 python3 -m benchmarks.engine.timer_check \
  "$out/smoke-all.jsonl" > "$out/smoke-all.log" 2>&1
echo "smoke catalog rc $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/smoke-all.log"
pack
