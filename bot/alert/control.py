"""The in-run control (pure): a side whose build did not change must not move.

A PR changes one side: Thunder's repository changes Thunder, nvFuser's changes nvFuser. The
other side runs the same build, the same definition, on the same stack at base and head, and
is measured in the same processes, interleaved with the side under test. If it moved beyond
its threshold anyway, the machine changed between the two measurements (a neighbour on the
GPU, clocks, a thermal event the runner check did not catch), and the figures of the side
under test moved by the same cause: none of this machine's verdict can be trusted. The
machine does not gate (bot/tell/machines.py), nothing is filed, the status is neutral and the
comment offers the re-run (docs/METHOD.md, "The in-run control").

A side counts as unchanged only where both provenance records say so (bot/alert/builds.py):
a run without records is judged as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bot.alert.builds import Builds
from bot.decide.types import Guard, GuardKind, Verdict

#: The guards whose unchanged move means drift, the control first.
_CONTROLS: tuple[GuardKind, ...] = ("nvfuser", "thunder", "ratio")
_SUBJECT: dict[GuardKind, str] = {
    "nvfuser": "nvFuser's hand-written fusion",
    "thunder": "Thunder's kernels",
    "ratio": "the Thunder/nvFuser ratio",
}
_DISTRUSTED: dict[GuardKind, str] = {
    "nvfuser": "Thunder's figures from this run are not trusted either",
    "thunder": "nvFuser's figures from this run are not trusted either",
    "ratio": "neither side's figures from this run are trusted",
}
MOVED = ("regressed", "improved")


def move(g: Guard) -> float | None:
    """How far the guard moved: the geometric mean (or, without one, the point) farthest from
    1 among those in the guard's own state."""
    sizes = [a.geomean.estimate for a in g.aggregates if a.state == g.state]
    if not sizes:
        sizes = [p.cmp.change.estimate for p in g.points if p.state == g.state and p.cmp]
    sizes = [x for x in sizes if x > 0 and math.isfinite(x)]
    return max(sizes, key=lambda x: abs(math.log(x))) if sizes else None


@dataclass(frozen=True)
class Drift:
    """What moved although nothing it depends on changed, and by how much (plain words)."""

    guard: GuardKind
    size: float | None

    @property
    def moved(self) -> str:
        by = f" {100 * (self.size - 1):+.1f}%" if self.size is not None else ""
        return f"{_SUBJECT[self.guard]} moved{by} although nothing in it changed"

    @property
    def text(self) -> str:
        """The whole story, for the first screen's warning and the JSON."""
        return f"{self.moved}: the runner drifted; {_DISTRUSTED[self.guard]}"

    @property
    def short(self) -> str:
        """For a headline and a status: why it does not count."""
        return f"the runner drifted ({self.moved})"


def drifted(v: Verdict, builds: Builds) -> Drift | None:
    """A guard that moved (regressed or improved) although nothing it depends on changed
    between base and head, or None."""
    if not builds.known:
        return None
    for kind in _CONTROLS:
        g = v.guard(kind)
        if g is None or g.state not in MOVED or builds.changed_of(kind):
            continue
        return Drift(kind, move(g))
    return None
