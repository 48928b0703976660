"""Run-to-run noise: how far the median ratio of a point moves between separate runs of the
same code, and the per-point effect thresholds that keep that movement from reading as a
regression.

Why: the verdict's intervals come from the rounds of ONE run each, so they see the noise
inside a run but not what changes from one process to the next (memory placement, clock
state, which of two near-equal kernels a JIT picks). On the H200 the two are of a different
size: at fp32 (512, 4096), an 18-us kernel, two baselines of the same code gave ratios of 0.929
and 0.970 (+4.4%) with within-run intervals of about +-1%, which the verdict read as a
regression. A per-point threshold above the spread seen between real A/A runs is the stated,
reviewable answer: ``threshold = max(default effect, margin x largest A/A change)``, rounded up
to half a percent. With only a few runs the largest change underestimates the tail, hence the
margin (1.5 by default). Nothing here does I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from bot.config import VerdictSettings
from bot.results.types import BadInput, CommitResults, PointKey

DEFAULT_MARGIN = 1.5
STEP = 0.005  # thresholds are rounded up to half a percent


@dataclass(frozen=True)
class PointSpread:
    key: PointKey
    medians: tuple[float, ...]  # median per-round ratio of each run, in the runs' order
    spread: float  # largest change between two runs: max/min - 1
    current: float  # the threshold the configuration gives this point now
    suggested: float


def suggest(spread: float, default: float, margin: float = DEFAULT_MARGIN) -> float:
    """The smallest threshold on the half-percent grid at or above both bounds."""
    wanted = max(default, margin * spread)
    return round(math.ceil(round(wanted / STEP, 9)) * STEP, 4)


def run_to_run(
    runs: Sequence[CommitResults], settings: VerdictSettings, margin: float = DEFAULT_MARGIN
) -> list[PointSpread]:
    """Per gating point present in every run, the spread of its median ratio across runs."""
    if len(runs) < 2:
        raise BadInput(f"run-to-run noise needs at least 2 runs of the same code, got {len(runs)}")
    keys = sorted(set.intersection(*(set(r.contenders()) for r in runs)))
    out = []
    for key in keys:
        if not settings.is_gating(key.variant):
            continue
        ratios = [r.points[key].ratio for r in runs]
        if any(not ratio for ratio in ratios):
            continue  # a run without data for this point says nothing about its noise
        medians = tuple(statistics.median(r) for r in ratios if r)
        spread = max(max(a, b) / min(a, b) - 1 for a, b in combinations(medians, 2))
        out.append(
            PointSpread(
                key,
                medians,
                spread,
                settings.threshold_for(key.label),
                suggest(spread, settings.effect, margin),
            )
        )
    if not out:
        raise BadInput("the runs have no gating point with data in common")
    return out


def thresholds_toml(spreads: Sequence[PointSpread], default: float) -> str:
    """The ``[[verdict.thresholds]]`` entries for the points that need more than the default."""
    blocks = [
        f'[[verdict.thresholds]]\npattern = "{s.key.label}"\neffect = {s.suggested}'
        for s in sorted(spreads, key=lambda s: (-s.suggested, s.key))
        if s.suggested > default
    ]
    return "\n".join(blocks)


def to_json(
    runs: Sequence[CommitResults], spreads: Sequence[PointSpread], margin: float
) -> dict[str, object]:
    return {
        "runs": [r.commit for r in runs],
        "margin": margin,
        "points": [
            {
                "point": p.key.label,
                "medians": list(p.medians),
                "spread": p.spread,
                "threshold": p.current,
                "suggested": p.suggested,
            }
            for p in spreads
        ],
    }


def report_text(runs: Sequence[CommitResults], spreads: Sequence[PointSpread]) -> str:
    head = " ".join(f"{r.commit[:8]:>8}" for r in runs)
    lines = [
        f"Run-to-run spread of the median thunder/nvFuser ratio over {len(runs)} runs of the "
        f"same code on {runs[0].machine}",
        "",
        f"{'point':<36}{head}  spread  threshold now -> suggested",
    ]
    for s in sorted(spreads, key=lambda s: -s.spread):
        cells = " ".join(f"{m:>8.3f}" for m in s.medians)
        flag = "  <- raise" if s.suggested > s.current else ""
        lines.append(
            f"{s.key.label:<36}{cells}  {100 * s.spread:5.1f}%  "
            f"{100 * s.current:.1f}% -> {100 * s.suggested:.1f}%{flag}"
        )
    return "\n".join(lines)
