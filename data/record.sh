#!/usr/bin/env bash
# How the recorded H200 data sets are produced, one asv run per call, in the lab copy of this
# repo (it has no git history, so each state gets its own throwaway commit, whose hash asv stores).
#
#   bash data/record.sh baseline        # stock Thunder
#   bash data/record.sh baseline-again  # stock Thunder again, same code: the A/A pair
#   bash data/record.sh regressed       # Thunder's nvFuser executor fuses the forward only
#
# Results accumulate in results/<machine>/; this state's files are copied to $OUT/r/ (when OUT
# is set) after its run, so a run cut short still returns what finished. Commit what comes back under
# data/h200/results/ unchanged, and say in data/README.md which commit is which state.
set -euo pipefail
state=${1:?usage: data/record.sh baseline|baseline-again|regressed}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
git_lab=(git -c user.name=perfbot -c user.email=perfbot@localhost)
[ -d .git ] || { git init -q -b main .; "${git_lab[@]}" add -A; "${git_lab[@]}" commit -qm "lab copy"; }
case "$state" in
  baseline) variant=stock; message="baseline: stock Thunder" ;;
  baseline-again) variant=stock; message="baseline again (A/A): stock Thunder, same code" ;;
  regressed) variant=unfused-backward; message="regressed: Thunder's nvFuser executor fuses the forward only" ;;
  *) echo "data/record.sh: unknown state $state" >&2; exit 2 ;;
esac
"${git_lab[@]}" commit -q --allow-empty -m "$message"
sha=$(git rev-parse HEAD)
echo "== $state at $sha"
status=0
# asv writes its results file only when the whole run ends: stop it ourselves before the lab's
# 10-minute command limit would, so that the copy below still runs and returns at least the
# provenance record (written as soon as the measurement ends, with every sample).
timeout "${RECORD_TIME_LIMIT:-560}" bash benchmarks/run_gpu.sh --size-set pr --thunder-variant "$variant" \
  || status=$?
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT/r"
  # Only this state's files: what comes back from the lab is limited to 8 files a call.
  cp results/*/"${sha:0:8}"-*.json results/*/"$sha".provenance.jsonl results/*/machine.json \
     results/benchmarks.json "$OUT/r/" 2>/dev/null || true
  git log --format='%H %s' -n 4 > "$OUT/r/commits.txt"
fi
exit "$status"
