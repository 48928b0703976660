"""The comment's plain words (pure): a change as a reader says it, a guard in one line, a point's
name. Every text that came from outside the bot goes through escape_md here.

Why not the guard's own summary (bot/decide/wording.py): that one lists every variant's
geometric mean with its interval, for the log and the JSON; the first screen needs one phrase
a guard ("Thunder's own kernels: 11.4x slower, 18 of 18 points"), the figures below it.
"""

from __future__ import annotations

from bot.alert.model import guard_size
from bot.decide.stats import Interval
from bot.decide.types import Guard, GuardKind, PointVerdict, Verdict
from bot.decide.wording import signed
from bot.results.types import PointKey
from bot.tell.markdown import escape_md

#: What each guard watches, as a maintainer would name it.
GUARD_NAMES: dict[GuardKind, str] = {
    "broken": "Every point still runs",
    "ratio": "Thunder against nvFuser (kernel-time ratio)",
    "nvfuser": "nvFuser's hand-written fusion",
    "thunder": "Thunder's own kernels",
}
ICON = {
    "broken": "💥",
    "still failing": "⚫",
    "regressed": "🔴",
    "unsure": "🟡",
    "improved": "🟢",
    "no change": "⚪",
    "no data": "⚫",
    "not judged": "⚪",
    "uncalibrated": "⚪",
    "provisional": "⚪",
    "inconclusive (no data)": "⚫",
    "not compared": "⚫",
}
#: A lower ratio because nvFuser's fusion got slower: grey, never green.
NOT_A_GAIN = "lower only because nvFuser's fusion got slower: not a gain"


def factor(x: float) -> str:
    """A head/base factor as a change: "+4.8%", "-3.1%"; from 2x on "25.0x slower" (and at or
    below 0.5x "2.5x faster"), where "+2400.6%" would make a reader count digits."""
    if x >= 2:
        return f"{signed(x)} slower"
    if 0 < x <= 0.5:
        return f"{1 / x:.1f}x faster"
    return signed(x)


def slower(x: float) -> str:
    """A factor in words that say the direction: "25.0x slower", "4.8% slower", "3.1% faster"."""
    if x >= 2 or 0 < x <= 0.5:
        return factor(x)
    return f"{100 * abs(x - 1):.1f}% " + ("slower" if x >= 1 else "faster")


def factor_ci(iv: Interval) -> str:
    """The change with its 95% interval, in the same words: "+4.8% [+3.9%, +5.6%]", and
    "25.0x [24.7x, 25.2x] slower" when all three are 2x or more."""
    if iv.high >= 2:  # one unit for all three: "2.1x [1.9x, 2.3x] slower", never "+90%, 2.3x"
        return f"{iv.estimate:.1f}x [{iv.low:.1f}x, {iv.high:.1f}x] slower"
    return f"{factor(iv.estimate)} [{factor(iv.low)}, {factor(iv.high)}]"


def point_name(k: PointKey) -> str:
    return escape_md(f"{k.variant} {k.dtype} {k.shape}")


def more_runs(p: PointVerdict) -> int:
    """Runs a side beyond those measured that would settle an unsure point (its ``settle`` is
    the total a side needs), 0 when it says nothing."""
    if p.state != "unsure" or not p.settle or p.cmp is None:
        return 0
    return max(0, p.settle - max(p.cmp.runs))


def nvfuser_slower(v: Verdict | None) -> bool:
    g = v.guard("nvfuser") if v else None
    return g is not None and g.state in ("regressed", "unsure")


def shown_state(g: Guard, v: Verdict) -> str:
    """The state a guard shows: a ratio that fell because nvFuser got slower is no gain."""
    if g.kind == "ratio" and g.state == "improved" and nvfuser_slower(v):
        return "no change"
    return g.state


def _count(g: Guard, state: str) -> str:
    measured = [p for p in g.points if p.cmp is not None]
    return f"{sum(p.state == state for p in g.points)} of {len(measured)} points"


def widest_mean(g: Guard) -> Interval | None:
    """The guard's geometric mean (over a variant's points) that strays furthest from no
    change, with its interval: the one figure that says how much."""
    means = [a.geomean for a in g.aggregates]
    return max(means, key=lambda m: abs(m.estimate - 1), default=None)


def guard_words(g: Guard, v: Verdict) -> str:
    """One line: what this guard found, with the one figure that says how much."""
    if g.kind == "broken":
        if g.state == "broken":
            failing = sum(p.state == "broken" for p in g.points)
            return f"no: {failing} point(s) that ran at base fail at head"
        if g.state == "still failing":
            return escape_md(g.summary, 300)
        return "yes, every point that ran at base runs at head"
    against = " relative to nvFuser" if g.kind == "ratio" else ""
    if g.state == "regressed":
        mean = " at the geometric mean" if any(a.state == "regressed" for a in g.aggregates) else ""
        return f"{slower(guard_size(g))}{against}{mean} ({_count(g, 'regressed')} regressed)"
    if g.state == "improved":
        if shown_state(g, v) != g.state:
            return NOT_A_GAIN
        best = min((a.geomean.estimate for a in g.aggregates), default=None)
        amount = f"{slower(best)}{against} at the geometric mean " if best is not None else ""
        return f"{amount}({_count(g, 'improved')} faster)"
    if g.state == "unsure":
        means = [a for a in g.aggregates if a.state == "unsure"]
        settle = max([more_runs(p) for p in g.points], default=0)
        more = f"; about {settle} more run(s) a side would settle it" if settle else ""
        if means:
            top = max(means, key=lambda a: a.geomean.estimate)
            return f"maybe {slower(top.geomean.estimate)}{against}, not established{more}"
        return f"maybe slower, not established ({_count(g, 'unsure')} near the threshold){more}"
    if g.state == "no change":
        widest = widest_mean(g)
        figure = f", geometric mean {factor_ci(widest)}" if widest is not None else ""
        return f"no change{figure}"
    broken = v.guard("broken")
    if g.state == "no data" and broken is not None and broken.state == "broken":
        return "nothing to compare: its points fail at head"
    return escape_md(g.summary, 300)
