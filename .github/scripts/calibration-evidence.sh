#!/usr/bin/env bash
# The noise model of one GPU kind and its evidence, from the A/A runs laid out as
# data/MACHINE-calibration/<call>/run-<K>/ (an asv results folder a run; <call> the run id of one
# call of calibrate-package.yml):
#
#   bash .github/scripts/calibration-evidence.sh MACHINE
#
# Run from the root of a fusion-perfbot checkout. calibrate-package.yml's model job runs it on
# its call's runs; run in a clone after copying in both calls' data/ folders, it pools them, which
# is how the model of a kind is made (docs/CALIBRATION.md, "Onboarding a GPU kind"). Over every
# run, the calls in the order of their run ids and each call's runs by K, it writes
#   noise/MACHINE.json                     python -m bot noise --results RUN ... --write-model
#   noise/MACHINE.evidence.toml            the runs, in that order (the model's evidence)
#   data/MACHINE-calibration/noise.txt     that command and what it printed
#   data/MACHINE-calibration/calibrate.txt python -m bot calibrate on the same runs: false
#                                          alarms and power out of sample, each target met or
#                                          not, and each fusion's own (--mark-model writes the
#                                          fusions whose own fall short into the model:
#                                          provisional, shown and not gated on; docs/ALERTS.md)
# and exits 0 when every target is met at 1 and 2 runs a side, 1 when one is missed (everything
# is written either way: one call's 6 runs usually miss; the pooled 12 must not), 2 on bad input,
# or the bot's own exit code when a command fails.
set -euo pipefail
fail() { echo "::error::calibration-evidence.sh: $1" >&2; exit 2; }
[[ $# -eq 1 ]] || fail "usage: calibration-evidence.sh MACHINE (from a fusion-perfbot checkout's root)"
machine=$1
[[ "$machine" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$ ]] || fail "the machine must be a plain name"
dir="data/$machine-calibration"
[[ -d "$dir" && ! -L "$dir" ]] || fail "no folder $dir: copy the calls' data/ folders in first"

calls=()
for path in "$dir"/*/; do
  [[ -d "$path" ]] || continue
  call=$(basename "$path")
  [[ "$call" =~ ^[0-9]{1,20}$ && ! -L "${path%/}" ]] || fail "$dir/$call: a call's folder is its run id"
  calls+=("$call")
done
[[ ${#calls[@]} -gt 0 ]] || fail "no call under $dir"
mapfile -t calls < <(printf '%s\n' "${calls[@]}" | sort -n)
folders=()
for call in "${calls[@]}"; do
  ks=()
  for path in "$dir/$call"/run-*/; do
    [[ -d "$path" ]] || continue
    run=$(basename "$path")
    [[ "$run" =~ ^run-([0-9]{1,2})$ && ! -L "${path%/}" ]] || fail "$dir/$call/$run: not a run-K folder"
    [[ -d "$dir/$call/$run/$machine" ]] || fail "$dir/$call/$run holds no run on $machine"
    ks+=("${BASH_REMATCH[1]}")
  done
  [[ ${#ks[@]} -gt 0 ]] || fail "$dir/$call holds no run-K folder"
  mapfile -t ks < <(printf '%s\n' "${ks[@]}" | sort -n)
  for k in "${ks[@]}"; do folders+=("$dir/$call/run-$k"); done
done

model="noise/$machine.json"
results=()
for folder in "${folders[@]}"; do results+=(--results "$folder"); done
noise=(python -m bot noise "${results[@]}" --write-model "$model")
calibrate=(python -m bot calibrate "${results[@]}" --mark-model "$model")
mkdir -p noise
echo "\$ ${noise[*]}" | tee "$dir/noise.txt"
"${noise[@]}" | tee -a "$dir/noise.txt"

{
  echo "# The evidence of $model: the A/A runs it is fitted on, one --results each in this order"
  echo "# (python -m bot noise ... --write-model $model), and on which python -m bot calibrate"
  echo "# checks it out of sample. Written by .github/scripts/calibration-evidence.sh"
  echo "# (docs/CALIBRATION.md, \"Onboarding a GPU kind\"); tests/decide/test_evidence.py re-fits it."
  echo "machine = \"$machine\""
  echo
  echo "[[noise]]"
  echo "results = ["
  printf '  "%s",\n' "${folders[@]}"
  echo "]"
} > "noise/$machine.evidence.toml"

json=$(mktemp)
trap 'rm -f -- "$json"' EXIT
echo "\$ ${calibrate[*]}" | tee "$dir/calibrate.txt"
"${calibrate[@]}" --json "$json" | tee -a "$dir/calibrate.txt"
missed=$(python - "$json" <<'PY'
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    print("\n".join(json.load(f)["missed"]))
PY
)
provisional=$(python - "$model" <<'PY'
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    print(", ".join(sorted(json.load(f).get("provisional", {}))))
PY
)
echo "Wrote $model, noise/$machine.evidence.toml, $dir/noise.txt and $dir/calibrate.txt (${#folders[@]} runs, ${#calls[@]} call(s))"
if [[ -n "$provisional" ]]; then
  echo "Provisional (each fusion's own calibration falls short: shown, not gated on): $provisional"
fi
if [[ -n "$missed" ]]; then
  echo "Held-out check: MISSED over ${#folders[@]} runs:"
  while IFS= read -r line; do echo "  $line"; done <<< "$missed"
  exit 1
fi
echo "Held-out check: every target met over ${#folders[@]} runs"
