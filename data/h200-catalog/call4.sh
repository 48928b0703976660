#!/usr/bin/env bash
# Call 4 on the H200: two more stock runs of the pr set without the context baselines (as a
# PR's later repeats run), so that the catalog's noise model pools four A/A runs of one stack
# with stock-2 and stock-3's second repeat.
#   source .gpu/setup.sh && bash data/h200-catalog/call4.sh
set -uo pipefail
RECORD_TIME_LIMIT=150 RECORD_VARIANTS=nvfuser,thunder-prims,thunder-func bash data/record.sh stock-4 stock-5
