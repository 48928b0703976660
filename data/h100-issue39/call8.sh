#!/usr/bin/env bash
# Issue 39, call 8 (the machine of calls 6 and 7, warm; the session's last 285 s of device
# time): the whole catalog's PR job before issue 39 (job.sh before all), cut at 255 s.
#   source .gpu/setup.sh && bash data/h100-issue39/call8.sh        (.gpu and .old-tree carried)
# (Typed on the command line as one line; gathered here.)
set -uo pipefail
mkdir -p /tmp/keep-2/catalog-before
timeout 255 bash data/h100-issue39/job.sh before all /tmp/keep-2 catalog-before
echo "job status $?" >> /tmp/keep-2/catalog-before/pair.log
cp -r .old-tree/results/. /tmp/keep-2/catalog-before/
[ -z "${OUT:-}" ] || tar -czf "$OUT/call2.tgz" -C /tmp/keep-2 .
