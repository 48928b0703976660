#!/usr/bin/env bash
# A "drifted runner" pair, recorded on the lab H200: the machine changes between the two
# runner checks of the head's measurement, and the checks do not see it.
#
#   source .gpu/setup.sh && bash data/h200-drift/run.sh
#
# In the lab copy of this repo (no git history: each side gets a throwaway commit, as
# data/record.sh makes them), two processes, `pr` size set, all five variants:
#   base  stock Thunder 0.2.6 (the carried one): benchmarks/run_gpu.sh --size-set pr, as
#         data/record.sh measures a state
#   head  Thunder 0.2.7.dev20260201 from .gpu/extra/lightning_thunder-0.2.7.dev20260201-py3-none-
#         any.whl (installed with --no-deps into /tmp, put first on PYTHONPATH and
#         ASV_PYTHONPATH), measured as run_gpu.sh's phases, one by one:
#           runner_check --when before; start the neighbour (data/h200-drift/neighbour.py:
#           another process copying 1 GiB on the same GPU, a DRIFT_SLEEP_MS sleep between
#           copies) and wait for its first copy; python3 -m benchmarks.rmsnorm_bwd.measure with
#           the environment run_gpu.sh sets; stop the neighbour and wait for it; runner_check
#           --when after; then the asv store (run_gpu.sh --phase store, the same arguments).
# The neighbour runs only between the two checks: both pass, yet the head was measured beside
# another process's memory traffic.
#
# Settings (environment):
#   DRIFT_SLEEP_MS     the neighbour's sleep between copies, ms (default 20): its duty cycle
#   DRIFT_MIB          the neighbour's buffer size, MiB (default 1024)
#   DRIFT_TIME_LIMIT   seconds for each measurement (the base's whole run_gpu.sh, the head's
#                      measure), default 180; the head's store gets 90 s and the neighbour
#                      stops by itself DRIFT_TIME_LIMIT + 75 s after it starts
# The whole call stays under 9 minutes: 2 x 180 + 90 + 45 (the neighbour's start-up) + checks
# and installs at worst; ~100-130 s a side as measured before (../../data/README.md).
#
# Logs: results/logs/base.log, head.log, neighbour.log (its one-line JSON summary: copies,
# busy_share, copy_ms_median), timing.txt (each step's wall time, epoch seconds), commits.txt
# (which commit is which side). After each process results/ is packed into
# $OUT/h200-drift.tgz (when OUT is set): the lab returns at most 8 files, and a later step
# that fails or overruns must not cost an earlier one. Commit what comes back under
# data/h200-drift/ unchanged and fill in its README.
set -uo pipefail

thunder_version=0.2.7.dev20260201
sleep_ms=${DRIFT_SLEEP_MS:-20}
mib=${DRIFT_MIB:-1024}
limit=${DRIFT_TIME_LIMIT:-180}
store_limit=90
ready_limit=45
case "$sleep_ms" in ''|*[!0-9.]*) echo "run.sh: DRIFT_SLEEP_MS must be a number of ms" >&2; exit 2 ;; esac
case "$mib$limit" in *[!0-9]*) echo "run.sh: DRIFT_MIB and DRIFT_TIME_LIMIT must be whole numbers" >&2; exit 2 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
here=data/h200-drift
wheel=.gpu/extra/lightning_thunder-$thunder_version-py3-none-any.whl
[ -f "$wheel" ] || { echo "run.sh: the head needs $wheel" >&2; exit 2; }
git_lab=(git -c user.name=perfbot -c user.email=perfbot@localhost)
[ -d .git ] || { git init -q -b main . && "${git_lab[@]}" add -A && "${git_lab[@]}" commit -qm "lab copy"; }
mkdir -p results/logs
logs=results/logs
worst=0
neighbour_pid=""

# pack: results/ into $OUT after each process.
pack() {
  git log --format='%H %s' > "$logs/commits.txt"
  [ -z "${OUT:-}" ] || tar -czf "$OUT/h200-drift.tgz" -C results .
}
# step NAME LOG COMMAND...: run one step, append its wall time and status to timing.txt.
step() {
  local name=$1 log=$2 status=0 t0 t1
  shift 2
  t0=$(date +%s.%N)
  "$@" >> "$log" 2>&1 || status=$?
  t1=$(date +%s.%N)
  printf '%s\t%s s\tstatus %s\t%s to %s\n' "$name" "$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" \
    "$status" "$t0" "$t1" >> "$logs/timing.txt"
  echo "== $name: status $status"
  [ "$status" -eq 0 ] || worst=$status
  return "$status"
}
# stop_neighbour: SIGTERM, then wait for it to exit (its GPU memory is freed by then).
stop_neighbour() {
  [ -n "$neighbour_pid" ] || return 0
  local status=0
  kill -TERM "$neighbour_pid" 2>/dev/null
  wait "$neighbour_pid" || status=$?
  echo "== neighbour $neighbour_pid stopped (status $status): $(tail -1 "$logs/neighbour.log")"
  neighbour_pid=""
}
trap stop_neighbour EXIT
trap 'exit 143' TERM INT  # through the EXIT trap: never leave the neighbour copying

# The two sides, each its own commit (the lab may keep an older .git between calls).
"${git_lab[@]}" add -A && "${git_lab[@]}" commit -q --allow-empty \
  -m "drift base: stock Thunder 0.2.6" || exit 2
base=$(git rev-parse HEAD)
pythonpath=/tmp/thunder-$thunder_version
rm -rf "$pythonpath" && python3 -m pip install -q --no-index --no-deps --target "$pythonpath" "$wheel" || exit 2
"${git_lab[@]}" commit -q --allow-empty -m "drift head: Thunder $thunder_version from its wheel, \
measured beside a neighbour copying ${mib} MiB with ${sleep_ms} ms sleeps (between the runner checks)" || exit 2
head=$(git rev-parse HEAD)
echo "== base $base, head $head"
printf 'settings\tDRIFT_SLEEP_MS %s\tDRIFT_MIB %s\tDRIFT_TIME_LIMIT %s\tbase %s\thead %s\n' \
  "$sleep_ms" "$mib" "$limit" "$base" "$head" >> "$logs/timing.txt"

# 1. base: stock, end to end, as data/record.sh measures a state.
step base "$logs/base.log" timeout "$limit" bash benchmarks/run_gpu.sh --size-set pr \
  --thunder-variant stock --commit "$base"
pack

# The head reuses the base's machine name (run_gpu.sh derived it from the GPU's); without
# one, the same probe.
machine=$(find results -mindepth 2 -maxdepth 2 -name "$base.provenance.jsonl" -printf '%h\n' | head -1)
machine=${machine##*/}
if [ -z "$machine" ]; then
  gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name(0))" 2>>"$logs/head.log")
  machine=$(echo "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-$//')
fi
[ -n "$machine" ] || { echo "run.sh: no GPU name for the head's machine" >&2; exit 3; }
mkdir -p "results/$machine"

# 2. head: Thunder's nightly first on both paths, run_gpu.sh's phases one by one with the
# neighbour running between the two checks only.
export PYTHONPATH=$pythonpath${PYTHONPATH:+:$PYTHONPATH}
export ASV_PYTHONPATH=$pythonpath${ASV_PYTHONPATH:+:$ASV_PYTHONPATH}
hygiene=results/$machine/$head.hygiene.jsonl
echo "== head on machine '$machine', Thunder from $pythonpath, neighbour ${mib} MiB / ${sleep_ms} ms"
step head-check-before "$logs/head.log" \
  python3 -m benchmarks.runner_check --when before --commit "$head" --out "$hygiene"

ready=$(mktemp -u /tmp/neighbour-ready.XXXXXX)
DRIFT_SLEEP_MS=$sleep_ms python3 "$here/neighbour.py" --mib "$mib" --seconds "$((limit + ready_limit + 30))" \
  --ready "$ready" > "$logs/neighbour.log" 2>&1 &
neighbour_pid=$!
printf 'neighbour\tstarted\t%s\tpid %s\n' "$(date +%s.%N)" "$neighbour_pid" >> "$logs/timing.txt"
waited=0
while [ ! -e "$ready" ] && kill -0 "$neighbour_pid" 2>/dev/null && [ "$waited" -lt "$((ready_limit * 10))" ]; do
  sleep 0.1
  waited=$((waited + 1))
done
if [ -e "$ready" ]; then
  printf 'neighbour\tcopying\t%s\tafter %s s\n' "$(date +%s.%N)" "$((waited / 10))" >> "$logs/timing.txt"
  rm -f "$ready"
else
  echo "run.sh: warning: the neighbour made no copy within ${ready_limit} s (see $logs/neighbour.log); measuring anyway" >&2
fi

# The environment run_gpu.sh sets for the measurement (--size-set pr, stock, 25 rounds).
step head-measure "$logs/head.log" env RMSNORM_BENCH_SIZES=pr RMSNORM_BENCH_ROUNDS=25 \
  RMSNORM_BENCH_MACHINE="$machine" RMSNORM_BENCH_THUNDER_VARIANT=stock \
  RMSNORM_BENCH_RECORD="$root/results/$machine/$head.provenance.jsonl" RMSNORM_BENCH_COMMIT="$head" \
  timeout "$limit" python3 -m benchmarks.rmsnorm_bwd.measure
measured=$?
stop_neighbour
printf 'neighbour\tstopped\t%s\n' "$(date +%s.%N)" >> "$logs/timing.txt"
step head-check-after "$logs/head.log" \
  python3 -m benchmarks.runner_check --when after --commit "$head" --out "$hygiene"
pack

if [ "$measured" -eq 0 ]; then
  step head-store "$logs/head.log" timeout "$store_limit" bash benchmarks/run_gpu.sh --size-set pr \
    --thunder-variant stock --commit "$head" --machine "$machine" --phase store
fi
pack
tail -n 3 "$logs/base.log" "$logs/head.log"
cat "$logs/timing.txt"
exit "$worst"
