#!/usr/bin/env bash
# The nightly's build of the package under test, installed and keyed:
#
#   bash .github/scripts/nightly-build.sh PACKAGE WORK [SPEC]
#
# SPEC, or else the newest build of the package on the index (pre-releases count: Thunder's
# weekly dev wheels, nvFuser's dated ones), is installed into an overlay under WORK and keyed
# exactly as benchmarks/under_test keys a side (python3 -m benchmarks.under_test.one
# --install-only). A wheel's key is made from its name, version and hash alone, so the plan,
# every shard and the merge, each on its own machine, name the same build by the same key
# (nightly.yml checks that they do). Prints key=, spec=, version= and overlay= lines for
# $GITHUB_OUTPUT; writes WORK/under-test.json, the provenance record's under_test entry (side
# "nightly"), and WORK/keys, the git repository asv looks the key up in. Run from the
# repository root. nvFuser's distribution is PERFBOT_NIGHTLY_NVFUSER (default
# nvfuser-cu130-torch210: it is named per CUDA and torch build).
set -euo pipefail
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: nightly-build.sh PACKAGE WORK [SPEC]" >&2
  exit 2
fi
package=$1 work=$2 spec=${3:-}
case "$package" in
  thunder) dist=lightning-thunder ;;
  nvfuser) dist=${PERFBOT_NIGHTLY_NVFUSER:-nvfuser-cu130-torch210} ;;
  *) echo "::error::package must be thunder or nvfuser" >&2; exit 2 ;;
esac
if [[ ! "$dist" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$ ]]; then
  echo "::error::the distribution must be a plain name" >&2
  exit 2
fi
rm -rf -- "$work"
mkdir -p -- "$work"
if [[ -z "$spec" ]]; then
  if ! python3 -m pip download --disable-pip-version-check --no-deps --pre --only-binary=:all: \
      --dest "$work/newest" "$dist" >"$work/newest.log" 2>&1; then
    echo "::error::pip found no build of $dist to download:" >&2
    tail -n 20 "$work/newest.log" >&2
    exit 1
  fi
  # The wheel's own name says which build it is (benchmarks/under_test/spec.py reads it).
  spec=$(python3 - "$work/newest" "$package" <<'PY'
import sys
from pathlib import Path
from benchmarks.under_test.spec import parse_spec
(wheel,) = Path(sys.argv[1]).glob("*.whl")
found = parse_spec(str(wheel), sys.argv[2])
print(f"{found.distribution}=={found.version}")
PY
)
fi
python3 -m benchmarks.under_test.one --package "$package" --build "$spec" --install-only \
  --results "$work/measured" --work "$work" --manifest "$work/build.json" >&2
python3 - "$work" <<'PY'
import json
import sys
from pathlib import Path

work = Path(sys.argv[1])
manifest = json.loads((work / "build.json").read_text(encoding="utf-8"))
record = {**manifest["build"], "side": "nightly"}
(work / "under-test.json").write_text(json.dumps(record, sort_keys=True), encoding="utf-8")
(overlay,) = work.glob("overlays/*/site")
print(f"key={manifest['key']}")
print(f"spec={record['spec']}")
print(f"version={record['version']}")
print(f"overlay={overlay}")
PY
