#!/usr/bin/env bash
# How the recorded H200 data sets are produced, in the lab copy of this repo (it has no git
# history, so each state gets its own throwaway commit, whose hash asv stores).
#
#   bash data/record.sh baseline baseline-again regressed
#     baseline        stock Thunder
#     baseline-again  stock Thunder again, same code: the A/A pair
#     regressed       Thunder's nvFuser executor fuses the forward only (backward unfused)
#
# Each state runs `benchmarks/run_gpu.sh --size-set pr` under its own time limit
# (RECORD_TIME_LIMIT, default 180 s) and its log goes to results/logs/<state>.log. After every
# state, results/ is packed into $OUT/h200-results.tgz (when OUT is set): the lab returns at most
# 8 files a call, and a later state that fails or overruns must not cost an earlier one.
# Commit what comes back under data/h200/ unchanged, and say in data/README.md which commit is
# which state.
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: data/record.sh baseline|baseline-again|regressed ..." >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
git_lab=(git -c user.name=perfbot -c user.email=perfbot@localhost)
[ -d .git ] || { git init -q -b main . && "${git_lab[@]}" add -A && "${git_lab[@]}" commit -qm "lab copy"; }
mkdir -p results/logs
worst=0
for state in "$@"; do
  case "$state" in
    baseline) variant=stock; message="baseline: stock Thunder" ;;
    baseline-again) variant=stock; message="baseline again (A/A): stock Thunder, same code" ;;
    regressed) variant=unfused-backward; message="regressed: Thunder's nvFuser executor fuses the forward only" ;;
    *) echo "data/record.sh: unknown state $state" >&2; exit 2 ;;
  esac
  # Snapshot the tree that runs (the lab may keep an older .git between calls).
  "${git_lab[@]}" add -A && "${git_lab[@]}" commit -q --allow-empty -m "$message"
  sha=$(git rev-parse HEAD)
  echo "== $state at $sha"
  status=0
  timeout "${RECORD_TIME_LIMIT:-180}" bash benchmarks/run_gpu.sh --size-set pr \
    --thunder-variant "$variant" --commit "$sha" 2>&1 | tee "results/logs/$state.log" || status=$?
  echo "== $state finished with status $status"
  [ "$status" -eq 0 ] || worst=$status
  git log --format='%H %s' > results/logs/commits.txt
  if [ -n "${OUT:-}" ]; then
    tar -czf "$OUT/h200-results.tgz" -C results .
  fi
done
exit "$worst"
