"""Power point by point: a regression of ONE point, on top of that point's real noise.

bot/decide/calibrate.py shifts every gating point at once, which is what a broad regression looks
like and what the verdict's geometric-mean rule catches easily. A regression that hits one
size and dtype only must be caught by that point's own test and its corroboration, against its
own threshold (perfbot.toml raises some), so its power is lower; this measures it per point:
the share of pseudo-pairs (rounds of one real state drawn twice, see bot/decide/calibrate.py) with
that point's Thunder samples scaled by ``1 + shift`` for which the verdict is "regressed" AND
names that point.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.config import VerdictSettings
from bot.decide.calibrate import Mode, Rate, pseudo_pair
from bot.decide.verdict import decide
from bot.results.types import CommitResults, PointKey

DEFAULT_POINT_SHIFTS = (0.02, 0.03, 0.05, 0.1)


@dataclass(frozen=True)
class PointPower:
    key: PointKey
    threshold: float
    power: tuple[tuple[float, Rate], ...]  # (shift, detections)

    @property
    def min_shift_95(self) -> float | None:
        return next((s for s, r in self.power if r.rate >= 0.95), None)


def per_point_power(
    state: CommitResults,
    s: VerdictSettings,
    *,
    shifts: Sequence[float] = DEFAULT_POINT_SHIFTS,
    trials: int = 40,
    mode: Mode = "bootstrap",
    only: Sequence[PointKey] | None = None,
) -> tuple[PointPower, ...]:
    """Every gating point with data (or those in ``only``), each shifted alone."""
    rng = np.random.default_rng(s.seed + 1)
    out = []
    for key in sorted(k for k in state.contenders() if s.is_gating(k.variant)):
        if not state.points[key].ratio or (only is not None and key not in only):
            continue
        power = []
        for shift in shifts:
            hits = 0
            for _ in range(trials):
                v = decide(*pseudo_pair(state, rng, mode, shift, s, only=key), s, explain=False)
                hits += v.regressed and any(
                    p.key == key and p.state == "regressed" for p in v.points
                )
            power.append((shift, Rate(f"+{shift:.1%}", hits, trials)))
        out.append(PointPower(key, s.threshold_for(key.label), tuple(power)))
    return tuple(out)


def report_text(rows: Sequence[PointPower]) -> str:
    if not rows:
        return "Per-point power: no gating point with data."
    shifts = [shift for shift, _ in rows[0].power]
    head = "".join(f"{f'+{100 * x:g}%':>8}" for x in shifts)
    lines = [
        "Per-point power (only that point's Thunder samples x (1 + shift); "
        f"{rows[0].power[0][1].trials} pairs each):",
        f"  {'point':<36}{'threshold':>10}{head}  95% from",
    ]
    for row in rows:
        cells = "".join(f"{r.rate:>8.0%}" for _, r in row.power)
        best = row.min_shift_95
        lines.append(
            f"  {row.key.label:<36}{100 * row.threshold:>9.1f}%{cells}  "
            + (f"+{100 * best:g}%" if best is not None else "none tested")
        )
    return "\n".join(lines)


def to_json(rows: Sequence[PointPower]) -> list[dict[str, object]]:
    return [
        {
            "point": row.key.label,
            "threshold": row.threshold,
            "power": [
                {"shift": shift, "hits": r.hits, "trials": r.trials} for shift, r in row.power
            ],
            "min_shift_95": row.min_shift_95,
        }
        for row in rows
    ]
