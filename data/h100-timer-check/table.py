"""What a timer_check run (benchmarks/engine/timer_check.py, JSON lines) says: whether the two
timers saw the same kernels, how far their medians are apart, their spread, and the seconds
each method's profiler sessions took.

    python3 table.py results/pr-rmsnorm.jsonl results/smoke-all.jsonl
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def summary(path: str) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    head, tail, data = rows[0], rows[-1], rows[1:-1]
    diffs = [r["median_diff_pct"] for r in data]
    spreads = [(r["spread_pct"], r["spread_pct_candidate"]) for r in data if r["spread_pct"]]
    names = sum(r["names_equal"] for r in data)
    counts = sum([r["count"]] == r["counts_candidate"] for r in data)
    untrusted = sum(r["untrusted_rounds"] for r in data)
    out = [
        f"{path}: {len(data)} point-variants on {head['gpu']['name']}",
        f"  flush signature: {len(head['flush_signature'])} activity",
        f"  kernel names equal: {names}/{len(data)}; counts equal: {counts}/{len(data)}; "
        f"untrusted candidate rounds: {untrusted}",
        f"  median difference candidate/suite: {min(diffs):+.2f}% to {max(diffs):+.2f}% "
        f"(mean |d| {statistics.fmean(abs(d) for d in diffs):.2f}%)",
        f"  spread (IQR/median) median: suite {statistics.median(a for a, _ in spreads):.2f}%, "
        f"candidate {statistics.median(b for _, b in spreads):.2f}%; candidate wider on "
        f"{sum(b > a for a, b in spreads)}/{len(spreads)}",
        f"  profiler session seconds: suite {tail['suite_s']:.1f}, "
        f"candidate {tail['candidate_s']:.1f}",
    ]
    for r in sorted(data, key=lambda r: -abs(r["median_diff_pct"]))[:3]:
        out.append(
            f"    largest: {r['point']} {r['variant']} {r['median_diff_pct']:+.2f}% "
            f"({r['median_us']:.2f} us; spread {r['spread_pct']:.2f}% vs "
            f"{r['spread_pct_candidate']:.2f}%)"
        )
    return out


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print("\n".join(summary(name)))
