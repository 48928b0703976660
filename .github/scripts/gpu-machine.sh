#!/usr/bin/env bash
# Prints the asv machine name of this host's GPU, as benchmarks/run_gpu.sh derives it when it
# is given no --machine (the GPU model, lower case, runs of other characters as one '-'), for
# a job that must name the machine before its first measurement (nightly.yml's shards: every
# shard and the merge must agree on it). Exit 3 when there is no usable GPU, as run_gpu.sh.
# tests/workflows holds the two derivations to each other.
set -euo pipefail
if ! gpu=$(python3 -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; print(torch.cuda.get_device_name(0))" 2>&1); then
  echo "gpu-machine.sh: no usable GPU here: $gpu" >&2
  exit 3
fi
echo "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/-$//'
