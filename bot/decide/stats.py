"""The statistics behind a verdict: per-round paired ratios, bootstrap CIs, Mann-Whitney, Holm.

Method (the README states the same):

* Estimate. The suite measures every variant of a point in each round, back to back, so the
  per-round ratio ``r_i = t_contender_i / t_nvfuser_i`` cancels the drift both sides share (clocks,
  temperature, a noisy neighbour). A side's ratio is the median of its ``r_i``: robust to the odd
  slow round. The change of a point is ``median(r_head) / median(r_base)``; above 1 the contender
  lost ground to nvFuser.
* Interval. 95% percentile bootstrap: rounds are resampled with replacement within each side
  independently (the two sides are separate runs, so there is no pairing across them), with a
  fixed seed derived from the point's name (reruns give the same numbers) and the resamples drawn
  as one numpy array per side.
* Test. One-sided Mann-Whitney U on the per-round ratios (ranks, so the same test on log ratios),
  head against base. Chosen over a permutation test of the median because its null distribution
  is computed exactly (no ties, up to 50 x 50 rounds; normal approximation with tie correction
  beyond) so p-values have no Monte-Carlo floor: a 4,000-resample permutation test cannot give p
  below 1/4001, too coarse for a Holm correction over dozens of points at alpha = 0.01. It is also
  robust to outlier rounds and is what ``asv compare`` uses, so maintainers know it.
* Agreement. Both look at the same per-round ratios and the same direction. Where they could
  disagree (Mann-Whitney sees any upward shift of the distribution, the CI sees its median), the
  verdict calls a point significant only if both agree: Holm-adjusted p below alpha AND the CI
  excluding 1 on the same side. So no point is reported significant with a CI that contains 1.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
Samples = Sequence[float] | FloatArray
LEVEL = 0.95
#: Above this many round pairs the exact Mann-Whitney distribution is replaced by its normal
#: approximation (already accurate to well under 1% of p there).
EXACT_MAX_PAIRS = 2500


@dataclass(frozen=True)
class Interval:
    """A point estimate and its 95% confidence interval."""

    estimate: float
    low: float
    high: float

    def excludes_one(self) -> int:
        """+1 if the whole interval is above 1, -1 if below, 0 if it contains 1."""
        return 1 if self.low > 1.0 else -1 if self.high < 1.0 else 0


@dataclass(frozen=True)
class Comparison:
    """Head against base for one series of per-round values (ratios or kernel times)."""

    base: Interval
    head: Interval
    change: Interval
    p_up: float  # one-sided Mann-Whitney p that head values are larger (a regression)
    p_down: float  # ... that they are smaller
    log_change_reps: FloatArray = field(repr=False, compare=False)


def point_seed(seed: int, name: str) -> int:
    """A per-series seed that does not depend on the order points are processed in."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


def bootstrap_medians(x: Samples, resamples: int, rng: np.random.Generator) -> FloatArray:
    """Medians of ``resamples`` bootstrap resamples of ``x``, drawn as one array.

    Equal to ``np.median(sorted(x)[idx], axis=1)`` for ``idx = rng.integers(0, n, (B, n))``,
    but faster: with ``x`` sorted, the middle order statistics of a resample are ``x`` at the
    middle of its sorted indices, and partitioning small integers beats a float median.
    """
    data = np.sort(np.asarray(x, dtype=np.float64))
    n = data.size
    hi = n // 2
    idx = np.partition(rng.integers(0, n, size=(resamples, n)), hi, axis=1)
    lower = idx[:, :hi].max(axis=1) if n % 2 == 0 else idx[:, hi]  # the ((n+1)//2)-th
    return np.asarray((data[lower] + data[idx[:, hi]]) / 2, dtype=np.float64)


def _interval(estimate: float, reps: FloatArray) -> Interval:
    lo, hi = np.quantile(reps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Interval(estimate, float(lo), float(hi))


def compare(base: Samples, head: Samples, *, resamples: int, seed: int) -> Comparison:
    """Median of each side, their ratio head/base, CIs and both one-sided p-values."""
    rng = np.random.default_rng(seed)
    b_reps, h_reps = (
        bootstrap_medians(base, resamples, rng),
        bootstrap_medians(head, resamples, rng),
    )
    b_med, h_med = float(np.median(base)), float(np.median(head))
    log_reps = np.log(h_reps) - np.log(b_reps)
    p_up, p_down = mann_whitney(base, head)
    return Comparison(
        base=_interval(b_med, b_reps),
        head=_interval(h_med, h_reps),
        change=_interval(h_med / b_med, np.exp(log_reps)),
        p_up=p_up,
        p_down=p_down,
        log_change_reps=log_reps,
    )


@functools.lru_cache(maxsize=32)
def _exact_u_distribution(m: int, n: int) -> tuple[float, ...]:
    """P(U = u), u = 0..m*n, where U counts pairs in which an X (size m) beats a Y (size n).

    Recursion on the largest pooled value: it is an X with probability m/(m+n) and then beats all
    n Ys; otherwise it is a Y and beats none of the Xs.
    """
    prev = [np.ones(1) for _ in range(n + 1)]  # row i-1 of the table by j; i = 0: U is 0
    for i in range(1, m + 1):
        row = [np.ones(1)]  # n = 0: U is 0
        for j in range(1, n + 1):
            dist = np.zeros(i * j + 1)
            dist[j : j + prev[j].size] += i / (i + j) * prev[j]
            dist[: row[j - 1].size] += j / (i + j) * row[j - 1]
            row.append(dist)
        prev = row
    return tuple(float(v) for v in prev[n])


def mann_whitney(base: Samples, head: Samples) -> tuple[float, float]:
    """One-sided p-values (head larger, head smaller) of the Mann-Whitney U test."""
    x, y = np.asarray(base, dtype=np.float64), np.asarray(head, dtype=np.float64)
    m, n = x.size, y.size
    pooled = np.concatenate([x, y])
    _, counts = np.unique(pooled, return_counts=True)
    u_head = float(np.sum(y[:, None] > x[None, :]) + 0.5 * np.sum(y[:, None] == x[None, :]))
    if counts.max() == 1 and m * n <= EXACT_MAX_PAIRS:
        dist = np.asarray(_exact_u_distribution(n, m))
        u = round(u_head)
        return float(min(1.0, dist[u:].sum())), float(min(1.0, dist[: u + 1].sum()))
    total = m + n
    ties = float(np.sum(counts.astype(np.float64) ** 3 - counts))
    var = m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    if var <= 0:  # every value equal: no evidence either way
        return 1.0, 1.0
    mu, sd = m * n / 2.0, math.sqrt(var)
    p_up = 0.5 * math.erfc((u_head - mu - 0.5) / sd / math.sqrt(2))
    p_down = 0.5 * math.erfc((mu - u_head - 0.5) / sd / math.sqrt(2))
    return min(1.0, p_up), min(1.0, p_down)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (family-wise error control, any dependence)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def geometric_mean(comparisons: Sequence[Comparison]) -> Interval:
    """Geometric mean of the changes of several points, with a bootstrap CI.

    Replicate b of the mean uses replicate b of every point: the points were resampled
    independently, so this is a bootstrap of the mean itself.
    """
    if not comparisons:
        raise ValueError("geometric mean of no points")
    logs = np.stack([c.log_change_reps for c in comparisons])
    reps = np.exp(logs.mean(axis=0))
    estimate = math.exp(sum(math.log(c.change.estimate) for c in comparisons) / len(comparisons))
    return _interval(estimate, reps)
