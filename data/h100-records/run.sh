#!/usr/bin/env bash
# The record's new fields on a real GPU run (issues 38 and 40): runner_check on the lab's
# stack, then the whole catalog at the `smoke` point (bf16 256x1024, 10 rounds) measured twice,
# each its own process and record, from the same tree. What the two records must agree on
# (canonical definition hashes, suite/engine/fusion digests, timer) is read by check.py here.
#   source .gpu/setup.sh && bash data/h100-records/run.sh
# Everything goes to results/records/, packed into $OUT/records.tgz after each step. No asv
# machine name is set (the run of 2026-12-07 set RMSNORM_BENCH_MACHINE=nvidia-h200 on what was
# an H100: README.md says so; the record's gpu.name is the truth).
set -uo pipefail
out=results/records
mkdir -p "$out"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/records.tgz" -C results records; }
python3 -m benchmarks.runner_check --explain > "$out/runner_check.txt" 2>&1
echo "runner_check exit $?" >> "$out/runner_check.txt"
pack
for run in 1 2; do
  t0=$(date +%s)
  RMSNORM_BENCH_SIZES=smoke RMSNORM_BENCH_ROUNDS=10 \
    RMSNORM_BENCH_RECORD="$out/run-$run.provenance.jsonl" \
    timeout 250 python3 -m benchmarks.engine.measure > "$out/run-$run.log" 2>&1
  echo "measure status $? in $(( $(date +%s) - t0 )) s" | tee -a "$out/run-$run.log"
  pack
done
