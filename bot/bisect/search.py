"""The next step of a bisect: which build to measure, or the answer (pure).

One step is assumed: every build up to some point is good, every build after it is bad. The
ends are measured first (the known-good build is the reference, the known-bad one must really
be bad there, on the same machine in the same session), then the middle of the narrowest
bracket the measurements allow: the latest good build and the earliest bad one after it. So a
timeline of n builds costs the 2 ends plus ceil(log2(n - 1)) midpoints at most, plus the
re-measurements of unsure builds.

Builds measured in an earlier bisect over another list of the same builds (the state file
keeps them) are used as they are. They are also how a contradiction shows: a good build after
a bad one is not one step, and the search says so instead of guessing which one to believe.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.bisect.classify import Class


@dataclass(frozen=True)
class Measure:
    build: str
    why: str


@dataclass(frozen=True)
class Found:
    last_good: str
    first_bad: str


@dataclass(frozen=True)
class Stuck:
    """No first bad build can be named from these measurements; ``why`` says what would help."""

    why: str
    build: str | None = None  # the build that stopped it, where one did
    last_good: str | None = None  # the bracket so far
    first_bad: str | None = None


Step = Measure | Found | Stuck


def most_measurements(builds: int) -> int:
    """Measurements a one-step timeline of ``builds`` builds needs at most, unsure ones aside."""
    return min(builds, 2 + math.ceil(math.log2(max(builds - 1, 1))))


def next_step(
    order: Sequence[str],
    classes: Mapping[str, Class],
    runs: Mapping[str, int],
    max_runs: int,
) -> Step:
    """``classes`` holds every measured build but the known-good one (the reference);
    ``runs`` how often each build was measured; an unsure build is measured again until it
    has ``max_runs`` runs."""
    good, bad = order[0], order[-1]
    if not runs.get(good):
        return Measure(good, "the known-good build: the reference every build is compared with")
    if not runs.get(bad):
        return Measure(bad, "the known-bad build: is it bad at these points, on this machine?")
    again = _again(bad, classes, runs, max_runs, "the known-bad build")
    if again is not None:
        return again
    if classes[bad] != "bad":
        return Stuck(
            f"the known-bad build is {classes[bad]} against the known-good one at these "
            "points: there is no step to find (other points, or the two builds swapped?)",
            bad,
        )
    index = {name: i for i, name in enumerate(order)}
    decided = {name: c for name, c in classes.items() if name in index and c in ("good", "bad")}
    decided[good] = "good"
    bads = sorted(index[n] for n, c in decided.items() if c == "bad")
    goods = sorted(index[n] for n, c in decided.items() if c == "good")
    if goods[-1] > bads[0]:
        late, early = order[goods[-1]], order[bads[0]]
        return Stuck(
            f"{late} is good but comes after {early}, which is bad: the builds do not change "
            "in one step; bisect each side on its own, or check the order",
            late,
        )
    lo = goods[-1]
    hi = bads[0]
    for name in order[lo + 1 : hi]:
        if name not in classes:
            continue
        again = _again(name, classes, runs, max_runs, name)
        if again is not None:
            return again
        return Stuck(_why(classes[name]), name, order[lo], order[hi])
    if hi == lo + 1:
        return Found(order[lo], order[hi])
    mid = (lo + hi) // 2
    return Measure(
        order[mid], f"midpoint of {order[lo]} (good) and {order[hi]} (bad): {hi - lo - 1} left"
    )


def _again(
    name: str, classes: Mapping[str, Class], runs: Mapping[str, int], max_runs: int, what: str
) -> Step | None:
    if classes.get(name) != "unsure":
        return None
    if runs[name] < max_runs:
        return Measure(name, f"{what} is unsure: run {runs[name] + 1} of at most {max_runs}")
    return Stuck(
        f"{what} is still unsure after {runs[name]} runs: allow more (--remeasure) or "
        "choose points that moved more",
        name,
    )


def _why(cls: Class) -> str:
    if cls == "broken":
        return "fails where the known-good build ran and the known-bad one does not: another change"
    if cls == "other":
        return "regressed, but not in the guards the known-bad build raised: another change"
    return "has no data at these points: nothing to decide it on"
