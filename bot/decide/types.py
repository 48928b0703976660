"""The verdict's records (pure data): one per point, one per variant, and the whole.

Kept apart so that the rules (bot/decide/rules.py), the orchestration (bot/decide/verdict.py),
the comment and the JSON all speak of the same types without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.config import VerdictSettings
from bot.decide.stats import Comparison, Interval
from bot.results.types import PointKey

Overall = Literal["regressed", "improved", "no change", "inconclusive (no data)"]
State = Literal["regressed", "improved", "no change", "no data"]
Moved = Literal["thunder", "nvfuser", "both", "neither", "unknown"]


@dataclass(frozen=True)
class PointVerdict:
    key: PointKey
    gating: bool
    threshold: float
    state: State
    ratio: Comparison | None = None
    p_up_adj: float | None = None
    p_down_adj: float | None = None
    corroborated: bool = False
    moved: Moved = "unknown"
    contender_kernel: Comparison | None = None
    nvfuser_kernel: Comparison | None = None
    bandwidth_pct: tuple[float | None, float | None] = (None, None)  # base, head
    no_data: str | None = None


@dataclass(frozen=True)
class VariantSummary:
    variant: str
    points: int
    geomean: Interval


@dataclass(frozen=True)
class Verdict:
    overall: Overall
    reason: str
    machine: str
    base: str
    head: str
    points: tuple[PointVerdict, ...]
    summaries: tuple[VariantSummary, ...]
    worst: PointVerdict | None
    settings: VerdictSettings
    notes: tuple[str, ...] = ()

    @property
    def regressed(self) -> bool:
        return self.overall == "regressed"
