#!/usr/bin/env bash
# Call 8 on the H200 (2026-12-04): run_gpu.sh --capture end to end with the catalog, as a PR
# job's repeat 1 runs it: two fusions measured at the smoke point (RMSNorm backward, Softmax
# backward), asv storing the run, and the capture limited by RMSNORM_BENCH_CAPTURE_FUSIONS to
# Softmax backward; in a throwaway commit of the checkout (asv looks the commit up).
#   source .gpu/setup.sh && bash data/h200-catalog/call8.sh
set -uo pipefail
git -c user.name=lab -c user.email=lab@example.invalid commit -q --allow-empty -m "call 8"
results=/tmp/call8/results
start=$(date +%s)
RMSNORM_BENCH_CAPTURE_FUSIONS=softmax_bwd timeout 480 bash benchmarks/run_gpu.sh \
  --size-set smoke --fusions rmsnorm_bwd,softmax_bwd --results "$results" --capture \
  >"$OUT/run.log" 2>&1
echo "run_gpu.sh exit $? after $(($(date +%s) - start)) s" | tee -a "$OUT/run.log"
find "$results" -maxdepth 4 | sort | tee "$OUT/tree.txt"
tar czf "$OUT/call8.tgz" -C /tmp/call8 results
