"""The landing view's rule for a change since the previous commit (pure).

One number against the one before it: ``after / before - 1``, of asv's stored median (the value
the graph draws). Higher is worse for all three columns the view colours: the ratio (the
contender slower against hand-written nvFuser), the contender's kernel time and nvFuser's.

- **worse**: the change is at least ``+threshold``;
- **better**: at most ``-threshold``;
- **within noise**: smaller than ``threshold`` either way;
- **new**: no value at the previous commit; **no data**: none at this one.

``threshold`` is the bot's own smallest effect for that series, from perfbot.toml: ``[verdict]
effect`` for a ratio, ``kernel_effect`` for a kernel time, or the first matching per-point
``[[verdict.thresholds]]`` pattern (bot/config.py ``threshold_for``/``kernel_threshold_for``).
A change below it is one the bot would never call a regression, however sure; a change above it
is only a candidate: the verdict also needs its interval to exclude 1 (bot/decide/verdict.py),
which one commit against another cannot show. The colour is a pointer, not the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Kind = Literal["worse", "better", "same", "new", "nodata"]
WORDS: dict[Kind, str] = {
    "worse": "worse",
    "better": "better",
    "same": "within noise",
    "new": "new",
    "nodata": "no data",
}


class Thresholds(Protocol):
    """What the rule needs of bot.config.VerdictSettings."""

    def threshold_for(self, label: str) -> float: ...

    def kernel_threshold_for(self, label: str) -> float: ...


@dataclass(frozen=True)
class Delta:
    before: float | None
    after: float | None
    threshold: float

    @property
    def relative(self) -> float | None:
        if self.before is None or self.after is None or self.before <= 0:
            return None
        return self.after / self.before - 1

    @property
    def kind(self) -> Kind:
        if self.after is None:
            return "nodata"
        rel = self.relative
        if rel is None:
            return "new"
        if rel >= self.threshold:
            return "worse"
        if rel <= -self.threshold:
            return "better"
        return "same"
