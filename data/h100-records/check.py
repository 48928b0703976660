"""What two records of the same tree must agree on, read from this folder's two runs.

    python data/h100-records/check.py data/h100-records/results

Prints, for the run: the timer, the suite and engine digests, the stack; for each fusion: its
digest and its hand-written definition's printed and canonical hashes in each run, and whether
they agree. Identical code must give identical canonical hashes and digests; the printed hash
may differ (tensor numbering varies between processes: issue 38), and says how often it did.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def record(path: Path) -> dict:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(lines[-1])


def main(folder: str) -> int:
    one, two = (record(Path(folder) / f"run-{n}.provenance.jsonl") for n in (1, 2))
    ok = True
    for key in ("timer", "suite_digest", "engine_digest"):
        same = one.get(key) == two.get(key) and one.get(key) is not None
        ok &= same
        print(f"{key}: {one.get(key)} | {'same' if same else two.get(key)}")
    print(
        "stack:",
        one["gpu"]["name"],
        one["gpu"]["driver"],
        "CUDA",
        one["gpu"]["cuda"],
        *(f"{k} {v}" for k, v in sorted(one["versions"].items())),
    )
    digests = one.get("fusion_digests") or {}
    printed_differ = 0
    print(f"\n{'point':45} {'fusion digest':14} {'canonical':10} printed")
    for key in sorted(one["points"]):
        fusion = key.split("/")[0] if key.count("/") == 2 else "rmsnorm_bwd"
        a = one["points"][key]["variants"].get("nvfuser", {})
        b = two["points"][key]["variants"].get("nvfuser", {})
        canon = a.get("definition_canonical_sha256")
        canon_same = canon is not None and canon == b.get("definition_canonical_sha256")
        printed_same = a.get("definition_sha256") == b.get("definition_sha256")
        digest_same = digests.get(fusion) == (two.get("fusion_digests") or {}).get(fusion)
        ok &= canon_same and digest_same and fusion in digests
        printed_differ += not printed_same
        print(
            f"{key:45} {'same' if digest_same else 'DIFFERS':14} "
            f"{'same' if canon_same else 'DIFFERS':10} {'same' if printed_same else 'differs'}"
        )
    print(
        f"\nprinted hashes that differ between the two runs: {printed_differ} of "
        f"{len(one['points'])}; canonical and digests {'all the same' if ok else 'NOT all'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
