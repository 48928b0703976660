#!/usr/bin/env bash
# Issue 41's history on the lab's GPU: Thunder's nightlies (nightlies.txt, in date order), nvFuser
# fixed at the carried build, the catalog's `pr` set, each nightly one process measured once,
# GROUP nightlies at a time as one job's turns (benchmarks.under_test.builds: they build side by
# side and time one at a time), each group into a results folder of its own, with captures.
#   source .gpu/setup.sh && bash data/issue41-history/run.sh NAME LIMIT GROUP VERSION...
# Wheels: .gpu/extra/lightning_thunder-VERSION-py3-none-any.whl, downloaded here with
# `pip download --no-deps lightning-thunder==VERSION -d .gpu/extra` (the GPU machine reaches no
# index). A group starts only while LIMIT (the call's own limit, less a margin) leaves it about
# 90 s and 25 s a nightly; everything is kept under /tmp/keep-NAME and packed into $OUT/NAME.tgz
# after every group, so a call cut short keeps what finished. Measuring a nightly again (the
# watch's re-measurement, a check of a change point) is the same command in a later call: its
# key is the same, its results folder another.
set -uo pipefail
[ $# -ge 4 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
name=$1 limit=$2 group=$3
shift 3
keep=/tmp/keep-$name
rm -rf "$keep" "/tmp/work-$name" && mkdir -p "$keep"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/$name.tgz" -C "$keep" .; }
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
python3 -c 'import torch, nvfuser_direct; print("torch", torch.__version__, "nvfuser", nvfuser_direct.version())' >> "$keep/gpu.txt" 2>&1
git rev-parse HEAD >> "$keep/gpu.txt" 2>&1
pack
versions=("$@")
for ((k = 0; k < ${#versions[@]}; k += group)); do
  chunk=("${versions[@]:k:group}")
  label=$(printf 'group-%02d' $((k / group + 1)))
  need=$((90 + 25 * ${#chunk[@]}))
  left=$((limit - ($(date +%s) - start)))
  if [ "$left" -lt "$need" ]; then
    echo "$label (${chunk[*]}): not run ($left s left of $limit, it needs about $need)" | tee -a "$keep/steps.txt"
    continue
  fi
  builds=()
  for version in "${chunk[@]}"; do builds+=(--build ".gpu/extra/lightning_thunder-$version-py3-none-any.whl"); done
  t0=$(date +%s)
  timeout "$left" python3 -m benchmarks.under_test.builds --package thunder --results "$keep/$label" \
    --work "/tmp/work-$name" --capture --pip-arg=--no-index "${builds[@]}" > "$keep/$label.log" 2>&1
  echo "$label (${chunk[*]}): exit $? in $(($(date +%s) - t0)) s ($(($(date +%s) - start)) s into the call)" | tee -a "$keep/steps.txt"
  pack
done
