"""Median kernel time per point and variant of one job against another's (each over all its
processes' records): how far a change of how a job runs (turns, a cache) moved what is timed.

    python3 data/h100-issue39/compare_medians.py JOB_A JOB_B

JOB_A and JOB_B are folders holding rep-*/<machine>/*.provenance.jsonl (record.sh's results).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def medians(job: Path) -> dict[tuple[str, str], float]:
    """Each point-variant's median kernel time, the median over the job's processes."""
    per: dict[tuple[str, str], list[float]] = {}
    for path in sorted(job.glob("rep-*/*/*.provenance.jsonl")):
        record = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
        for key, point in record["points"].items():
            for variant, entry in point.get("variants", {}).items():
                if entry.get("kernel_us"):
                    per.setdefault((key, variant), []).append(statistics.median(entry["kernel_us"]))
    return {k: statistics.median(v) for k, v in per.items()}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = medians(Path(argv[0])), medians(Path(argv[1]))
    shared = sorted(set(a) & set(b))
    if not shared:
        print("compare_medians: no point-variant timed in both", file=sys.stderr)
        return 1
    diffs = {k: a[k] / b[k] - 1 for k in shared}
    for (key, variant), d in diffs.items():
        print(f"{key} {variant}: {a[key, variant]:.1f} against {b[key, variant]:.1f} us ({d:+.2%})")
    worst = max(diffs, key=lambda k: abs(diffs[k]))
    mean_abs = statistics.fmean(abs(d) for d in diffs.values())
    print(
        f"{len(shared)} point-variants: mean |difference| {mean_abs:.2%}, the largest "
        f"{diffs[worst]:+.2%} ({worst[1]}, {worst[0]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
