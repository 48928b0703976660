"""The smallest step a real history could have caught (pure): Thunder's kernels made slower by
a known factor from one commit on, on top of the history's own recorded runs, judged as the
watch judges them.

Why: a watch that found nothing over months of real nightlies has said something only if it
would have found a change of a size someone cares about. The real runs keep their real noise
(within and between runs, the history's own steps and drift); only the step is made, and it is
said so wherever a figure of this is shown (never a measurement). The step is made as the
PR-mode calibration makes it (bot/decide/calibrate.py ``scale_thunder``: every gating point's
kernel times and ratios), at every split a change could be confirmed at (at least
``min_before`` commits before it and ``min_after`` after), one split at a time. A step counts as
caught at a split when the watch confirms the ratio regressed exactly there; the smallest step
is the first of STEPS caught at every split tried.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, replace

from bot.config import VerdictSettings
from bot.decide.calibrate import scale_thunder
from bot.decide.noise_model import NoiseModel
from bot.history.method import Method
from bot.history.series import History
from bot.history.watch import analyse

#: The steps tried, smallest first (the search stops at the first caught at every split).
STEPS = (0.01, 0.02, 0.03, 0.05, 0.075, 0.10, 0.15, 0.20)


@dataclass(frozen=True)
class Power:
    """One history's search: each step tried and at how many of the splits it was caught."""

    fusion: str
    commits: int
    splits: tuple[int, ...]  # the positions the step was made at (its first slower commit)
    tried: tuple[tuple[float, int], ...]  # (step, splits where it was caught), smallest first

    @property
    def smallest(self) -> float | None:
        """The smallest step caught at every split; None when none was (or no split fits)."""
        caught = [step for step, hits in self.tried if self.splits and hits == len(self.splits)]
        return caught[0] if caught else None


def stepped(h: History, first_slower: int, step: float, s: VerdictSettings) -> History:
    """``h`` with Thunder ``step`` slower at commit ``first_slower`` and every later one."""
    commits = tuple(
        replace(c, runs=tuple(scale_thunder(r, 1 + step, s) for r in c.runs))
        if i >= first_slower
        else c
        for i, c in enumerate(h.commits)
    )
    return replace(h, commits=commits, every=())


def caught_at(
    h: History,
    first_slower: int,
    step: float,
    s: VerdictSettings,
    model: NoiseModel | None,
    m: Method,
) -> bool:
    """Whether the watch confirms the ratio regressed with ``first_slower`` its first bad."""
    w = analyse(stepped(h, first_slower, step, s), s, model, m, follow=False)
    return any(
        c.guard == "ratio" and c.direction == "regressed" and c.span.split + 1 == first_slower
        for c in w.scan.changes
    )


def power(
    h: History, s: VerdictSettings, model: NoiseModel | None, m: Method | None = None
) -> Power:
    """The search over STEPS at every split of ``h`` a change could be confirmed at."""
    m = m or Method()
    n = len(h.commits)
    # A split needs min_before commits that ran Thunder before it and min_after after it: a
    # build whose Thunder points all failed (a history's broken start) times nothing.
    ran = [
        i
        for i, c in enumerate(h.commits)
        if any(p.ratio for r in c.runs for p in r.points.values())
    ]
    splits = tuple(
        i
        for i in range(m.min_before, n - m.min_after + 1)
        if sum(j < i for j in ran) >= m.min_before and sum(j >= i for j in ran) >= m.min_after
    )
    tried: list[tuple[float, int]] = []
    for step in STEPS if splits else ():
        hits = sum(caught_at(h, i, step, s, model, m) for i in splits)
        tried.append((step, hits))
        if splits and hits == len(splits):
            break
    return Power(h.fusion, n, splits, tuple(tried))


def _step(x: float) -> str:
    return f"+{100 * x:g}%"


def power_text(found: list[Power]) -> str:
    """The searches as the report's last section: made steps, said so in its first line."""
    lines = [
        *textwrap.wrap(
            "Smallest step caught (--power): Thunder's kernels made slower by each step from "
            "one commit on, over these real runs (a made step, not a measurement), at every "
            "split a change could be confirmed at; caught: the ratio confirmed regressed there.",
            width=100,
        ),
    ]
    width = max((len(p.fusion) for p in found), default=0) + 2
    lines.append(
        f"  {'fusion':<{width}}{'commits':>8}{'splits':>8}{'smallest':>10}  "
        "steps tried: splits caught"
    )
    for p in found:
        best = _step(p.smallest) if p.smallest is not None else "none"
        tried = ", ".join(f"{_step(x)}: {hits}/{len(p.splits)}" for x, hits in p.tried)
        if not p.splits:
            tried = "no split has enough commits that ran Thunder on both sides (2 before, 2 after)"
        lines.append(
            f"  {p.fusion:<{width}}{p.commits:>8}{len(p.splits):>8}{best:>10}  {tried or '-'}"
        )
    return "\n".join(lines)


def power_json(p: Power) -> dict[str, object]:
    return {
        "fusion": p.fusion,
        "commits": p.commits,
        "splits": list(p.splits),
        "smallest": p.smallest,
        "tried": [{"step": x, "caught": hits} for x, hits in p.tried],
    }
