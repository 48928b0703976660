"""Measure the verdict's false-alarm rate and power on real samples, by resampling.

A/A: the rounds of ONE real state are drawn into two pseudo-states ("bootstrap": each drawn
with replacement, keeping the round count, so the decision runs exactly as in production;
"split": a random half each, no ties, but half the rounds), and the full verdict runs on the
pair. Both come from the same distribution, so every "regressed" is a false alarm.

Power: the same pseudo-pairs, with the head's gating (Thunder) kernel times and ratios
multiplied by ``1 + shift``: a known regression of that size on top of real noise. The
detection rate at each shift, and the smallest shift detected at least 95% of the time, are
reported.

Rounds are drawn with the same indices for every variant of a (dtype, shape), so the pairing
of a round across variants, which the ratio relies on, survives the resampling. What this
cannot see is drift between separate runs (another process, another clock state): compare a
real A/A pair of runs (same code, run twice) for that; its verdict is reported as "observed".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from bot.config import VerdictSettings
from bot.decide.types import Overall
from bot.decide.verdict import decide
from bot.results.types import CommitResults, Point, PointKey

Mode = Literal["bootstrap", "split"]
DEFAULT_SHIFTS = (0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1)


@dataclass(frozen=True)
class Rate:
    label: str
    hits: int
    trials: int

    @property
    def rate(self) -> float:
        return self.hits / self.trials

    @property
    def upper95(self) -> float:
        return binomial_upper(self.hits, self.trials)


@dataclass(frozen=True)
class Calibration:
    machine: str
    base: str
    head: str
    mode: Mode
    points: int
    false_alarms: tuple[Rate, ...]  # per source state: "regressed" on an A/A pair
    any_change: tuple[Rate, ...]  # per source state: anything but "no change"
    power: tuple[tuple[float, Rate], ...]  # (shift, detections)
    observed: Overall  # the real base/head pair

    @property
    def min_shift_95(self) -> float | None:
        return next((s for s, r in self.power if r.rate >= 0.95), None)


def binomial_upper(hits: int, trials: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate (bisection on the binomial CDF)."""
    if hits >= trials:
        return 1.0

    def cdf(p: float) -> float:
        return sum(math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(hits + 1))

    lo, hi = hits / trials, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 1 - confidence else (lo, mid)
    return hi


def _take(p: Point, idx: Sequence[int], scale: float) -> Point:
    def pick(xs: tuple[float, ...] | None) -> tuple[float, ...] | None:
        return None if xs is None else tuple(xs[i] * scale for i in idx)

    return replace(p, ratio=pick(p.ratio), kernel_s=pick(p.kernel_s))


def pseudo_pair(
    state: CommitResults,
    rng: np.random.Generator,
    mode: Mode,
    shift: float,
    s: VerdictSettings,
    only: PointKey | None = None,
) -> tuple[CommitResults, CommitResults]:
    """Two pseudo-states drawn from one state's rounds; the head's gating side scaled (every
    gating point, or ``only`` that one).

    Only gating points are kept: the others cannot change the verdict, and dropping them
    halves the cost of each trial.
    """
    a: dict[PointKey, Point] = {}
    b: dict[PointKey, Point] = {}
    rounds: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    for key, point in state.points.items():
        if not s.is_gating(key.variant):
            continue
        n = len(point.kernel_s or point.ratio or ())
        group = (key.dtype, key.shape)
        if group not in rounds:
            if mode == "split":
                perm = [int(i) for i in rng.permutation(n)]
                rounds[group] = (perm[: n // 2], perm[n // 2 : 2 * (n // 2)])
            else:
                draw = rng.integers(0, max(n, 1), size=(2, n))
                rounds[group] = ([int(i) for i in draw[0]], [int(i) for i in draw[1]])
        ia, ib = rounds[group]
        a[key] = _take(point, ia, 1.0)
        b[key] = _take(point, ib, 1.0 + shift if only in (None, key) else 1.0)
    return (
        replace(state, commit="a" * 40, points=a),
        replace(state, commit="b" * 40, points=b),
    )


def calibrate(
    base: CommitResults,
    head: CommitResults,
    s: VerdictSettings,
    *,
    trials: int = 300,
    power_trials: int = 200,
    shifts: Sequence[float] = DEFAULT_SHIFTS,
    mode: Mode = "bootstrap",
) -> Calibration:
    rng = np.random.default_rng(s.seed)
    if mode == "split":
        s = replace(s, min_samples=max(3, s.min_samples // 2))
    false_alarms, any_change = [], []
    for label, state in (("base", base), ("head", head)):
        verdicts = [
            decide(*pseudo_pair(state, rng, mode, 0.0, s), s, explain=False).overall
            for _ in range(trials)
        ]
        false_alarms.append(Rate(label, verdicts.count("regressed"), trials))
        any_change.append(Rate(label, sum(v != "no change" for v in verdicts), trials))
    power = []
    for shift in shifts:
        hits = sum(
            decide(*pseudo_pair(base, rng, mode, shift, s), s, explain=False).regressed
            for _ in range(power_trials)
        )
        power.append((shift, Rate(f"+{shift:.1%}", hits, power_trials)))
    observed = decide(base, head, s, explain=False).overall
    n_points = sum(1 for k in base.points if s.is_gating(k.variant))
    return Calibration(
        base.machine,
        base.commit,
        head.commit,
        mode,
        n_points,
        tuple(false_alarms),
        tuple(any_change),
        tuple(power),
        observed,
    )


def report_text(c: Calibration) -> str:
    lines = [
        f"Calibration on {c.machine}: base {c.base[:12]}, head {c.head[:12]}, "
        f"{c.points} gating points, resampling mode {c.mode}",
        "",
        "A/A false alarms (verdict 'regressed' on two draws from one state):",
    ]
    for fa, anyc in zip(c.false_alarms, c.any_change, strict=True):
        lines.append(
            f"  from {fa.label}: {fa.hits}/{fa.trials} = {fa.rate:.2%} "
            f"(95% upper bound {fa.upper95:.2%}); any verdict but 'no change': "
            f"{anyc.hits}/{anyc.trials}"
        )
    lines += ["", "Power (head's Thunder samples x (1 + shift), verdict 'regressed'):"]
    for shift, r in c.power:
        lines.append(f"  shift {shift:+.1%}: {r.hits}/{r.trials} = {r.rate:.1%}")
    best = c.min_shift_95
    lines.append("")
    lines.append(
        f"Smallest shift detected with >= 95% power: {best:+.1%}"
        if best is not None
        else "No tested shift reached 95% power."
    )
    lines.append(f"Observed verdict of the real base/head pair: {c.observed}")
    return "\n".join(lines)


def to_json(c: Calibration) -> dict[str, object]:
    def rate(r: Rate) -> dict[str, object]:
        return {
            "label": r.label,
            "hits": r.hits,
            "trials": r.trials,
            "rate": r.rate,
            "upper95": r.upper95,
        }

    return {
        "machine": c.machine,
        "base": c.base,
        "head": c.head,
        "mode": c.mode,
        "gating_points": c.points,
        "false_alarms": [rate(r) for r in c.false_alarms],
        "any_change": [rate(r) for r in c.any_change],
        "power": [{"shift": s, **rate(r)} for s, r in c.power],
        "min_shift_95": c.min_shift_95,
        "observed": c.observed,
    }
