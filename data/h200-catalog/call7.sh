#!/usr/bin/env bash
# Call 7 on the H200 (2026-12-04): what the PR job's capture (repeat 1, each side) costs with
# the catalog: capture.py over RMSNorm backward's pr points alone, then over the 13 other
# fusions' pr points, each in its own process as run_gpu.sh --capture runs it, twice in turn.
#   source .gpu/setup.sh && bash data/h200-catalog/call7.sh
set -uo pipefail
out=$OUT/captures
log=$OUT/timing-call7.txt
for round in 1 2; do
  for fusions in rmsnorm_bwd catalog; do
    list=$fusions
    [ "$fusions" = catalog ] && list=$(python3 -c 'from benchmarks.fusions.catalog import FUSIONS; print(",".join(f for f in FUSIONS if f != "rmsnorm_bwd"))')
    start=$(date +%s%N)
    python3 -m benchmarks.rmsnorm_bwd.capture --out "$out" --state "t-$fusions-$round" --fusions "$list" \
      --size-set pr >"$OUT/capture-$fusions-$round.log" 2>&1
    code=$?
    end=$(date +%s%N)
    n=$(grep -c '^=== done' "$OUT/capture-$fusions-$round.log")
    bad=$(grep '^=== done' "$OUT/capture-$fusions-$round.log" | grep -vc 'failed steps \[\]')
    ms=$(((end - start) / 1000000))
    printf 'round %s %s: exit %s, %s captures (%s with a failed step), %d.%03d s\n' \
      "$round" "$fusions" "$code" "$n" "$bad" $((ms / 1000)) $((ms % 1000)) | tee -a "$log"
  done
done
tar czf "$OUT/call7-logs.tgz" -C "$OUT" $(cd "$OUT" && ls capture-*.log)
rm -rf "$out" "$OUT"/capture-*.log
