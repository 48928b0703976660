#!/usr/bin/env bash
# Calls 5 and 6 on the H200 (2026-12-04): what ran inside every fusion of the catalog, for the
# root-cause hints: benchmarks/rmsnorm_bwd/capture.py over every fusion's `pr` points, on the
# stock stack of the other calls, once per call (state stock-1, then stock-2: the two sides the
# demo compares).
#   source .gpu/setup.sh && bash data/h200-catalog/call5.sh STATE [capture.py options]
set -uo pipefail
state=$1
shift
out=$OUT/captures
log=$OUT/capture-$state.log
start=$(date +%s)
NVFUSER_DUMP=scheduler_params,launch_param timeout 480 python3 -m benchmarks.rmsnorm_bwd.capture \
  --out "$out" --state "$state" --fusions all --size-set pr "$@" >"$log" 2>&1
echo "capture exit $? after $(($(date +%s) - start)) s" | tee -a "$log"
grep -c '^=== done' "$log"
grep '^=== done' "$log" | grep -v 'failed steps \[\]' | head -20
cp "$log" "$out/$state/"
tar czf "$OUT/captures-$state.tgz" -C "$out" "$state"
rm -rf "$out" "$log"
