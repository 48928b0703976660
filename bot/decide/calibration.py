"""What a calibration found (pure data): per number of runs a side, the false-alarm and
detection rates of the verdict measured out of sample (bot/decide/calibrate.py counts them,
bot/commands/calibrate.py plans the trials, bot/tell/calibration.py tells them)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.decide.calibrate import BROAD, LONE, RELIABLE, Outcome, Rate
from bot.results.types import DEFAULT_FUSION, PointKey

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


#: Issue 39's bar for a fusion to be judged as calibrated rather than provisionally: its A/A
#: false alarms at most 1% a PR and a +2% change on either side caught at least this often
#: (both by their 95% bounds), RMSNorm backward's held to the verdict's own 95%.
FUSION_POWER = {DEFAULT_FUSION: RELIABLE}
OTHER_FUSION_POWER = 0.80


@dataclass(frozen=True)
class FusionSide:
    """One fusion's own calibration (its points alone, its noise model fitted on its runs out
    of sample), at ``a_side`` runs a side."""

    fusion: str
    a_side: int
    false_alarm: Rate
    thunder: Rate  # +BROAD on Thunder at every point of the fusion
    nvfuser: Rate  # +BROAD on nvFuser's fusion

    @property
    def power_goal(self) -> float:
        return FUSION_POWER.get(self.fusion, OTHER_FUSION_POWER)

    def shortfalls(self) -> tuple[str, ...]:
        """What keeps this fusion provisional (empty: none)."""
        goal, broad = self.power_goal, f"+{100 * BROAD:g}%"
        rows = (
            ("A/A false alarms", self.false_alarm, TARGETS["false_alarm"], True),
            (f"{broad} on Thunder caught", self.thunder, goal, False),
            (f"{broad} on nvFuser caught", self.nvfuser, goal, False),
        )
        return tuple(
            f"{name} {r.hits}/{r.trials} ({'<=' if most else '>='} "
            f"{100 * (r.upper95 if most else r.lower95):.1f}%, needs {'<=' if most else '>='} "
            f"{100 * want:g}%)"
            for name, r, want, most in rows
            if not met(r, want, most)
        )


@dataclass(frozen=True)
class Calibration:
    machine: str
    calls_per_sample: str | None
    runs: tuple[str, ...]  # commit prefixes, in the order given
    sides: tuple[Side, ...]
    skipped: tuple[int, ...]  # runs a side asked for that too few runs allow
    left_out: tuple[str, ...] = ()  # runs of the variant on another stack (not A/A with these)
    fusions: tuple[FusionSide, ...] = ()  # each fusion on its own, where the runs hold several


def provisional(c: Calibration) -> dict[str, tuple[str, ...]]:
    """The fusions whose own calibration falls short (issue 39), with why: what ``calibrate
    --mark-model`` writes into the noise model, where the verdict reads it (a move of such a
    fusion is shown, not gated on)."""
    return {f.fusion: why for f in c.fusions if (why := f.shortfalls())}


def met(r: Rate, goal: float, at_most: bool) -> bool:
    """A target is met when its 95% bound is (not only the rate): a false-alarm rate's upper
    bound at most the goal, a detection rate's lower bound at least it. A goal of 0 (never)
    can only be judged on the count."""
    if goal == 0:
        return r.hits == 0
    return r.upper95 <= goal if at_most else r.lower95 >= goal


def missed(c: Calibration) -> tuple[str, ...]:
    """Every target this calibration does not meet, and every number of runs a side it could
    not measure: empty is what a noise model needs to be accepted (docs/CALIBRATION.md,
    "Onboarding a GPU kind"), so that a kind is judged only where its false alarms and power
    were shown out of sample, at the runs a side a PR gets."""
    out = [f"{k} a side: not measured (too few runs)" for k in c.skipped]
    broad, t = f"+{100 * BROAD:g}%", TARGETS
    for s in c.sides:
        rows = [
            ("A/A false alarms", s.false_alarm, t["false_alarm"], True),
            (f"{broad} Thunder kernels at every point", s.thunder, t["thunder"], False),
            (f"{broad} nvFuser fusion at every point", s.nvfuser, t["nvfuser"], False),
            (f'{broad} nvFuser read as "improved"', s.nvfuser_improved, 0.0, True),
            *((f"lone +{100 * LONE:g}% at {k.label}", r, t["lone"], False) for k, r in s.lone),
        ]
        out += [
            f"{s.a_side} a side: {name} ({r.hits}/{r.trials})"
            for name, r, goal, at_most in rows
            if not met(r, goal, at_most)
        ]
    return tuple(out)
