#!/usr/bin/env bash
# Issue 39, call 1: the new measuring pipeline on the GPU.
#   source .gpu/setup.sh && bash data/issue39/call1.sh      (.old-tree carried: see below)
# 1. The GPU tests (the in-process capture included).
# 2. A PR job of the whole catalog's pr set as bench-pr.yml runs it: 2 repeats a side,
#    alternated, repeat 1 capturing RMSNorm backward's points in its measuring process, the
#    job's compile cache (RMSNORM_BENCH_CACHE_ROOT); A/A (stock-1 and stock-2 are the same code).
# 3. The capture as a process of its own did it before (the tree of 769b128, carried as
#    .old-tree/ by `git archive 769b128 benchmarks data/record.sh asv.conf.json`), over the same points, to diff against 2.
# results/ is packed into $OUT after each step.
set -uo pipefail
mkdir -p results/logs
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/results.tgz" -C results .; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > results/logs/gpu.txt 2>&1
python3 -c 'import torch, thunder, nvfuser_direct; print("torch", torch.__version__, "thunder", thunder.__version__, "nvfuser", nvfuser_direct.version())' >> results/logs/gpu.txt 2>&1
t0=$(date +%s.%N)
timeout 120 python3 -m pytest -m gpu tests/gpu --noconftest -o addopts="" -q > results/logs/gpu-tests.log 2>&1
echo "gpu tests status $? in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >> results/logs/gpu-tests.log
pack
rm -rf /tmp/perfbot-cache
RECORD_CAPTURE=1 RECORD_TIME_LIMIT=150 RECORD_REPEATS=2 RMSNORM_BENCH_CACHE_ROOT=/tmp/perfbot-cache \
  bash data/record.sh --pair stock-1 stock-2 > results/logs/pair.log 2>&1
echo "pair status $?" >> results/logs/pair.log
find /tmp/perfbot-cache -maxdepth 2 | sort > results/logs/cache-tree.txt
for d in /tmp/perfbot-cache/nvfuser-*/nvfuser_kernel_db; do wc -l "$d/db.csv"; done >> results/logs/cache-tree.txt 2>&1
pack
if [ -d .old-tree ]; then
  t0=$(date +%s.%N)
  (cd .old-tree && RMSNORM_BENCH_FUSIONS=rmsnorm_bwd timeout 100 python3 -m benchmarks.engine.capture \
     --out ../results/old-capture --state stock --fusions rmsnorm_bwd --size-set pr) > results/logs/old-capture.log 2>&1
  echo "old capture status $? in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >> results/logs/old-capture.log
fi
pack
