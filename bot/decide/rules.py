"""The verdict's rules, one pure function each, so that every boundary can be tested alone.

bot/decide/verdict.py's docstring states them and why; here is exactly where each line is
drawn: a change must REACH its threshold (``>=``), its Holm-adjusted p must be BELOW alpha
(``<``), and its interval must lie strictly above 1 (``low > 1``); corroboration by the
series' own interval needs its low end to REACH the threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from bot.decide.stats import Comparison
from bot.decide.types import Guard, GuardKind, Moved, Overall, PointVerdict, State, VariantSummary
from bot.results.types import REFERENCE

#: A variant-wide geometric mean decides on its own only over this many points: with fewer, it is
#: one or two points again and must pass the point rule instead.
MIN_BROAD_POINTS = 3


def point_state(c: Comparison, p_up: float, p_down: float, threshold: float, alpha: float) -> State:
    """Regressed, improved, unsure or no change, for one change (Holm-adjusted p's).

    Unsure: the change reached the threshold but is not established (noise could explain it);
    only upward, since an unconfirmed improvement needs no action.
    """
    change = c.change
    if change.estimate >= 1 + threshold and p_up < alpha and change.excludes_one() > 0:
        return "regressed"
    if change.estimate <= 1 / (1 + threshold) and p_down < alpha and change.excludes_one() < 0:
        return "improved"
    if change.estimate >= 1 + threshold:
        return "unsure"
    return "no change"


def is_corroborated(
    state: State,
    c: Comparison,
    threshold: float,
    others: Comparison | Callable[[], Comparison | None] | None,
    *,
    alone: bool = True,
) -> bool:
    """A flagged change is not alone: its own interval clears the threshold (when ``alone`` may
    corroborate), or the variant's OTHER points (other sizes, so separate rounds) moved the same
    way as a group.

    Kernel times pass ``alone=False``: a machine state that slows every kernel of one size (a
    fresh machine, a memory placement) moves a point's absolute times together by several
    percent, which the A/A runs of a model may not have seen; the paired ratio cancels it, and
    a lone Thunder change is caught there.

    Other variants at the same size do not count: they share the nvFuser measurement, so one
    noisy nvFuser round set would "corroborate" itself. ``others`` may be a function: it is
    called only when the point's own interval does not settle it (most points are not flagged,
    and the others' mean costs a comparison of its own).
    """
    if state not in ("regressed", "improved"):
        return False
    ch = c.change
    own = ch.low >= 1 + threshold if state == "regressed" else ch.high <= 1 / (1 + threshold)
    if own and alone:
        return True
    group = others() if callable(others) else others
    if group is None:
        return False
    return group.change.low > 1 if state == "regressed" else group.change.high < 1


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


def aggregate_state(
    c: Comparison,
    points: int,
    p_up: float,
    p_down: float,
    broad_effect: float,
    effect: float,
    alpha: float,
) -> State:
    """A variant's geometric mean over its points: a broad regression (or gain) from
    ``broad_effect`` on, when established; unsure when it reached the point ``effect`` without
    being established.

    Why a lower bar for a broad change: every point agreeing is stronger evidence than one
    point, and an nvFuser-wide 2% slowdown must be caught at least 95% of the time, which a bar
    AT 2% cannot do (the estimate falls below a true 2% half the time). Unsure keeps the
    point's bar: a geometric mean at 1-2% that noise can explain is no news.
    """
    if points < MIN_BROAD_POINTS:
        return "no change"
    state = point_state(c, p_up, p_down, broad_effect, alpha)
    if state == "unsure" and c.change.estimate < 1 + effect:
        return "no change"
    return state


def guard_state(points: Sequence[PointVerdict], aggregates: Sequence[VariantSummary]) -> State:
    """One guard from its gating points and its geometric means.

    Regressed: a corroborated regressed point, or a broad (geometric-mean) regression. Unsure:
    otherwise, a geometric mean that reached the effect unconfirmed (a lone point that reached
    its threshold unconfirmed is shown as unsure on its row, but does not make the guard
    unsure: among 18-45 series, one such is expected on every A/A pair at the noisier points).
    Improved mirrors regressed. No data: no gating point with data at both sides.
    """
    with_data = [p for p in points if p.cmp is not None]
    if not with_data:
        return "no data"
    if any(p.state == "regressed" and p.corroborated for p in with_data) or any(
        a.state == "regressed" for a in aggregates
    ):
        return "regressed"
    if any(a.state == "unsure" for a in aggregates):
        return "unsure"
    if any(p.state == "improved" and p.corroborated for p in with_data) or any(
        a.state == "improved" for a in aggregates
    ):
        return "improved"
    return "no change"


def broken_state(points: Sequence[PointVerdict]) -> State:
    if any(p.state == "broken" for p in points):
        return "broken"
    if any(p.state == "still failing" for p in points):
        return "still failing"
    return "no change"


def ratio_owner(ratio: State, nvfuser: State, thunder: State) -> State:
    """A lower ratio is Thunder's gain only when Thunder's own kernels are measurably faster;
    when nvFuser's fusion is confirmed slower it stays "improved" (worded as nvFuser's doing);
    otherwise it cannot be told apart from an nvFuser slowdown too small to confirm: unsure."""
    if ratio != "improved" or thunder == "improved" or nvfuser in ("regressed", "unsure"):
        return ratio
    return "unsure"


def overall_state(guards: Sequence[Guard]) -> Overall:
    """The headline: the worst guard. An improvement counts only when no guard is worse: a
    ratio that fell because nvFuser's fusion got slower is not good news."""
    states = {g.kind: g.state for g in guards}
    if states.get("broken") == "broken":
        return "broken"
    deciding: Sequence[GuardKind] = ("nvfuser", "thunder", "ratio")
    present = [states[k] for k in deciding if k in states]
    if "regressed" in present:
        return "regressed"
    # Without the ratio (no Thunder point with data at both sides) nothing can be called fine.
    if not present or states.get("ratio", "no data") == "no data":
        return "inconclusive (no data)"
    ordered: tuple[Overall, ...] = ("unsure", "improved")
    for state in ordered:
        if state in present:
            return state
    return "no change"


def corroborate_kernels(
    kernels: Sequence[PointVerdict], ratios: Sequence[PointVerdict]
) -> list[PointVerdict]:
    """A kernel-time point that moved past its threshold, established, but with no group of
    its variant behind it, is corroborated by the paired ratio at its size, which the machine's
    state cannot move: Thunder's kernel by its own ratio moving the same way (regressed or
    improved), nvFuser's by any gating contender's ratio moving the opposite way. So a lone
    nvFuser slowdown is an nvFuser regression, while a size whose absolute times all moved
    with the machine (the ratios unmoved) is not."""
    by_key = {(p.key.variant, p.key.dtype, p.key.shape): p.state for p in ratios}
    out = []
    for k in kernels:
        if k.state in ("regressed", "improved") and not k.corroborated:
            if k.key.variant == REFERENCE:
                want = "improved" if k.state == "regressed" else "regressed"
                moved = any(
                    p.state == want
                    for p in ratios
                    if (p.key.dtype, p.key.shape) == (k.key.dtype, k.key.shape)
                )
            else:
                moved = by_key.get((k.key.variant, k.key.dtype, k.key.shape)) == k.state
            if moved:
                k = replace(k, corroborated=True)
        out.append(k)
    return out
