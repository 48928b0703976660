"""The thunder/nvFuser ratio's level at base and at head (pure): how far Thunder is from the
hand-written fusion, not only how that distance changed (issue 30; the parity gap of
NVIDIA/Fuser#3629, "Thunder takes 1.61x the hand-written fusion's time").

Per gating Thunder variant, from the verdict's own ratio series (bot/decide/families.py: a
run's value of a point is the median of its rounds' Thunder/nvFuser kernel-time ratios, a
side's the geometric mean of its runs' values):

* **level** at a side: the geometric mean over the variant's points of each point's ratio,
  ``exp(mean_points(mean_runs(y)))``. It is the variant's geometric-mean comparison
  (:class:`~bot.decide.types.VariantSummary` ``cmp.base`` / ``cmp.head``, which
  :func:`bot.decide.stats.compare` computes on the per-run means of the points' log medians),
  so it covers the same points the verdict's geometric-mean test does: those with data in every
  run of both sides. The mean of the points' means equals the mean of the runs' means, so this
  is exactly the geometric mean of the points' own estimates (tests/decide/test_level.py).
* **95% interval**: that comparison's interval of the side's level,
  ``exp(y +- t * sqrt((tau^2 + w) / runs))``: ``tau^2`` the between-run variance of the
  geometric mean itself, measured on the A/A runs of the noise model (its aggregate entry) and
  pooled with this job's repeats, ``w`` the within-run variance of the mean of the points' log
  medians, ``t`` Student's at the comparison's Welch-Satterthwaite degrees of freedom. It says
  how well this commit's level is measured, run to run; it is NOT the spread across sizes (the
  worst point says that), and without a noise model and with one run a side it sees the
  within-run noise only (``between_runs`` False: the words leave it out then).
* **worst point**: the largest head ratio among the variant's points compared at both sides
  (its head level and interval, as the point's own comparison has them).

**One figure or one a variant** (:attr:`RatioLevel.alike`): the variants are alike when, at
base and at head alike, the largest of their levels is less than ``1 + effect`` times the
smallest (``[verdict] effect``, 2% by default: the size the bot calls a change of the ratio).
Alike, they are told as one level (:attr:`RatioLevel.together`): the geometric mean over all
their points (each variant's level weighted by its points), its interval the same weighted mean of
the variants' log bounds (exact if the variants' errors were perfectly correlated, wider
otherwise: the standard deviation of a weighted mean is at most the weighted mean of the
standard deviations), and the worst point over all of them; not alike, each variant's own
level is told (bot/tell/level.py puts either in one line). The worst point a post names is
always :attr:`RatioLevel.together`'s: the largest head ratio over every variant.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.decide.stats import Interval
from bot.results.types import PointKey

if TYPE_CHECKING:  # bot/decide/types.py imports this module: the records hold a RatioLevel
    from bot.decide.types import PointVerdict, VariantSummary, Verdict


@dataclass(frozen=True)
class WorstPoint:
    """The point with the largest ratio at head: its key and its head level."""

    key: PointKey
    head: Interval


@dataclass(frozen=True)
class VariantLevel:
    """A Thunder variant's ratio level (Thunder's kernel time over nvFuser's) at both sides."""

    variant: str  # "thunder-prims"; for a level over several variants, their names joined by ", "
    points: int  # the points the geometric mean covers
    base: Interval
    head: Interval
    worst: WorstPoint | None
    #: The interval includes the between-run noise (a noise model, or this job's repeats);
    #: False: within-run noise only, far too narrow for a level (bot/decide/stats.py).
    between_runs: bool = True


@dataclass(frozen=True)
class RatioLevel:
    """The levels of every gating Thunder variant with data, and whether to tell them as one;
    ``dtypes``, a level a dtype (over every variant) when the dtypes are not alike (a 1.11x in
    float32 must not hide in a geometric mean with bfloat16's 1.01x), else empty."""

    variants: tuple[VariantLevel, ...]
    alike: bool
    together: VariantLevel | None  # over all variants (None when no variant has a level)
    effect: float  # the threshold the rule compared with
    dtypes: tuple[VariantLevel, ...] = ()

    @property
    def shown(self) -> tuple[VariantLevel, ...]:
        """The levels a post tells: a dtype each where the dtypes are not alike, else one when
        the variants are alike, else one a variant."""
        if self.dtypes:
            return self.dtypes
        if self.alike and self.together is not None:
            return (self.together,)
        return self.variants


def _worst(rows: Sequence[PointVerdict]) -> WorstPoint | None:
    compared = [p for p in rows if p.cmp is not None]
    top = max(compared, key=lambda p: p.cmp.head.estimate if p.cmp else 0.0, default=None)
    return WorstPoint(top.key, top.cmp.head) if top is not None and top.cmp else None


def _variant(summary: VariantSummary, rows: Sequence[PointVerdict]) -> VariantLevel | None:
    c = summary.cmp
    if c is None or summary.points == 0:
        return None
    return VariantLevel(
        variant=summary.variant,
        points=summary.points,
        base=c.base,
        head=c.head,
        worst=_worst(rows),
        between_runs=c.model_df > 0 or max(c.runs) > 1,
    )


def _pooled(levels: Sequence[Interval], weights: Sequence[int]) -> Interval:
    """The weighted geometric mean of several levels, each bound the same mean of the logs."""
    total = sum(weights)

    def mean(values: Sequence[float]) -> float:
        return math.exp(sum(w * math.log(x) for x, w in zip(values, weights, strict=True)) / total)

    return Interval(
        mean([x.estimate for x in levels]),
        mean([x.low for x in levels]),
        mean([x.high for x in levels]),
    )


def _together(levels: Sequence[VariantLevel]) -> VariantLevel:
    if len(levels) == 1:
        return levels[0]
    weights = [x.points for x in levels]
    worsts = [x.worst for x in levels if x.worst is not None]
    return VariantLevel(
        variant=", ".join(x.variant for x in levels),
        points=sum(weights),
        base=_pooled([x.base for x in levels], weights),
        head=_pooled([x.head for x in levels], weights),
        worst=max(worsts, key=lambda w: w.head.estimate, default=None),
        between_runs=all(x.between_runs for x in levels),
    )


def _alike(levels: Sequence[VariantLevel], effect: float) -> bool:
    for side in ("base", "head"):
        values = [getattr(x, side).estimate for x in levels]
        if max(values) >= (1 + effect) * min(values):
            return False
    return True


def _by_dtype(rows: Sequence[PointVerdict], between_runs: bool) -> tuple[VariantLevel, ...]:
    """A level a dtype over every variant's points compared at both sides: the geometric mean
    of the points' levels, each bound the same mean of the points' log bounds (as
    :func:`_together` pools variants: never narrower than the points' own intervals)."""
    out = []
    for dtype in sorted({p.key.dtype for p in rows if p.cmp is not None}):
        mine = [p for p in rows if p.key.dtype == dtype and p.cmp is not None]
        ones = [1] * len(mine)
        out.append(
            VariantLevel(
                variant=dtype,
                points=len(mine),
                base=_pooled([p.cmp.base for p in mine if p.cmp], ones),
                head=_pooled([p.cmp.head for p in mine if p.cmp], ones),
                worst=_worst(mine),
                between_runs=between_runs,
            )
        )
    return tuple(out)


def ratio_level(
    rows: Sequence[PointVerdict], summaries: Sequence[VariantSummary], effect: float
) -> RatioLevel:
    """The level of each variant of ``summaries`` (the gating ratio's geometric means) with its
    worst point among ``rows`` (the gating ratio rows), and the rule's answer (module
    docstring); ``effect`` is the ratio's threshold (``[verdict] effect``)."""
    levels = []
    for s in summaries:
        if s.kind != "ratio":
            continue
        mine = [p for p in rows if p.key.variant == s.variant and p.kind == "ratio"]
        level = _variant(s, mine)
        if level is not None:
            levels.append(level)
    measured = {x.variant for x in levels}
    ratios = [p for p in rows if p.kind == "ratio" and p.key.variant in measured]
    dtypes = _by_dtype(ratios, all(x.between_runs for x in levels))
    return RatioLevel(
        variants=tuple(levels),
        alike=bool(levels) and _alike(levels, effect),
        together=_together(levels) if levels else None,
        effect=effect,
        dtypes=dtypes if len(dtypes) > 1 and not _alike(dtypes, effect) else (),
    )


def level_of(v: Verdict) -> RatioLevel:
    """The verdict's level: the one decide() filled in, else computed from its records."""
    if v.levels is not None:
        return v.levels
    gating = [p for p in v.points if p.gating]
    return ratio_level(gating, v.summaries, v.settings.effect)
