#!/usr/bin/env bash
# Issue 39, H200 call 2: the whole catalog's PR job before issue 39 (job.sh before all).
#   source .gpu/setup.sh && bash data/h200-issue39/call2.sh        (.gpu and .old-tree carried)
set -uo pipefail
keep=/tmp/keep-2
rm -rf "$keep" && mkdir -p "$keep"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
bash data/h200-issue39/job.sh before all "$keep" catalog-before
[ -z "${OUT:-}" ] || tar -czf "$OUT/call2.tgz" -C "$keep" .
