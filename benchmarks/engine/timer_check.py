"""The traced timer and the GPU-only one side by side, in one process, on the GPU.

    RMSNORM_BENCH_SIZES=pr RMSNORM_BENCH_FUSIONS=all python3 -m benchmarks.engine.timer_check OUT

Every point of the configured set is measured as the suite measured it before issue 39
(measure_point, the same variants, rounds and calls, timed by
:func:`timing.profile_round_traced`; the "suite" columns), and in each round the same calls are
timed a second time by :func:`timing.profile_round_gpu_only` right after (the "candidate"
columns: the suite's timer since issue 39). Written to OUT (JSON
lines, one a point and variant) and printed: the kernel names and counts of each method, each
method's median and spread over the rounds, and the seconds each method's sessions took. The
candidate was to replace the suite's timer only when, on every point, the names and counts
agree, the medians are within the between-run noise and the spread is no worse (issue 39).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import session, timing
from .config import SuiteConfig, point_key
from .point import measure_point


@dataclass
class Side:
    """What the candidate saw at one point: per variant, each round's mean of its calls."""

    rounds_us: dict[str, list[float]] = field(default_factory=dict)
    names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    counts: dict[str, set[int]] = field(default_factory=dict)
    suite_s: float = 0.0
    candidate_s: float = 0.0
    untrusted: int = 0


def _spread(values: list[float]) -> float | None:
    """Interquartile range over the median, in percent (None under 4 values)."""
    if len(values) < 4:
        return None
    q = statistics.quantiles(values, n=4)
    return 100.0 * (q[2] - q[0]) / statistics.median(values)


class BothTimers:
    """A profile_round that also times the same calls with the candidate, into ``side`` (a
    fresh one a point: main sets it)."""

    def __init__(self, suite: Callable[..., dict[str, timing.KernelSample]]) -> None:
        self.suite, self.side = suite, Side()

    def __call__(self, calls: Any, flush: timing.L2Flusher) -> dict[str, timing.KernelSample]:
        side = self.side
        start = time.perf_counter()
        got = self.suite(calls, flush)
        middle = time.perf_counter()
        other = timing.profile_round_gpu_only(calls, flush, flush.signature)
        side.candidate_s += time.perf_counter() - middle
        side.suite_s += middle - start
        if other is None:
            side.untrusted += 1
            return got
        per_variant: dict[str, list[timing.KernelSample]] = {}
        for label, sample in other.items():
            per_variant.setdefault(label.split("#")[0], []).append(sample)
        for name, samples in per_variant.items():
            side.rounds_us.setdefault(name, []).append(
                statistics.fmean(s.kernel_us for s in samples)
            )
            side.names.setdefault(name, samples[0].names)
            side.counts.setdefault(name, set()).update(len(s.names) for s in samples)
        return got


def compare(point: dict[str, Any], side: Side) -> list[dict[str, Any]]:
    """One row a variant: the suite's figures, the candidate's, and whether they agree."""
    rows = []
    for name, entry in point.get("variants", {}).items():
        old = entry.get("kernel_us") or []
        new = side.rounds_us.get(name, [])
        if not old or not new:
            continue
        old_median, new_median = statistics.median(old), statistics.median(new)
        rows.append(
            {
                "variant": name,
                "names_equal": tuple(entry.get("kernel_names") or ()) == side.names.get(name),
                "count": entry.get("kernel_count"),
                "counts_candidate": sorted(side.counts.get(name, ())),
                "median_us": old_median,
                "median_us_candidate": new_median,
                "median_diff_pct": 100.0 * (new_median / old_median - 1.0),
                "spread_pct": _spread(old),
                "spread_pct_candidate": _spread(new),
                "rounds": len(old),
                "rounds_candidate": len(new),
            }
        )
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    cfg = SuiteConfig.from_env()
    run = session.open_run(cfg)
    if isinstance(run, str):
        print(f"cannot measure: {run}", file=sys.stderr)
        return 3
    both = BothTimers(timing.profile_round_traced)
    timing.profile_round = both
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    totals = [0.0, 0.0]
    with out.open("w", encoding="utf-8") as fh:
        fh.write(
            json.dumps(
                {
                    "flush_signature": run.flush.signature,
                    "timer": timing.TIMER_TRACED,
                    "candidate": timing.TIMER,
                    "gpu": run.gpu,
                }
            )
            + "\n"
        )
        for fusion, dtype, shape in cfg.fusion_points():
            key = point_key(dtype, shape, fusion)
            side = both.side = Side()
            point = measure_point(shape, dtype, cfg, run.flush, run.sleep_fit, fusion)
            totals[0] += side.suite_s
            totals[1] += side.candidate_s
            for row in compare(point, side):
                row = {"point": key, "untrusted_rounds": side.untrusted, **row}
                fh.write(json.dumps(row) + "\n")
                fh.flush()  # a call cut short by its limit keeps the points it finished
                print(
                    f"{key:42} {row['variant']:14} names {'=' if row['names_equal'] else '≠'} "
                    f"n {row['count']}/{row['counts_candidate']} "
                    f"median {row['median_us']:9.2f} {row['median_us_candidate']:9.2f} us "
                    f"({row['median_diff_pct']:+.2f}%) untrusted {side.untrusted}",
                    flush=True,
                )
        fh.write(json.dumps({"suite_s": totals[0], "candidate_s": totals[1]}) + "\n")
    print(f"session seconds: suite {totals[0]:.1f}, candidate {totals[1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
