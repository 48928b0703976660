"""The in-run control, fusion by fusion (pure): a side whose build did not change must not move.

A PR changes one side: Thunder's repository changes Thunder, nvFuser's changes nvFuser. The
other side runs the same build, the same definition and the same measuring code at base and
head, measured in the same processes, interleaved with the side under test: it is the run's
control. What the control did decides whether the run is evidence (docs/METHOD.md, "The in-run
control"), and it is read for each fusion on its own: what one fusion's build, control or
noise says tells nothing of another's.

- **Drift**: the control moved and the ratio did not. Both sides moved alike: the machine
  changed between the two measurements (a neighbour on the GPU, clocks, a thermal event the
  runner check missed), and none of this fusion's figures are evidence.
- **Unexplained**: an unchanged side moved alone (the ratio moved with it), or the ratio moved
  with nothing changed on either side. Not drift, which moves both sides: something the records
  do not show changed that side (records without a suite digest cannot show a change of the
  suite's own code). It is said as exactly that: not gating, nothing filed, re-measure.
- A moved ratio with a steady control is judged, never dismissed; a side whose build, the
  suite's definition of it or the measuring code changed is no control (a change of the
  suite is the suite's news: bot/alert/owners.py), and nothing is inferred from it.

What the records cannot tell (bot/alert/builds.py "unknown": no suite digest, the printed
definition alone) is not a change: such a side still serves as the control, and the words say
what the records could not rule out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from bot.alert.builds import Builds, Part
from bot.decide.types import Guard, GuardKind, Verdict

Finding = Literal["drift", "unexplained"]
#: The guards whose unchanged move means something, the sides first (the classic control,
#: nvFuser's hand-written fusion, before Thunder's kernels), then the ratio.
_CONTROLS: tuple[GuardKind, ...] = ("nvfuser", "thunder", "ratio")
_SUBJECT: dict[GuardKind, str] = {
    "nvfuser": "nvFuser's hand-written fusion",
    "thunder": "Thunder's kernels",
    "ratio": "the Thunder/nvFuser ratio",
}
_COULD_NOT: dict[Part, str] = {
    "suite": "a change of the suite's measuring code",
    "definition": "a change of the hand-written definition",
    "thunder_code": "a change of the functions Thunder traces",
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
class Control:
    """What the control of one fusion on one machine did, and by how much (plain words)."""

    finding: Finding
    guard: GuardKind
    size: float | None
    #: What the records could not rule out (no suite digest, ...), in words, or ().
    unseen: tuple[str, ...] = ()

    @property
    def moved(self) -> str:
        by = f" {100 * (self.size - 1):+.1f}%" if self.size is not None else ""
        return f"{_SUBJECT[self.guard]} moved{by}"

    @property
    def short(self) -> str:
        """For a headline and a status: why it does not count."""
        if self.finding == "drift":
            return f"the runner drifted ({self.moved} with nothing changed, the ratio steady)"
        return f"{self.moved} with nothing recorded to explain it"

    @property
    def text(self) -> str:
        """The whole story, for the warning under a headline and the JSON."""
        caveat = f" (the records cannot rule out {' or '.join(self.unseen)})" if self.unseen else ""
        if self.finding == "drift":
            return (
                f"{self.moved} although nothing in it changed, and the ratio did not: both sides "
                f"moved alike, the runner drifted{caveat}; neither side's figures are evidence"
            )
        if self.guard == "ratio":
            return (
                f"{self.moved} although neither side's build, definition or measuring code "
                f"changed{caveat}: not judged; measure it again"
            )
        return (
            f"{self.moved} alone although nothing recorded in it changed{caveat}: not drift "
            "(which moves both sides), not judged; measure it again"
        )


def controlled(v: Verdict, builds: Builds) -> Control | None:
    """What the in-run control says of this fusion's verdict, or None (nothing to say: every
    side that moved had a recorded cause, or nothing moved)."""
    if not builds.known:
        return None
    ratio = v.guard("ratio")
    ratio_moved = ratio is not None and ratio.state in MOVED
    for kind in _CONTROLS:
        g = v.guard(kind)
        if g is None or g.state not in MOVED or builds.changed_of(kind):
            continue
        unseen = tuple(_COULD_NOT[p] for p in builds.unknown_of(kind) if p in _COULD_NOT)
        finding: Finding = "unexplained" if ratio_moved else "drift"
        return Control(finding, kind, move(g), unseen)
    return None
