#!/usr/bin/env bash
# Issue 39, H200 call 3: the whole catalog's PR job after issue 39 (job.sh after all).
#   source .gpu/setup.sh && bash data/h200-issue39/call3.sh        (.gpu carried)
set -uo pipefail
keep=/tmp/keep-3
rm -rf "$keep" results && mkdir -p "$keep"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
bash data/h200-issue39/job.sh after all "$keep" catalog-after
[ -z "${OUT:-}" ] || tar -czf "$OUT/call3.tgz" -C "$keep" .
