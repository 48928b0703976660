#!/usr/bin/env bash
# Call 2 on the H200 (after smoke.sh): two stock runs of the pr set of the whole catalog, the
# first with the context variants, the second without (as a PR's later repeats run), and the
# dropout probe. data/record.sh packs results/ into $OUT/h200-results.tgz after each process.
#   source .gpu/setup.sh && bash data/h200-catalog/call2.sh
set -uo pipefail
mkdir -p results/logs
PYTHONPATH=.:${PYTHONPATH:-} timeout 120 python3 data/h200-catalog/probe_dropout.py > results/logs/probe.jsonl 2> results/logs/probe.log
RECORD_TIME_LIMIT=260 bash data/record.sh stock-1
RECORD_TIME_LIMIT=230 RECORD_VARIANTS=nvfuser,thunder-prims,thunder-func bash data/record.sh stock-2
