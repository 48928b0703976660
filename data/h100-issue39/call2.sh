#!/usr/bin/env bash
# Issue 39, call 2: data/issue39/cupti_probe.py in its three modes, each its own process.
set -uo pipefail
mkdir -p results/logs
for mode in default teardown-env teardown-late; do
  timeout 90 python3 data/issue39/cupti_probe.py "$mode" > "results/logs/probe-$mode.log" 2>&1
  echo "exit $?" >> "results/logs/probe-$mode.log"
done
[ -z "${OUT:-}" ] || tar -czf "$OUT/results.tgz" -C results .
