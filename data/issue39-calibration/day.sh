#!/usr/bin/env bash
# Issue 39, part 6 on the lab's GPU: one sitting of A/A runs of the catalog's `pr` set with the
# suite's timer, laid out as one call of calibrate-package.yml lays them out, so that the
# onboarding path's own pooling script fits the kind's model from them (docs/CALIBRATION.md,
# "Onboarding a GPU kind": the H200 is onboarded as any kind is); then, optionally, made
# slowdowns (the suite's hook, real sleep kernels) that check the power the calibration claims.
#
#   source .gpu/setup.sh && bash data/issue39-calibration/day.sh RUNS [SLOWDOWN ...]
#
# RUNS A/A runs (0 for none), each `benchmarks/run_gpu.sh --size-set pr` in its own process at
# this checkout's commit with every variant, as calibrate-package.yml's measure step runs them,
# into results/calibration/<call>/run-<K>/ (<call>: this sitting's UTC minute, a number, as a
# run id is), each under its own 200 s limit, with the job's compile cache. Then each SLOWDOWN
# (FUSION/SIDE:FRACTION, e.g. softmax_bwd/thunder:0.02 and layernorm_bwd/nvfuser:0.02) once,
# into results/calibration-slow/<call>/<fusion>-<side>/. results/ is packed into $OUT after
# every process, so a call cut short keeps what finished. Commit what comes back as
# data/<machine>-calibration/<call>/ (the slowdowns as data/<machine>-calibration-slow/<call>/)
# and sit again on another day: two sittings of six runs are the issue's bar. Then
#   bash .github/scripts/calibration-evidence.sh <machine>
# refits noise/<machine>.json on every run, marks the fusions its own runs cannot calibrate
# and runs the held-out check.
set -uo pipefail
runs=${1:-}
case "$runs" in ''|*[!0-9]*) echo "day.sh: RUNS must be a whole number (0 for none)" >&2; exit 2 ;; esac
shift
for slow in "$@"; do
  [[ "$slow" =~ ^[a-z_]+/(thunder|nvfuser):0\.[0-9]+$ ]] \
    || { echo "day.sh: $slow: want FUSION/SIDE:FRACTION (softmax_bwd/thunder:0.02)" >&2; exit 2; }
done
call=$(date -u +%Y%m%d%H%M)
commit=$(git rev-parse HEAD) || { echo "day.sh: not in a git checkout" >&2; exit 2; }
export RMSNORM_BENCH_CACHE_ROOT=/tmp/perfbot-compile-cache
mkdir -p "results/calibration/$call" "results/calibration-slow/$call"
pack() { [ -z "${OUT:-}" ] || tar -czf "$OUT/calibration-$call.tgz" -C results calibration calibration-slow; }
printf 'call %s: %s A/A runs of the pr set at %s on %s\n' "$call" "$runs" "$commit" \
  "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)" \
  > "results/calibration/$call/call.txt"
machine=()
worst=0
measure() {  # measure FOLDER LOG [run_gpu.sh arguments]: one process under its own limit
  local folder=$1 log=$2 status=0 t0
  shift 2
  t0=$(date +%s)
  timeout 200 bash benchmarks/run_gpu.sh --size-set pr --commit "$commit" --results "$folder" \
    "${machine[@]}" "$@" > "$log" 2>&1 || status=$?
  echo "$(basename "$log" .log): exit $status in $(( $(date +%s) - t0 )) s" \
    | tee -a "results/calibration/$call/call.txt"
  [ "$status" -eq 0 ] || worst=$status
  if [ "$status" -eq 3 ]; then  # run_gpu.sh: no usable GPU stack; the next would say the same
    pack
    echo "day.sh: no usable GPU stack here (see $log): stopped" >&2
    exit 3
  fi
  if [ ${#machine[@]} -eq 0 ] && [ -d "$folder" ]; then
    # The first process probed the GPU for the asv machine name; the others reuse it.
    found=$(find "$folder" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | head -1)
    [ -z "$found" ] || machine=(--machine "$found")
  fi
  pack
}
for k in $(seq 1 "$runs"); do
  measure "results/calibration/$call/run-$k" "results/calibration/$call/run-$k.log"
done
for slow in "$@"; do
  name=${slow%%:*}
  measure "results/calibration-slow/$call/${name/\//-}" "results/calibration-slow/$call/${name/\//-}.log" \
    --slowdown "$slow"
done
exit "$worst"
