"""Each guard's finding in plain words (pure), for the headline, the issue title and the log.

Kept beside the rules rather than in bot/tell/ because the verdict's ``reason`` is built from
it and every output (comment, issue, JSON, console) quotes the same sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.config import VerdictSettings
from bot.decide.stats import Interval
from bot.decide.types import Guard, PointVerdict, VariantSummary


def signed(x: float) -> str:
    """A head/base factor as a change: "+4.8%", or "25.0x" from 2x on, where "+2400.6%" would
    make a reader count digits."""
    if x >= 2:
        return f"{x:.1f}x"
    if 0 < x <= 0.5:
        return f"{x:.2f}x"
    return f"{100 * (x - 1):+.1f}%"


def interval_words(i: Interval) -> str:
    if i.high >= 2:  # one unit for all three, never "2.1x [+90.0%, 2.3x]"
        return f"{i.estimate:.1f}x [{i.low:.1f}x, {i.high:.1f}x]"
    return f"{signed(i.estimate)} [{signed(i.low)}, {signed(i.high)}]"


def point_words(p: PointVerdict) -> str:
    k = p.key
    return f"{k.variant} {k.dtype} {k.shape}"


def _bandwidth(p: PointVerdict) -> str:
    b, h = p.bandwidth_pct
    if b is None or h is None:
        return ""
    rb, rh = round(b), round(h)  # the difference of the figures shown, not of unrounded ones
    return f"; % of peak bandwidth there {rb}% → {rh}% ({rh - rb:+d} percentage points)"


def _worst(points: Sequence[PointVerdict], upward: bool) -> PointVerdict | None:
    with_data = [p for p in points if p.cmp is not None]
    if not with_data:
        return None
    pick = max if upward else min
    return pick(with_data, key=lambda p: p.cmp.change.estimate if p.cmp else 1.0)


def _means(aggs: Sequence[VariantSummary], state: str | None = None) -> str:
    chosen = [a for a in aggs if state is None or a.state == state] or list(aggs)
    return "; ".join(
        f"{a.variant} geometric mean {interval_words(a.geomean)} over {a.points} point(s)"
        for a in chosen
    )


def guard_summary(g: Guard, s: VerdictSettings, nvfuser_slower: bool = False) -> str:
    """One sentence: the state in words, the geometric means, the worst point.

    ``nvfuser_slower``: nvFuser's own guard regressed or is unsure, so a lower ratio is not
    Thunder gaining ground and is not worded so."""
    if g.state == "no data":
        return "no point with data at both commits"
    up = g.state in ("regressed", "unsure")
    worst = _worst(g.points, upward=up or g.state == "no change")
    worst_text = ""
    if worst is not None and worst.cmp is not None:
        worst_text = f"; worst point {point_words(worst)} {interval_words(worst.cmp.change)}"
        if g.state == "regressed":
            worst_text += _bandwidth(worst)
    words = {
        "ratio": {
            "regressed": "Thunder lost ground to nvFuser",
            "improved": "Thunder gained ground on nvFuser",
        },
        "nvfuser": {
            "regressed": "nvFuser's fusion is slower",
            "improved": "nvFuser's fusion is faster",
        },
        "thunder": {
            "regressed": "Thunder's kernels are slower",
            "improved": "Thunder's kernels are faster",
        },
    }[g.kind]
    if g.state == "regressed":
        flagged = [p for p in g.points if p.state == "regressed" and p.corroborated]
        lead = words["regressed"] + (f" ({len(flagged)} point(s))" if flagged else "")
        means = _means(g.aggregates, "regressed")
        return f"{lead}{': ' + means if means else ''}{worst_text}"
    if g.state == "improved":
        lead = words["improved"]
        if g.kind == "ratio" and nvfuser_slower:
            lead = "lower only because nvFuser's fusion got slower (not a gain)"
        return f"{lead}: {_means(g.aggregates, 'improved')}{worst_text}"
    if (
        g.state == "unsure"
        and g.kind == "ratio"
        and not any(a.state == "unsure" for a in g.aggregates)
    ):
        lower = [a for a in g.aggregates if a.state == "improved"]
        means = _means(lower) if lower else ""
        worst = _worst(g.points, upward=False)
        if not means and worst is not None and worst.cmp is not None:
            means = f"{point_words(worst)} {interval_words(worst.cmp.change)}"
        return (
            "lower, but Thunder's own kernels are not measurably faster: nvFuser's fusion may "
            f"have got slower by less than can be confirmed ({means}); more runs a side "
            "would tell"
        )
    if g.state == "unsure":
        unsure = [a for a in g.aggregates if a.state == "unsure"]
        family = max(len(g.aggregates), 1)
        settle = [a.cmp.runs_to_settle(s.broad_effect, s.alpha / family) for a in unsure if a.cmp]
        known = [n for n in settle if n is not None]
        now = max((max(a.cmp.runs) for a in unsure if a.cmp), default=1)
        more = (
            f"; about {max(known) - now} more run(s) a side ({max(known)} in all) would settle it"
            if known and len(known) == len(settle)
            else "; it sits on the threshold: more runs a side may not settle it"
        )
        return f"a change near the {s.effect:.0%} effect, not established: {_means(unsure)}{more}"
    return f"no change: {_means(g.aggregates)}" if g.aggregates else "no change"
