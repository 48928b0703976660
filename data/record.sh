#!/usr/bin/env bash
# How the recorded H200 data sets are produced, in the lab copy of this repo (it has no git
# history, so each state gets its own throwaway commit, whose hash asv stores).
#
#   bash data/record.sh STATE [STATE ...]
#     baseline, baseline-again, stock-N   stock Thunder (any number of A/A runs of the same code)
#     regressed         Thunder's nvFuser executor fuses the forward only (backward unfused)
#     slow-SIDE-PCT     stock code with a known slowdown injected on one side, SIDE thunder or
#                       nvfuser, PCT percent of that side's kernel time (slow-thunder-2,
#                       slow-nvfuser-5; benchmarks/rmsnorm_bwd/slowdown.py)
#     broken-executor   Thunder 0.2.5, whose nvFuser executor does not work with nvFuser 0.2.36
#                       (every Thunder point fails): needs its wheel in .gpu/extra/
#     thunder-VERSION   stock code with that Thunder (a nightly: thunder-0.2.7.dev20260201),
#                       its wheel in .gpu/extra/ (pip download --no-deps lightning-thunder==V)
# RECORD_VARIANTS (e.g. thunder-prims,thunder-func) measures a subset; nvFuser always runs.
#
# Each state runs `benchmarks/run_gpu.sh --size-set pr` under its own time limit
# (RECORD_TIME_LIMIT, default 180 s) and its log goes to results/logs/<state>.log. After every
# state, results/ is packed into $OUT/h200-results.tgz (when OUT is set): the lab returns at most
# 8 files a call, and a later state that fails or overruns must not cost an earlier one.
# Commit what comes back under data/ unchanged, and say in data/README.md which commit is
# which state.
set -uo pipefail
[ $# -gt 0 ] || { sed -n '4,16p' "$0" >&2; exit 2; }
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
git_lab=(git -c user.name=perfbot -c user.email=perfbot@localhost)
[ -d .git ] || { git init -q -b main . && "${git_lab[@]}" add -A && "${git_lab[@]}" commit -qm "lab copy"; }
mkdir -p results/logs
worst=0
for state in "$@"; do
  variant=stock slowdown="" pythonpath=""
  case "$state" in
    baseline|baseline-again|stock-*) message="$state: stock Thunder" ;;
    regressed) variant=unfused-backward; message="regressed: Thunder's nvFuser executor fuses the forward only" ;;
    slow-thunder-*|slow-nvfuser-*)
      side=${state#slow-}; side=${side%-*}; pct=${state##*-}
      case "$pct" in ''|*[!0-9]*) echo "data/record.sh: $state: PCT must be a whole number" >&2; exit 2 ;; esac
      slowdown="$side:$(awk "BEGIN{print $pct/100}")"
      message="$state: stock code, $side made $pct% slower by an injected kernel" ;;
    broken-executor|thunder-*)
      version=${state#thunder-}; [ "$state" != broken-executor ] || version=0.2.5
      wheel=$(ls .gpu/extra/lightning_thunder-"$version"-*.whl 2>/dev/null | head -1)
      [ -n "$wheel" ] || { echo "data/record.sh: $state needs .gpu/extra/lightning_thunder-$version-*.whl" >&2; exit 2; }
      pythonpath=/tmp/thunder-$version
      rm -rf "$pythonpath" && python3 -m pip install -q --no-index --no-deps --target "$pythonpath" "$wheel" || exit 2
      message="$state: stock code, Thunder $version from its wheel"
      [ "$state" != broken-executor ] || message="$state: Thunder 0.2.5 (no usable nvFuser executor on nvFuser 0.2.36)" ;;
    *) echo "data/record.sh: unknown state $state" >&2; exit 2 ;;
  esac
  # Snapshot the tree that runs (the lab may keep an older .git between calls).
  "${git_lab[@]}" add -A && "${git_lab[@]}" commit -q --allow-empty -m "$message"
  sha=$(git rev-parse HEAD)
  echo "== $state at $sha"
  args=(--size-set pr --thunder-variant "$variant" --commit "$sha")
  [ -z "$slowdown" ] || args+=(--slowdown "$slowdown")
  [ -z "${RECORD_VARIANTS:-}" ] || args+=(--variants "$RECORD_VARIANTS")
  status=0
  # A Thunder of another version shadows the carried one for this state only.
  PYTHONPATH=${pythonpath:+$pythonpath:}${PYTHONPATH:-} ASV_PYTHONPATH=${pythonpath:+$pythonpath:}${ASV_PYTHONPATH:-} \
    timeout "${RECORD_TIME_LIMIT:-180}" bash benchmarks/run_gpu.sh "${args[@]}" 2>&1 \
    | tee "results/logs/$state.log" || status=$?
  echo "== $state finished with status $status"
  [ "$status" -eq 0 ] || worst=$status
  git log --format='%H %s' > results/logs/commits.txt
  if [ -n "${OUT:-}" ]; then
    tar -czf "$OUT/h200-results.tgz" -C results .
  fi
done
exit "$worst"
