"""The verdict's rules, one pure function each, so that every boundary can be tested alone.

bot/decide/verdict.py's docstring states them and why; here is exactly where each line is
drawn: a point's change must REACH its threshold (``>=``), its Holm-adjusted p must be BELOW
alpha (``<``), and its interval must lie strictly above 1 (``low > 1``); corroboration by the
point's own interval needs its low end to REACH the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from bot.decide.stats import Comparison, Interval, geometric_mean
from bot.decide.types import Moved, Overall, PointVerdict, State, VariantSummary
from bot.results.types import PointKey

#: A variant-wide geometric mean decides on its own only over this many points: with fewer, it is
#: one or two points again and must pass the point rule instead.
MIN_BROAD_POINTS = 3


def point_state(
    change: Interval, p_up: float, p_down: float, threshold: float, alpha: float
) -> State:
    """Regressed, improved or no change, for one point's ratio change (Holm-adjusted p's)."""
    if change.estimate >= 1 + threshold and p_up < alpha and change.excludes_one() > 0:
        return "regressed"
    if change.estimate <= 1 / (1 + threshold) and p_down < alpha and change.excludes_one() < 0:
        return "improved"
    return "no change"


def is_corroborated(
    key: PointKey, state: State, cmps: Mapping[PointKey, Comparison], threshold: float
) -> bool:
    """A flagged point is not alone: its CI clears the threshold by itself, or the variant's
    OTHER points (other sizes, so independent rounds) moved the same way as a group.

    Other variants at the same size do not count: they share the nvFuser measurement, so one
    noisy nvFuser round set would "corroborate" itself.
    """
    if state not in ("regressed", "improved"):
        return False
    c = cmps[key].change
    if c.low >= 1 + threshold if state == "regressed" else c.high <= 1 / (1 + threshold):
        return True
    others = [cmps[o] for o in cmps if o.variant == key.variant and o != key]
    if not others:
        return False
    group = geometric_mean(others)
    return group.low > 1 if state == "regressed" else group.high < 1


def side_moved(
    contender: Comparison | None, nvfuser: Comparison | None, ratio: Comparison, threshold: float
) -> Moved:
    """A side moved when its kernel time changed significantly (CI excluding 1) by at least
    half the ratio's change and at least half the threshold: enough to carry the ratio's move,
    while the common drift of absolute times between runs (clocks) does not count."""
    if contender is None or nvfuser is None:
        return "unknown"
    bar = max(math.log1p(threshold / 2), abs(math.log(ratio.change.estimate)) / 2)

    def moved(c: Comparison) -> bool:
        return abs(math.log(c.change.estimate)) >= bar and c.change.excludes_one() != 0

    table: dict[tuple[bool, bool], Moved] = {
        (True, True): "both",
        (True, False): "thunder",
        (False, True): "nvfuser",
        (False, False): "neither",
    }
    return table[moved(contender), moved(nvfuser)]


def overall_verdict(
    gating: Sequence[PointVerdict], summaries: Sequence[VariantSummary], effect: float
) -> tuple[Overall, str]:
    """The headline from the gating points with data and the per-variant geometric means."""
    broad = [v for v in summaries if v.points >= MIN_BROAD_POINTS]
    broad_up = [v for v in broad if v.geomean.estimate >= 1 + effect and v.geomean.low > 1]
    broad_down = [v for v in broad if v.geomean.estimate <= 1 / (1 + effect) and v.geomean.high < 1]
    ups = [p for p in gating if p.state == "regressed" and p.corroborated]
    downs = [p for p in gating if p.state == "improved" and p.corroborated]
    lone = [p for p in gating if p.state in ("regressed", "improved") and not p.corroborated]
    if not gating:
        return "inconclusive (no data)", "no gating point has data at both commits"
    if ups or broad_up:
        return "regressed", _why(ups, broad_up, "slower")
    if downs or broad_down:
        return "improved", _why(downs, broad_down, "faster")
    reason = f"no gating point moved by its threshold ({len(gating)} points compared)"
    if lone:
        reason += f"; {len(lone)} uncorroborated point(s) set aside as noise"
    return "no change", reason


def _why(points: list[PointVerdict], broad: list[VariantSummary], word: str) -> str:
    parts = [f"{len(points)} point(s) significantly {word} relative to nvFuser"] if points else []
    parts += [f"{v.variant} geometric mean {v.geomean.estimate:.3f}x" for v in broad]
    return "; ".join(parts)
