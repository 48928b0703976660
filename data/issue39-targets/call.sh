#!/usr/bin/env bash
# Issue 39's targets on the lab's GPU: PR jobs before and after issue 39 on one machine, from
# empty compile caches (data/h100-issue39/job.sh), one after the other in one device call.
#   source .gpu/setup.sh && bash data/issue39-targets/call.sh NAME LIMIT STEP...
# STEP is WHICH:FUSIONS (WHICH before, after or turns as job.sh takes it: after:all,
# turns:rmsnorm_bwd, before:all, ...), or tests:gpu (the GPU tests, 150 s at most). A step
# starts only while LIMIT seconds (the call's own limit, less a margin) leave it its usual
# length (its `need`, below); what ran is kept under /tmp/keep-NAME and packed into
# $OUT/NAME.tgz after every step, so a call cut short keeps what finished.
set -uo pipefail
name=$1 limit=$2
shift 2
keep=/tmp/keep-$name
rm -rf "$keep" results && mkdir -p "$keep"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/$name.tgz" -C "$keep" .; }
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$keep/gpu.txt" 2>&1
python3 -c 'import torch, thunder, nvfuser_direct; print("torch", torch.__version__, "thunder", thunder.__version__, "nvfuser", nvfuser_direct.version())' >> "$keep/gpu.txt" 2>&1
git rev-parse HEAD >> "$keep/gpu.txt"
pack
for step in "$@"; do
  which=${step%%:*} fusions=${step#*:}
  case "$step" in
    tests:gpu) need=60 ;;
    turns:all) need=240 ;;
    turns:*) need=100 ;;
    *:all) need=330 ;;
    *) need=150 ;;
  esac
  left=$(( limit - ($(date +%s) - start) ))
  if [ "$left" -lt "$need" ]; then
    echo "$step: not run ($left s left of $limit, it needs about $need)" | tee -a "$keep/steps.txt"
    continue
  fi
  if [ "$step" = tests:gpu ]; then
    t0=$(date +%s)
    timeout 150 python3 -m pytest -m gpu tests/gpu --noconftest -o addopts="" -p no:cacheprovider -q > "$keep/gpu-tests.log" 2>&1
    echo "$step: exit $? in $(( $(date +%s) - t0 )) s" | tee -a "$keep/steps.txt" "$keep/gpu-tests.log"
    pack
    continue
  fi
  folder="$fusions-$which"
  [ "$fusions" != all ] || folder="catalog-$which"
  timeout "$left" bash data/h100-issue39/job.sh "$which" "$fusions" "$keep" "$folder"
  echo "$step: exit $? ($(( $(date +%s) - start )) s into the call)" | tee -a "$keep/steps.txt"
  [ "$which" != before ] || cp -r .old-tree/results/. "$keep/$folder/" 2>/dev/null
  pack
done
