#!/usr/bin/env bash
# asv's results of every run of this folder, stored again from their provenance records
# (restore.py says why). Each run declares exactly the points its record holds.
#   bash data/h200-catalog/restore-all.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
for record in "$here"/aa/nvidia-h200/*.provenance.jsonl "$here"/pair/rep-*/nvidia-h200/*.provenance.jsonl \
              "$here"/fp32/nvidia-h200/*.provenance.jsonl; do
  results=$(dirname "$(dirname "$record")")
  read -r points fusions < <(python3 - "$record" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(",".join(r["points"]), ",".join(r["fusions"]))
PY
)
  echo "== $record"
  python3 "$here/restore.py" "$record" "$results" RMSNORM_BENCH_SIZES=nightly \
    RMSNORM_BENCH_POINTS="$points" RMSNORM_BENCH_FUSIONS="$fusions" > /dev/null
done
