#!/usr/bin/env bash
# How the recorded H200 data sets are produced, in the lab copy of this repo (it has no git
# history, so each state gets its own throwaway commit, whose hash asv stores).
#
#   bash data/record.sh STATE [STATE ...]             each state once, in order, into results/
#   RECORD_REPEATS=R bash data/record.sh --pair BASE_STATE HEAD_STATE
#                     a PR verdict's replicates: base, head, base, head, ... (R of each, default 2,
#                     each its own process) into results/rep-1/ .. results/rep-R/
#     baseline, baseline-again, stock-N   stock Thunder (any number of A/A runs of the same code)
#     regressed         Thunder's nvFuser executor fuses the forward only (backward unfused)
#     slow-SIDE-PCT     stock code with a known slowdown injected on one side, SIDE thunder or
#                       nvfuser, PCT percent of that side's kernel time (slow-thunder-2,
#                       slow-nvfuser-5; benchmarks/engine/slowdown.py); in every fusion
#     slow-FUSION-SIDE-PCT   the same in one fusion of the catalog (slow-softmax_bwd-thunder-10)
#     broken-executor   Thunder 0.2.5, whose nvFuser executor does not work with nvFuser 0.2.36
#                       (every Thunder point fails): needs its wheel in .gpu/extra/
#     thunder-VERSION   stock code with that Thunder (a nightly: thunder-0.2.7.dev20260201),
#                       its wheel in .gpu/extra/ (pip download --no-deps lightning-thunder==V)
#     nvfuser-VERSION   stock code with that nvFuser build (nvfuser-0.2.35.dev20260215), its
#                       slimmed wheel (wheels.sh) in .gpu/wheels/, .gpu/extra/ or $RECORD_WHEELS,
#                       linked to the image's NVRTC as setup.sh links the carried one
# RECORD_VARIANTS (e.g. thunder-prims,thunder-func) measures a subset; nvFuser always runs.
# RECORD_TURNS=1 starts every process at once as one job's turns (builds side by side, timed
# rounds one process at a time: benchmarks/engine/turns.py), as the PR workflows do: a pair's
# repeats, or without --pair every STATE (a history's nightlies: one process each, in order).
# RECORD_CAPTURE=1 (with --pair) has repeat 1 capture, as bench-pr.yml's repeat 1 does; a
# RMSNORM_BENCH_CACHE_ROOT in the environment is the job's compile cache (run_gpu.sh).
#
# Each process runs `benchmarks/run_gpu.sh --size-set pr` under its own time limit
# (RECORD_TIME_LIMIT, default 180 s) and prints its wall time. Without --pair, state S logs to
# results/logs/S.log. With --pair, both commits are made first (one per side: every repeat of
# a side measures the same commit), then repeat r of each side runs with --results
# results/rep-r (each rep-r/ a complete asv results folder) and logs to
# results/logs/S-rep<r>.log; the context variants (eager, torch-compile) run in repeat 1 only,
# later repeats measure nvfuser,thunder-prims,thunder-func (RECORD_VARIANTS, when set, applies
# to every repeat). To fit a 2+2 verdict in 5 minutes of GPU time, only the first process
# probes the GPU for the machine name (the others get --machine), and each process's asv store
# (run_gpu.sh --phase store: no GPU, ~5 s) runs in the background while the next process starts
# up; two stores never run at once. results/logs/timing.txt lists each measurement's and each
# store's wall time with its start and end (epoch seconds).
# After every process, results/ is packed into $OUT/h200-results.tgz (when OUT is set): the lab
# returns at most 8 files a call, and a later process that fails or overruns must not cost an
# earlier one. Commit what comes back under data/ unchanged, and say in data/README.md which
# commit is which state.
set -uo pipefail
usage() { sed -n '4,22p' "$0" >&2; exit 2; }
[ $# -gt 0 ] || usage
pair=0
if [ "$1" = --pair ]; then
  [ $# -eq 3 ] || usage
  [ "$2" != "$3" ] || { echo "data/record.sh: --pair needs two different state names" >&2; exit 2; }
  pair=1
  shift
  repeats=${RECORD_REPEATS:-2}
  case "$repeats" in ''|*[!0-9]*|0) echo "data/record.sh: RECORD_REPEATS must be a whole number >= 1" >&2; exit 2 ;; esac
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 2
git_lab=(git -c user.name=perfbot -c user.email=perfbot@localhost)
[ -d .git ] || { git init -q -b main . && "${git_lab[@]}" add -A && "${git_lab[@]}" commit -qm "lab copy"; }
mkdir -p results/logs
declare -A sha_of args_of pythonpath_of

# prepare STATE: check it, install what it needs, snapshot the tree as its commit.
prepare() {
  local state=$1 variant=stock slowdown="" pythonpath="" message side pct version wheel rest fusion
  case "$state" in
    baseline|baseline-again|stock-*) message="$state: stock Thunder" ;;
    regressed) variant=unfused-backward; message="regressed: Thunder's nvFuser executor fuses the forward only" ;;
    slow-thunder-*|slow-nvfuser-*)
      side=${state#slow-}; side=${side%-*}; pct=${state##*-}
      case "$pct" in ''|*[!0-9]*) echo "data/record.sh: $state: PCT must be a whole number" >&2; exit 2 ;; esac
      slowdown="$side:$(awk "BEGIN{print $pct/100}")"
      message="$state: stock code, $side made $pct% slower by an injected kernel" ;;
    slow-*-thunder-*|slow-*-nvfuser-*)
      # slow-FUSION-SIDE-PCT: one fusion of the catalog only (slow-softmax_bwd-thunder-10)
      rest=${state#slow-}; pct=${rest##*-}; rest=${rest%-*}; side=${rest##*-}; fusion=${rest%-*}
      case "$pct" in ''|*[!0-9]*) echo "data/record.sh: $state: PCT must be a whole number" >&2; exit 2 ;; esac
      slowdown="$fusion/$side:$(awk "BEGIN{print $pct/100}")"
      message="$state: stock code, $side of $fusion made $pct% slower by an injected kernel" ;;
    broken-executor|thunder-*)
      version=${state#thunder-}; [ "$state" != broken-executor ] || version=0.2.5
      wheel=$(ls .gpu/extra/lightning_thunder-"$version"-*.whl 2>/dev/null | head -1)
      [ -n "$wheel" ] || { echo "data/record.sh: $state needs .gpu/extra/lightning_thunder-$version-*.whl" >&2; exit 2; }
      pythonpath=/tmp/thunder-$version
      rm -rf "$pythonpath" && python3 -m pip install -q --no-index --no-deps --target "$pythonpath" "$wheel" || exit 2
      message="$state: stock code, Thunder $version from its wheel"
      [ "$state" != broken-executor ] || message="$state: Thunder 0.2.5 (no usable nvFuser executor on nvFuser 0.2.36)" ;;
    nvfuser-*)
      version=${state#nvfuser-}
      wheel=$(ls .gpu/wheels/nvfuser_*-"$version"-*.whl .gpu/extra/nvfuser_*-"$version"-*.whl \
        ${RECORD_WHEELS:+"$RECORD_WHEELS"/nvfuser_*-"$version"-*.whl} 2>/dev/null | head -1)
      [ -n "$wheel" ] || { echo "data/record.sh: $state needs nvfuser_*-$version-*.whl in .gpu/wheels, .gpu/extra or \$RECORD_WHEELS" >&2; exit 2; }
      pythonpath=/tmp/nvfuser-$version
      rm -rf "$pythonpath" && python3 -m pip install -q --no-index --no-deps --target "$pythonpath" "$wheel" || exit 2
      # The slimmed wheel lacks its NVRTC: point the names it wants where setup.sh pointed the
      # carried build's (the image's copy).
      nvrtc=$(readlink -f /tmp/site/nvfuser_*.libs/libnvrtc-*.so* 2>/dev/null | head -1)
      [ -n "$nvrtc" ] || { echo "data/record.sh: $state: source .gpu/setup.sh first (no linked NVRTC in /tmp/site)" >&2; exit 2; }
      # (0.2.35 links the image's libnvrtc.so.13 by its plain name: nothing to link there.)
      libs=$(ls -d "$pythonpath"/nvfuser_*.libs 2>/dev/null | head -1)
      for want in $(readelf -d "$pythonpath"/nvfuser_common/lib/libnvfuser_codegen.so | sed -n 's/.*\[\(libnvrtc-[^]]*\)\].*/\1/p'); do
        [ -n "$libs" ] || { echo "data/record.sh: $state wants $want but has no nvfuser_*.libs folder" >&2; exit 2; }
        ln -sf "$nvrtc" "$libs/$want"
      done
      # The build measured must be the one asked for: a shadowed overlay would measure another.
      got=$(PYTHONPATH=$pythonpath:${PYTHONPATH:-} python3 -W ignore -c 'import nvfuser_direct; print(nvfuser_direct.version())' 2>&1) \
        || { echo "data/record.sh: $state: nvFuser $version does not import: $got" >&2; exit 2; }
      case "$got" in "${version%%.dev*}"*) ;; *) echo "data/record.sh: $state imports nvFuser $got" >&2; exit 2 ;; esac
      message="$state: stock code, nvFuser $version ($got) from its wheel" ;;
    *) echo "data/record.sh: unknown state $state" >&2; exit 2 ;;
  esac
  # Snapshot the tree that runs (the lab may keep an older .git between calls).
  "${git_lab[@]}" add -A && "${git_lab[@]}" commit -q --allow-empty -m "$message" || exit 2
  sha_of[$state]=$(git rev-parse HEAD)
  pythonpath_of[$state]=$pythonpath
  args_of[$state]="--size-set pr --thunder-variant $variant --commit ${sha_of[$state]}${slowdown:+ --slowdown $slowdown}"
  echo "== $state at ${sha_of[$state]}"
}

worst=0 total_s=0 last_status=0
# measure STATE LOG [run_gpu.sh arguments...]: one process, under its own time limit.
measure() {
  local state=$1 log=$2 status=0 t0 t1 wall pythonpath=${pythonpath_of[$1]}
  shift 2
  local args
  read -ra args <<< "${args_of[$state]}"
  args+=("$@")
  t0=$(date +%s.%N)
  # A Thunder or nvFuser of another version shadows the carried one for this state only.
  PYTHONPATH=${pythonpath:+$pythonpath:}${PYTHONPATH:-} ASV_PYTHONPATH=${pythonpath:+$pythonpath:}${ASV_PYTHONPATH:-} \
    timeout "${RECORD_TIME_LIMIT:-180}" bash benchmarks/run_gpu.sh "${args[@]}" 2>&1 \
    | tee "$log" || status=$?
  t1=$(date +%s.%N)
  wall=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
  total_s=$(awk "BEGIN{printf \"%.1f\", $total_s + $wall}")
  echo "== $state finished with status $status: $wall s wall (${args[*]})"
  printf '%s\t%s\t%s s\tstatus %s\t%s to %s\t%s\n' "$(basename "$log" .log)" "${sha_of[$state]}" "$wall" "$status" \
    "$t0" "$t1" "${args[*]}" >> results/logs/timing.txt
  last_status=$status
  [ "$status" -eq 0 ] || worst=$status
  git log --format='%H %s' > results/logs/commits.txt
  # In pair mode the pack waits for the store running in the background (wait_store).
  if [ -n "${OUT:-}" ] && [ "$pair" -eq 0 ]; then
    tar -czf "$OUT/h200-results.tgz" -C results .
  fi
}

# in_turns LABEL: the processes in `groups` (LOG CMD... ::: LOG CMD..., as turns.py takes them)
# started at once as one job's turns: each builds beside the others, then times in its turn,
# in order (benchmarks/engine/turns.py, as the PR workflows run them); then the stores in
# `stores` ("NAME CMD"), one at a time, and results/ packed. RECORD_TIME_LIMIT is a process's.
in_turns() {
  local label=$1 t0 t1 status line name markers
  markers=results/turns/$(date +%s%N)  # one folder a job: turns.py refuses a used one
  t0=$(date +%s.%N)
  status=0
  timeout $(( ${RECORD_TIME_LIMIT:-180} * ${#stores[@]} )) python3 -m benchmarks.engine.turns "$markers" "${groups[@]}" || status=$?
  t1=$(date +%s.%N)
  total_s=$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")
  printf 'turns\t%s processes\t%s s\tstatus %s\t%s to %s\n' "${#stores[@]}" "$total_s" "$status" "$t0" "$t1" >> results/logs/timing.txt
  echo "== $label: ${#stores[@]} processes in turns, status $status: $total_s s"
  [ "$status" -eq 0 ] || worst=$status
  git log --format='%H %s' > results/logs/commits.txt
  for line in "${stores[@]}"; do
    name=${line%% *}
    t0=$(date +%s.%N)
    status=0
    eval "timeout ${RECORD_TIME_LIMIT:-180} ${line#* }" >> "results/logs/$name.log" 2>&1 || status=$?
    t1=$(date +%s.%N)
    printf '%s\t-\t%s s\tstatus %s\tasv store, %s to %s\n' "$name" "$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" "$status" "$t0" "$t1" >> results/logs/timing.txt
    [ "$status" -eq 0 ] || worst=$status
  done
  [ -z "${OUT:-}" ] || tar -czf "$OUT/h200-results.tgz" -C results .
}
# add_turn STATE LOG [run_gpu.sh arguments...]: one more process for in_turns, and its store.
add_turn() {
  local state=$1 log=$2 pythonpath=${pythonpath_of[$1]} args run
  shift 2
  read -ra args <<< "${args_of[$state]}"
  run=(env "PYTHONPATH=${pythonpath:+$pythonpath:}${PYTHONPATH:-}" "ASV_PYTHONPATH=${pythonpath:+$pythonpath:}${ASV_PYTHONPATH:-}"
       bash benchmarks/run_gpu.sh "${args[@]}" "$@")
  [ ${#groups[@]} -eq 0 ] || groups+=(:::)
  groups+=("$log" "${run[@]}" --phase measure)
  stores+=("$(basename "$log" .log) $(printf '%q ' "${run[@]}") --phase store")
}
groups=() stores=()

if [ "$pair" -eq 0 ]; then
  extra=()
  [ -z "${RECORD_VARIANTS:-}" ] || extra+=(--variants "$RECORD_VARIANTS")
  if [ "${RECORD_TURNS:-0}" = 1 ]; then
    # Every state's commit first, in order (asv orders a history by commit date).
    for state in "$@"; do prepare "$state"; done
    for state in "$@"; do add_turn "$state" "results/logs/$state.log" "${extra[@]}"; done
    in_turns "$*"
    exit "$worst"
  fi
  for state in "$@"; do
    prepare "$state"
    measure "$state" "results/logs/$state.log" "${extra[@]}"
  done
  exit "$worst"
fi

base=$1 head=$2
pair_t0=$(date +%s.%N)
prepare "$base"
prepare "$head"
machine="" store_pid="" store_log=""
# wait_store: collect the asv store running in the background (if any), then pack results/.
wait_store() {
  local status
  if [ -n "$store_pid" ]; then
    wait "$store_pid"
    status=$(cat "$store_log.status" 2>/dev/null || echo 1)
    rm -f "$store_log.status"
    echo "== $(basename "$store_log" .log): asv store finished with status $status: $(grep '^== asv stored' "$store_log" | tail -1)"
    [ "$status" -eq 0 ] || worst=$status
    store_pid=""
  fi
  [ -z "${OUT:-}" ] || tar -czf "$OUT/h200-results.tgz" -C results .
}
# RECORD_TURNS=1: the pair's processes as one job's turns (in_turns), in the job's order.
if [ "${RECORD_TURNS:-0}" = 1 ]; then
  for rep in $(seq 1 "$repeats"); do
    variants=${RECORD_VARIANTS:-}
    [ -n "$variants" ] || [ "$rep" -eq 1 ] || variants=nvfuser,thunder-prims,thunder-func
    for state in "$base" "$head"; do
      extra=(--results "results/rep-$rep")
      [ -z "$variants" ] || extra+=(--variants "$variants")
      [ "${RECORD_CAPTURE:-0}" != 1 ] || [ "$rep" -ne 1 ] || extra+=(--capture)
      add_turn "$state" "results/logs/$state-rep$rep.log" "${extra[@]}"
    done
  done
  in_turns "$base/$head"
  exit "$worst"
fi
for rep in $(seq 1 "$repeats"); do
  variants=${RECORD_VARIANTS:-}
  # The context baselines (eager, torch.compile) say nothing about Thunder against nvFuser:
  # one measurement of them per side is enough.
  [ -n "$variants" ] || [ "$rep" -eq 1 ] || variants=nvfuser,thunder-prims,thunder-func
  for state in "$base" "$head"; do
    extra=(--results "results/rep-$rep")
    [ -z "$variants" ] || extra+=(--variants "$variants")
    # The GPU probe that names the machine runs in the first process only.
    [ -z "$machine" ] || extra+=(--machine "$machine")
    # RECORD_CAPTURE=1: repeat 1 captures, as bench-pr.yml's does (RMSNORM_BENCH_CAPTURE_FUSIONS).
    [ "${RECORD_CAPTURE:-0}" != 1 ] || [ "$rep" -ne 1 ] || extra+=(--capture)
    log=results/logs/$state-rep$rep.log
    echo "== repeat $rep/$repeats: $state (measure starts at $(date +%s.%N))"
    measure "$state" "$log" "${extra[@]}" --phase measure
    if [ -z "$machine" ]; then
      machine=$(find "results/rep-$rep" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | head -1)
      [ -z "$machine" ] || extra+=(--machine "$machine")
    fi
    wait_store
    [ "$last_status" -eq 0 ] || continue  # no record to store
    # asv only stores the record (no GPU, ~5 s): it runs while the next process starts up
    # (imports), never beside another store, which would share asv's files in results/rep-N.
    store_log=$log
    read -ra args <<< "${args_of[$state]}"
    pythonpath=${pythonpath_of[$state]}
    (
      t0=$(date +%s.%N)
      status=0
      PYTHONPATH=${pythonpath:+$pythonpath:}${PYTHONPATH:-} ASV_PYTHONPATH=${pythonpath:+$pythonpath:}${ASV_PYTHONPATH:-} \
        timeout "${RECORD_TIME_LIMIT:-180}" bash benchmarks/run_gpu.sh "${args[@]}" "${extra[@]}" --phase store \
        >> "$log" 2>&1 || status=$?
      t1=$(date +%s.%N)
      printf '%s\t%s\t%s s\tstatus %s\tasv store, %s to %s\n' "$(basename "$log" .log)" "${sha_of[$state]}" \
        "$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" "$status" "$t0" "$t1" >> results/logs/timing.txt
      echo "$status" > "$log.status"
    ) &
    store_pid=$!
  done
done
wait_store
pair_wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $pair_t0}")
echo "== pair $base -> $head, $repeats repeats: $total_s s measuring in its $(( 2 * repeats )) processes (asv stores beside the next start-up), $pair_wall s in all"
printf 'pair %s %s, %s repeats: %s s measuring, %s s in all\n' "$base" "$head" "$repeats" "$total_s" "$pair_wall" \
  >> results/logs/timing.txt
[ -z "${OUT:-}" ] || tar -czf "$OUT/h200-results.tgz" -C results .
exit "$worst"
