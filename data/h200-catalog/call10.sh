#!/usr/bin/env bash
# Call 10 on the H200 (2026-12-04): a bisect's measurement of one build for a catalog fusion,
# as bot/bisect/measure.py runs it: benchmarks.under_test.one with the carried Thunder 0.2.6
# wheel as the build, Bias+GELU backward's smoke point, --fusions gelu_bwd.
#   source .gpu/setup.sh && bash data/h200-catalog/call10.sh
set -uo pipefail
work=/tmp/call10
start=$(date +%s)
timeout 500 python3 -m benchmarks.under_test.one --package thunder \
  --build .gpu/wheels/lightning_thunder-0.2.6-py3-none-any.whl \
  --results "$work/results" --work "$work/work" --size-set smoke \
  --points gelu_bwd/bfloat16/256x1024 --variants nvfuser,thunder-prims,thunder-func \
  --fusions gelu_bwd --pip-arg=--no-index >"$OUT/one.log" 2>&1
echo "under_test.one exit $? after $(($(date +%s) - start)) s" | tee -a "$OUT/one.log"
find "$work/results" -maxdepth 3 | sort | tee "$OUT/tree.txt"
cp "$work/results.build.json" "$OUT/" 2>/dev/null || true
tar czf "$OUT/call10.tgz" -C "$work" results $(cd "$work" && ls *.json 2>/dev/null)
