#!/usr/bin/env bash
# Call 3 on the H200: a PR run of the whole catalog as bench-pr.yml runs it (2 repeats a side,
# alternated, the context in repeat 1 where the size set asks for it), base stock, head with
# Thunder's Bias+GELU backward made 5% slower by an injected kernel; then the catalog's pr
# point in float32 once (the table's fp32 column). record.sh packs results/ after each process.
#   source .gpu/setup.sh && bash data/h200-catalog/call3.sh
set -uo pipefail
RECORD_TIME_LIMIT=150 RECORD_REPEATS=2 bash data/record.sh --pair stock-3 slow-gelu_bwd-thunder-5
fusions=$(python3 -c 'from benchmarks.fusions.catalog import FUSIONS; print(",".join(f for f in FUSIONS if f != "rmsnorm_bwd"))')
git -c user.name=perfbot -c user.email=perfbot@localhost commit -q --allow-empty -m "fp32: stock code, the catalog's pr point in float32"
timeout 150 bash benchmarks/run_gpu.sh --size-set fp32 --fusions "$fusions" --variants nvfuser,thunder-prims,thunder-func \
  --results results/fp32 --machine nvidia-h200 --commit "$(git rev-parse HEAD)" > results/logs/fp32.log 2>&1
echo "fp32 status $?" >> results/logs/fp32.log
git log --format='%H %s' > results/logs/commits.txt
[ -z "${OUT:-}" ] || tar -czf "$OUT/h200-results.tgz" -C results .
