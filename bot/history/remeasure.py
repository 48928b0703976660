"""A pending change far beyond noise is confirmed by re-measuring its commit (pure).

A change at the newest commit is pending until ``min_after`` commits follow it (changepoint.py):
one odd run is no change. At nightly cadence that makes every change wait two nights, the ones
nobody could miss too: Thunder's backward unfused (data/h200, 11x) waited as long as a +2% step.
What the second commit adds for such a change is a second, independent measurement; a second
run of the same commit gives that the same night.

**The rule.** A pending change is *far beyond noise* when its headline figure (the size the
report prints: a variant's geometric mean, else the surest point) has a 95% interval whose near
end (the end nearer 1) is past ``FACTOR`` (4) times the guard's threshold: for a slowdown, a
lower bound above ``1 + 4 x 2%``; for a speed-up, an upper bound below ``1 / (1 + 4 x 2%)`` (the
threshold is the guard's, ``effect`` for the ratio and ``kernel_effect`` for the kernel times,
or the headline point's own where that is larger). Such a change is marked ``remeasure``: its
first bad commit is to be measured again (nightly.yml's ``remeasure`` jobs do, and the watch
reads the run as a replicate: two runs of one commit on one machine, bot/history/load.py).

Once the history holds two or more runs of that commit, the change is **confirmed** when every
one of those runs, alone against the same before window, flags the same guard the same way with
its near end still past the bar (so the first run alone never confirms it, and a re-measurement
that shows less does not): confirmed changes are filed as any other. When the runs do not all
agree it stays pending under the old rule (``min_after`` commits), the report saying so. A
change below the bar keeps the old rule exactly: nothing here touches it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config import VerdictSettings
from bot.decide.stats import Interval
from bot.decide.types import Guard, GuardKind, Verdict
from bot.decide.wording import signed
from bot.history.method import Method
from bot.history.table import Table, select_runs
from bot.history.window import Span, decide_span, headline

#: How many times the guard's threshold the near end of the interval must pass.
FACTOR = 4


@dataclass(frozen=True)
class Far:
    """Why a change is far beyond noise: its headline figure and where its interval stops."""

    what: str
    interval: Interval
    threshold: float  # the guard's threshold (a fraction: 0.02)
    bar: float  # the factor the near end must pass: 1 + FACTOR * threshold, or its inverse

    @property
    def upward(self) -> bool:
        return self.bar > 1

    @property
    def near(self) -> float:
        """The end of the interval nearer 1: the lower bound of a slowdown."""
        return self.interval.low if self.upward else self.interval.high


@dataclass(frozen=True)
class Remeasure:
    """The mark of a change far beyond noise at its newest commits."""

    commit: str  # the commit to measure again: the change's first bad commit (full hash)
    far: Far  # on every run of it together
    runs: int  # the history's runs of that commit
    #: None: not re-measured yet (one run); True: every run alone still far beyond noise (the
    #: change is confirmed); False: the re-measurement did not agree (pending, the old rule).
    agreed: bool | None


def guard_threshold(kind: GuardKind, s: VerdictSettings) -> float:
    return s.effect if kind == "ratio" else s.kernel_effect


def far(g: Guard, direction: str, s: VerdictSettings) -> Far | None:
    """The guard's change, when its headline figure's near end is past FACTOR x its threshold."""
    if direction not in ("regressed", "improved"):
        return None
    found = headline(g, direction)
    if found is None:
        return None
    what, c, own = found
    threshold = max(guard_threshold(g.kind, s), own or 0.0)
    bar = 1 + FACTOR * threshold
    if direction == "regressed":
        return Far(what, c.change, threshold, bar) if c.change.low > bar else None
    return Far(what, c.change, threshold, 1 / bar) if c.change.high < 1 / bar else None


def _far_in(v: Verdict, guard: GuardKind, direction: str) -> Far | None:
    g = v.guard(guard)
    return far(g, direction, v.settings) if g is not None and g.state == direction else None


def each_run_far(
    table: Table,
    span: Span,
    guard: GuardKind,
    direction: str,
    alpha: float,
    m: Method,
    model_note: str,
) -> bool:
    """Whether every run of the first bad commit, alone against the span's before window (at
    the same alpha), flags ``guard`` the ``direction`` way with its near end past the bar."""
    first_bad = span.split + 1
    runs = len(table.history.commits[first_bad].runs)
    before = [(i, None) for i in range(span.first, span.split + 1)]
    for k in range(runs):
        sub = select_runs(table, [*before, (first_bad, (k,))])
        one = Span(len(before) - 1, 0, len(before))
        v = decide_span(sub, one, alpha, m.min_before, m.min_after, model_note)
        if _far_in(v, guard, direction) is None:
            return False
    return runs > 0


def judge(
    table: Table,
    span: Span,
    v: Verdict,
    guard: GuardKind,
    direction: str,
    alpha: float,
    m: Method,
    model_note: str,
) -> Remeasure | None:
    """The mark of a pending change decided as ``v`` on ``span`` (None: not far beyond noise,
    the old rule alone)."""
    found = _far_in(v, guard, direction)
    if found is None:
        return None
    commit = table.history.commits[span.split + 1]
    runs = len(commit.runs)
    if runs < 2:
        return Remeasure(commit.sha, found, runs, None)
    agreed = each_run_far(table, span, guard, direction, alpha, m, model_note)
    return Remeasure(commit.sha, found, runs, agreed)


def bound_words(f: Far) -> str:
    """'lower bound 11.3x > +8%, 4x the 2% threshold' (for an improvement, the upper bound)."""
    side, sign = ("lower", ">") if f.upward else ("upper", "<")
    pct = f"{100 * f.threshold:g}%"
    return f"{side} bound {signed(f.near)} {sign} {signed(f.bar)}, {FACTOR}x the {pct} threshold"
