"""What a calibration found (pure data): per number of runs a side, the false-alarm and
detection rates of the verdict measured out of sample (bot/decide/calibrate.py counts them,
bot/commands/calibrate.py plans the trials, bot/tell/calibration.py tells them)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.decide.calibrate import RELIABLE, Outcome, Rate
from bot.results.types import PointKey

SCHEMA = "perfbot-calibration/2"
#: What the docs hold the verdict to: false alarms at most, detections at least.
TARGETS = {"false_alarm": 0.01, "thunder": RELIABLE, "nvfuser": RELIABLE, "lone": RELIABLE}


@dataclass(frozen=True)
class Side:
    """The report for one number of runs a side."""

    a_side: int
    choices: int
    copies: int
    model_runs: int
    false_alarm: Rate  # A/A: regressed or broken
    unsure: Rate  # A/A: unsure
    not_quiet: Rate  # A/A: anything but "no change"
    thunder: Rate  # +BROAD on Thunder at every point
    nvfuser: Rate  # +BROAD on nvFuser at every point
    nvfuser_improved: Rate  # ... read as "improved" (the bug this verdict exists to avoid)
    lone: tuple[tuple[PointKey, Rate], ...]  # +LONE at one large point alone
    searched: tuple[tuple[PointKey, float, Outcome], ...]  # 1 a side: point, threshold, search


@dataclass(frozen=True)
class Calibration:
    machine: str
    calls_per_sample: str | None
    runs: tuple[str, ...]  # commit prefixes, in the order given
    sides: tuple[Side, ...]
    skipped: tuple[int, ...]  # runs a side asked for that too few runs allow
    left_out: tuple[str, ...] = ()  # runs of the variant on another stack (not A/A with these)
