#!/usr/bin/env bash
# Issue 39, call 4: the same PR job with the pipeline before issue 39 (the tree of 769b128,
# carried as .old-tree/: `git archive 769b128 benchmarks data/record.sh asv.conf.json`), on the
# same machine and stack as call 3: 2 repeats a side, alternated, A/A, no compile cache; its
# record.sh does not capture (call 1 and 3 time that process: old-capture.log).
set -uo pipefail
mkdir -p results/logs
(cd .old-tree && RECORD_TIME_LIMIT=150 RECORD_REPEATS=2 bash data/record.sh --pair stock-1 stock-2 > ../results/logs/old-pair.log 2>&1; echo "old pair status $?" >> ../results/logs/old-pair.log)
rm -rf results/old && cp -r .old-tree/results results/old
[ -z "${OUT:-}" ] || tar -czf "$OUT/results.tgz" -C results .
