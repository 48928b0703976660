"""Per point, the geometric mean of its variant's OTHER points (pure): what corroborates a
flagged point as "the variant's other sizes moved up as a group" (bot/decide/rules.py).

Why a module of its own: built point by point, each leave-one-out mean is a pass over all the
variant's points, so a variant costs n^2: at the nightly sweep's 180 points that was 2.1 of the
2.6 s a verdict took, and a sweep of thousands would take minutes. Here every mean comes from
the variant's sums less the point's own share, O(1) a point, and only for the points whose
state asks for it. The formulas are :func:`bot.decide.stats.aggregate`'s and
:meth:`bot.decide.noise_model.NoiseModel.between_aggregate`'s, rearranged.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.decide.noise_model import Kind, NoiseModel, aggregate_label
from bot.decide.stats import Between, RunStat
from bot.results.types import PointKey


def _two_smallest(values: Sequence[float]) -> tuple[float, float]:
    first = second = float("inf")
    for v in values:
        if v < first:
            first, second = v, first
        elif v < second:
            second = v
    return first, second


def _without(pair: tuple[float, float], value: float) -> float:
    """The smallest of the values once one copy of ``value`` is taken out."""
    return pair[1] if value == pair[0] else pair[0]


class SideSums:
    """One side's runs, summed over a variant's members, to take one member out of."""

    def __init__(self, stats: Sequence[Sequence[RunStat]]) -> None:
        self.stats = stats  # stats[member][run]
        self.count = len(stats)
        runs = range(len(stats[0]))
        self.y = [sum(s[r].y for s in stats) for r in runs]
        self.w = [sum(s[r].w for s in stats) for r in runs]
        self.n = [_two_smallest([s[r].n for s in stats]) for r in runs]

    def without(self, member: int) -> list[RunStat]:
        """:func:`bot.decide.stats.aggregate` of every member but ``member``."""
        k = self.count - 1
        own = self.stats[member]
        return [
            RunStat(
                (self.y[r] - own[r].y) / k,
                (self.w[r] - own[r].w) / (k * k),
                int(_without(self.n[r], own[r].n)),
            )
            for r in range(len(self.y))
        ]


class PriorSums:
    """The model's between-run prior of the others' geometric mean, for each member."""

    def __init__(
        self, model: NoiseModel | None, kind: Kind, variant: str, members: Sequence[PointKey]
    ) -> None:
        self.model = model
        self.names = [f"{k.dtype}/{k.shape}" for k in members]
        self.parts = [model.between(kind, k) for k in members] if model else []
        self.tau2 = sum(b.tau2 for b in self.parts)
        self.df = _two_smallest([b.df for b in self.parts])
        label = aggregate_label(kind, members[0].series if members else variant)
        agg = model.aggregates.get(label) if model else None
        self.measured: tuple[int, Between] | None = None  # the one member whose others match
        if agg is not None and len(agg.points) == len(members) - 1:
            left = set(self.names) - set(agg.points)
            if len(left) == 1 and set(agg.points) <= set(self.names):
                self.measured = self.names.index(left.pop()), Between(agg.tau2, agg.df)

    def without(self, member: int) -> Between:
        if self.model is None:
            return Between()
        if self.measured is not None and self.measured[0] == member:
            return self.measured[1]
        own = self.parts[member]
        return Between((self.tau2 - own.tau2) / (len(self.parts) - 1), _without(self.df, own.df))
