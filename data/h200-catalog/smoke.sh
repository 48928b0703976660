#!/usr/bin/env bash
# The catalog's first contact with the H200: every fusion at the `smoke` point (10 rounds),
# then whether Thunder's dropout fusions need disable_replace_uniform (probe_dropout.py).
#   source .gpu/setup.sh && bash data/h200-catalog/smoke.sh
# Logs and the record go to results/smoke/, packed into $OUT/h200-smoke.tgz after each step.
set -uo pipefail
mkdir -p results/smoke
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/h200-smoke.tgz" -C results smoke; }
t0=$(date +%s)
RMSNORM_BENCH_SIZES=smoke RMSNORM_BENCH_ROUNDS=10 RMSNORM_BENCH_MACHINE=nvidia-h200 \
  RMSNORM_BENCH_RECORD=results/smoke/smoke.provenance.jsonl \
  timeout 300 python3 -m benchmarks.rmsnorm_bwd.measure > results/smoke/measure.log 2>&1
echo "measure status $? in $(( $(date +%s) - t0 )) s" | tee -a results/smoke/measure.log
python3 -m benchmarks.rmsnorm_bwd.summary results/smoke/smoke.provenance.jsonl > results/smoke/summary.txt 2>&1
pack
timeout 150 python3 data/h200-catalog/probe_dropout.py > results/smoke/probe.jsonl 2> results/smoke/probe.log
echo "probe status $?" >> results/smoke/probe.log
pack
