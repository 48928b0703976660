#!/usr/bin/env bash
# Run one size set of the RMSNorm-backward suite on this GPU machine, end to end, and print the
# summary table. The suite measures first (every sample into the provenance record,
# results/<machine>/<commit>.provenance.jsonl); asv then stores that record as its results
# (results/<machine>/...json, samples kept) by replaying it (docs/DATA.md).
#
#   bash benchmarks/run_gpu.sh [--size-set pr|nightly|smoke] [--commit SHA] [--results DIR]
#                              [--machine NAME] [--thunder-variant stock|unfused-backward]
#                              [--rounds N] [--variants nvfuser,thunder-prims,...]
#                              [--slowdown thunder:0.05|nvfuser:0.02]  (a known, real slowdown)
#                              [--phase all|measure|store] [--asv-repo DIR] [--capture]
#                              [--fusions all|rmsnorm_bwd,softmax_bwd,...]
#
# --fusions picks fusions of the catalog (benchmarks/fusions/catalog.py; default all of them);
# --slowdown FUSION/SIDE:FRACTION slows one fusion only.
# --phase measure stops after the provenance record; --phase store (the same arguments) then
# has asv store it, touching no GPU: a caller may let it run while the next process starts.
# --machine NAME skips the probe that derives the name from the GPU's (a torch import, ~3.5 s
# on the H200); without a GPU the measurement still stops with exit 3.
# --capture: the measuring process, after all its timed rounds, writes what ran inside every
# fusion it measured that RMSNORM_BENCH_CAPTURE_FUSIONS names (unset: all of them; definitions,
# traces, saved tensors, nvFuser's profile: benchmarks/engine/capture.py), from the variants it
# built and timed, to results/<machine>/<commit>.captures/[<fusion>/], where the bot finds them.
# RMSNORM_BENCH_CACHE_ROOT=DIR (set by the PR workflows, a folder per job) keeps nvFuser's
# kernel cache and the inductor cache there, keyed by the build (benchmarks/engine/caches.py),
# so a later process of the job skips what an earlier one compiled.
# Each step's start and end (epoch seconds) are appended to
# results/<machine>/<commit>.steps.jsonl (python3 -m benchmarks.engine.phases prints a job's).
# RMSNORM_BENCH_TURNS=DIR and RMSNORM_BENCH_TURN=K/N (set by benchmarks/engine/turns.py, which
# starts a job's measuring processes at once) make this process the K-th of N: it builds and
# checks every point beside the others, then waits until all have built and the (K-1)-th has
# had the GPU, and only then checks the GPU, times and captures (the GPU checks move into the
# turn: before it, the job's other processes are building).
# --asv-repo DIR is the git repository asv looks the commit up in (default: this one); the
# package-under-test command (benchmarks/under_test) passes its repository of keys.
# Before and after the measurement, benchmarks/runner_check.py appends the GPU's fitness (clocks,
# throttling, other processes, free memory) to results/<machine>/<commit>.hygiene.jsonl.
# asv's forkserver is safe here: its server only imports the suite (which imports no torch) and
# no CUDA is touched while asv stores the replayed record. With "spawn", each of the ~260
# benchmark processes paid seconds of interpreter start-up.
#
# Needs: a CUDA GPU, torch, nvFuser (nvfuser_direct), Thunder and asv importable by python3.
set -euo pipefail

size_set=pr commit="" results=results machine="" thunder_variant=stock rounds=25 phase=all asv_repo="" capture=0
while [ $# -gt 0 ]; do
  case "$1" in
    --size-set) size_set=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --machine) machine=$2; shift 2 ;;
    --thunder-variant) thunder_variant=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --variants) export RMSNORM_BENCH_VARIANTS=$2; shift 2 ;;
    --slowdown) export RMSNORM_BENCH_SLOWDOWN=$2; shift 2 ;;
    --fusions) export RMSNORM_BENCH_FUSIONS=$2; shift 2 ;;
    --phase) phase=$2; shift 2 ;;
    --asv-repo) asv_repo=$2; shift 2 ;;
    --capture) capture=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ {print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "run_gpu.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$phase" in all|measure|store) ;; *) echo "run_gpu.sh: --phase $phase: all, measure or store" >&2; exit 2 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
[ -n "$commit" ] || commit=$(git rev-parse HEAD)
gpu="machine name given"
if [ -z "$machine" ]; then
  if ! gpu=$(python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0))" 2>&1); then
    echo "run_gpu.sh: no usable GPU here: $gpu" >&2
    exit 3
  fi
  # The asv machine name carries the GPU model (asv's machine.json has no GPU fields).
  machine=$(echo "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-$//')
fi
case "$results" in /*) ;; *) results=$root/$results ;; esac
mkdir -p "$results/$machine"
record="$results/$machine/$commit.provenance.jsonl"
conf=$(mktemp --suffix=.json -p "$root" .asv-run-XXXX)
trap 'rm -f "$conf"' EXIT
python3 - "$conf" "$results" "$asv_repo" <<'PY'
import json, sys
conf = json.load(open("asv.conf.json"))
conf["results_dir"] = sys.argv[2]
if sys.argv[3]:
    conf["repo"] = sys.argv[3]
json.dump(conf, open(sys.argv[1], "w"))
PY

echo "== fusions '${RMSNORM_BENCH_FUSIONS:-all}': size set '$size_set' on $gpu (machine '$machine'), commit $commit, thunder '$thunder_variant', slowdown '${RMSNORM_BENCH_SLOWDOWN:-none}', phase $phase"
export RMSNORM_BENCH_SIZES=$size_set RMSNORM_BENCH_ROUNDS=$rounds RMSNORM_BENCH_MACHINE=$machine
export RMSNORM_BENCH_THUNDER_VARIANT=$thunder_variant RMSNORM_BENCH_RECORD=$record
export RMSNORM_BENCH_COMMIT=$commit
steps="$results/$machine/$commit.steps.jsonl"
# step NAME COMMAND...: run it, and append its start, end and exit status to the steps file.
step() {
  local name=$1 t0 t1 status=0
  shift
  t0=$(date +%s.%N)
  "$@" || status=$?
  t1=$(date +%s.%N)
  printf '{"step": "%s", "start": %s, "end": %s, "status": %d}\n' "$name" "$t0" "$t1" "$status" >> "$steps"
  return "$status"
}
start=$(date +%s)
if [ "$phase" != store ]; then
  if [ -n "${RMSNORM_BENCH_CACHE_ROOT:-}" ]; then
    # One of a job's turns builds at the same time as the others: a cache of its own, so that
    # no two processes ever write one kernel cache at once.
    cache_root=$RMSNORM_BENCH_CACHE_ROOT${RMSNORM_BENCH_TURN:+/turn-${RMSNORM_BENCH_TURN%%/*}}
    mkdir -p "$cache_root"
    cache_env=$(python3 -m benchmarks.engine.caches "$cache_root")
    eval "$cache_env"
    echo "== compile caches: ${TMPDIR:-none} ${TORCHINDUCTOR_CACHE_DIR:-}"
  fi
  if [ "$capture" -eq 1 ]; then
    # A diagnostic: a failed capture step is written down beside it, never a lost measurement.
    rm -rf -- "$results/$machine/$commit.captures"
    export RMSNORM_BENCH_CAPTURE_DIR="$results/$machine/$commit.captures"
  fi
  # 1. Measure (all variants interleaved, one process), appending the provenance record,
  # between two checks of the GPU (a failed check marks the run; it does not stop it).
  hygiene="$results/$machine/$commit.hygiene.jsonl"
  # One of a job's turns (RMSNORM_BENCH_TURNS, benchmarks/engine/turns.py) checks the GPU
  # itself, at its turn's start and end: before then, the job's other processes are building.
  turns=0
  [ -z "${RMSNORM_BENCH_TURNS:-}" ] || { turns=1; export RMSNORM_BENCH_HYGIENE=$hygiene; }
  [ "$turns" -eq 1 ] || step check_before python3 -m benchmarks.runner_check --when before --commit "$commit" --out "$hygiene"
  # A record written and a failure after it (the capture, which comes after the record) loses
  # nothing measured: a warning, and the run goes on.
  before=$(wc -l < "$record" 2>/dev/null || echo 0)
  measure_status=0
  RMSNORM_BENCH_STEPS=$steps step measure python3 -m benchmarks.engine.measure || measure_status=$?
  if [ "$measure_status" -ne 0 ]; then
    if [ "$(wc -l < "$record" 2>/dev/null || echo 0)" -gt "$before" ]; then
      echo "run_gpu.sh: warning: the measuring process failed after writing its record (exit $measure_status: the capture); the measurement stands" >&2
    else
      exit "$measure_status"
    fi
  fi
  [ "$turns" -eq 1 ] || step check_after python3 -m benchmarks.runner_check --when after --commit "$commit" --out "$hygiene"
  echo "== measurement took $(( $(date +%s) - start )) s"
  [ "$phase" = all ] || exit 0
fi
measured=$(date +%s)
# asv's files are written only here, so a store running beside the next measurement (which
# writes nothing but its own record) never races it.
asv machine --config "$conf" --yes --machine "$machine" --os "$(uname -sr)" --arch "$(uname -m)" \
  --cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" --num_cpu "$(nproc)" \
  --ram "$(awk '/MemTotal/{print $2}' /proc/meminfo)" >/dev/null
# 2. asv stores that record as its results (setup_cache replays it): asv's reporting phase
# starts one process per benchmark and parameter (~260), so measuring inside it put a finished
# measurement at the mercy of asv's wall time (measured on the H200: seconds per process when
# the cache came from a live measurement).
# asv exits 2 when a benchmark failed (a variant that did not build, or gave a wrong result):
# its results file still holds the failed points, so the summary is printed either way.
asv_status=0
store() {
  RMSNORM_BENCH_REPLAY=$record \
  asv run --config "$conf" -E existing:python3 --set-commit-hash "$commit" --record-samples \
    --launch-method forkserver --machine "$machine" --show-stderr --bench '^bench_(rmsnorm_bwd|fusions)\.' \
    | while IFS= read -r line; do printf '%s %s\n' "$(date +%T)" "$line"; done
}
step store store || asv_status=$?
echo "== asv stored the results in $(( $(date +%s) - measured )) s; $(( $(date +%s) - start )) s in all (asv status $asv_status)"
python3 -m benchmarks.engine.summary "$record"
exit "$asv_status"
