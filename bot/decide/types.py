"""The verdict's records (pure data): one per series and point, one per guard, and the whole.

Kept apart so that the rules (bot/decide/rules.py), the orchestration (bot/decide/verdict.py),
the comment and the JSON all speak of the same types without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.config import VerdictSettings
from bot.decide.level import RatioLevel
from bot.decide.stats import Comparison, Interval
from bot.results.types import PointKey

#: Worst first: the headline is the worst guard's state.
Overall = Literal[
    "broken",
    "regressed",
    "unsure",
    "improved",
    "no change",
    "inconclusive (no data)",
    "uncalibrated",
]
#: "not judged": what an uncalibrated machine shows for a state its noise could explain
#: (bot/decide/unjudged.py); the verdict itself never decides it.
State = Literal[
    "broken",
    "still failing",
    "regressed",
    "unsure",
    "improved",
    "no change",
    "no data",
    "not judged",
]
Moved = Literal["thunder", "nvfuser", "both", "neither", "unknown"]
SeriesKind = Literal["ratio", "kernel"]
#: What a guard tracks: the ratio, nvFuser's own fusion, Thunder's own kernels, or whether the
#: points still run at all. Each has its own linked issue.
GuardKind = Literal["broken", "nvfuser", "thunder", "ratio"]
GUARD_TITLES: dict[GuardKind, str] = {
    "broken": "Every point still runs",
    "ratio": "Thunder/nvFuser kernel-time ratio",
    "nvfuser": "nvFuser's hand-written fusion (kernel time)",
    "thunder": "Thunder's own kernel time",
}


@dataclass(frozen=True)
class PointVerdict:
    """One series (the ratio of a contender, or a variant's kernel time) at one point."""

    key: PointKey
    gating: bool
    threshold: float
    state: State
    cmp: Comparison | None = None
    p_up_adj: float | None = None
    p_down_adj: float | None = None
    corroborated: bool = False
    moved: Moved = "unknown"
    contender_kernel: Comparison | None = None
    nvfuser_kernel: Comparison | None = None
    bandwidth_pct: tuple[float | None, float | None] = (None, None)  # base, head
    no_data: str | None = None
    kind: SeriesKind = "ratio"
    settle: int | None = None  # an unsure point: runs a side that would settle it
    error: str | None = None  # broken / still failing: why head has no data

    @property
    def ratio(self) -> Comparison | None:
        """The ratio comparison of a ratio row (None for kernel rows and points without data)."""
        return self.cmp if self.kind == "ratio" else None


@dataclass(frozen=True)
class VariantSummary:
    """A variant's geometric-mean change over its points with data, for one series kind."""

    variant: str
    points: int
    geomean: Interval
    kind: SeriesKind = "ratio"
    cmp: Comparison | None = None
    p_up_adj: float | None = None
    state: State = "no change"


@dataclass(frozen=True)
class Guard:
    kind: GuardKind
    state: State
    summary: str  # plain words, e.g. "5 point(s) broken at head"
    points: tuple[PointVerdict, ...]  # the gating rows this guard decides on
    aggregates: tuple[VariantSummary, ...] = ()

    @property
    def title(self) -> str:
        return GUARD_TITLES[self.kind]

    @property
    def alarming(self) -> bool:
        """This guard's linked issue should be open."""
        return self.state in ("broken", "regressed")


@dataclass(frozen=True)
class Verdict:
    overall: Overall
    reason: str
    machine: str
    base: str
    head: str
    points: tuple[PointVerdict, ...]  # ratio rows (gating and context)
    summaries: tuple[VariantSummary, ...]  # the ratio's geometric means
    worst: PointVerdict | None
    settings: VerdictSettings
    notes: tuple[str, ...] = ()
    guards: tuple[Guard, ...] = ()
    kernels: tuple[PointVerdict, ...] = ()  # kernel-time rows (nvFuser's and each contender's)
    runs: tuple[int, int] = (1, 1)  # processes that measured base, head
    model: str | None = None  # which noise model the intervals use, in words
    levels: RatioLevel | None = None  # the ratio's level at each side (bot/decide/level.py)

    @property
    def regressed(self) -> bool:
        return self.overall == "regressed"

    @property
    def broken(self) -> bool:
        return self.overall == "broken"

    def guard(self, kind: GuardKind) -> Guard | None:
        return next((g for g in self.guards if g.kind == kind), None)
