"""Each measured build's class, from the bot's own verdict against the known-good build (pure).

The known-bad build sets what "bad" means: the guards its verdict raises (bot/decide/types.py:
broken, ratio, thunder, nvfuser). A build is bad when its verdict raises one of those same
guards, good when it raises none and nothing is unsure. Anything else stops the search rather
than be guessed at: a build that breaks where the bad one only slowed down (or slows down
where the bad one broke) is another change, and an unsure build is measured again, a bounded
number of times, before the bisect says it cannot tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.decide.types import Verdict

Class = Literal["good", "bad", "unsure", "broken", "other", "no data"]
#: The reference's class: it is what every other build is compared with.
REFERENCE_CLASS: Class = "good"
#: Guards compared between a build and the known-bad one; "broken" is matched on its own.
SLOWER_GUARDS = ("ratio", "thunder", "nvfuser")


@dataclass(frozen=True)
class Figure:
    """A variant's geometric-mean change over the points, in one guard (ratio or kernel)."""

    guard: str
    variant: str
    points: int
    estimate: float
    low: float
    high: float
    state: str


@dataclass(frozen=True)
class Judged:
    """One build against the known-good one: its class and what it rests on."""

    cls: Class
    overall: str
    alarming: tuple[str, ...]  # guards broken or regressed, in the verdict's order
    why: str
    figures: tuple[Figure, ...] = ()
    broken_points: int = 0
    settle: int | None = None  # unsure: runs a side that would settle its points, at most
    noise: str | None = None  # which noise model the verdict's intervals used, in words


def alarming(v: Verdict) -> tuple[str, ...]:
    return tuple(g.kind for g in v.guards if g.alarming)


def figures(v: Verdict) -> tuple[Figure, ...]:
    return tuple(
        Figure(
            g.kind,
            a.variant,
            a.points,
            a.geomean.estimate,
            a.geomean.low,
            a.geomean.high,
            a.state,
        )
        for g in v.guards
        if g.kind in SLOWER_GUARDS
        for a in g.aggregates
    )


def _settle(v: Verdict) -> int | None:
    runs = [p.settle for p in (*v.points, *v.kernels) if p.state == "unsure" and p.settle]
    return max(runs) if runs else None


def judge(v: Verdict, bad_guards: tuple[str, ...] | None) -> Judged:
    """``bad_guards`` None: ``v`` is the known-bad build's own verdict, which is bad when it
    raises any guard at all."""
    raised = alarming(v)
    guard = v.guard("broken")
    broken = sum(p.state == "broken" for p in guard.points) if guard else 0

    def out(cls: Class, why: str) -> Judged:
        return Judged(cls, v.overall, raised, why, figures(v), broken, _settle(v), v.model)

    if v.overall == "inconclusive (no data)":
        return out("no data", "no gating point has data on both builds")
    if v.overall == "unsure":
        return out("unsure", v.reason)
    if not raised:
        return out("good", f"{v.overall}: {v.reason}")
    if bad_guards is None:
        return out("bad", v.reason)
    if "broken" in raised:
        if "broken" in bad_guards:
            return out("bad", v.reason)
        return out("broken", "fails where the known-good build ran; the known-bad build does not")
    if set(raised) & set(bad_guards) - {"broken"}:
        return out("bad", v.reason)
    return out(
        "other",
        f"regressed in {', '.join(raised)}, not as the known-bad build ({', '.join(bad_guards)})",
    )
