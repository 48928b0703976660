"""The statistics behind a verdict: a two-level noise model (inside a run, between runs).

Model (docs/CALIBRATION.md states the same, with the figures):

* A *series* is one measured quantity of one point: the per-round thunder/nvFuser ratio of a
  variant, or a variant's kernel time (nvFuser's hand-written fusion included). One run (one
  process) gives, per series, ``y`` = the median of its log samples (the log of its median;
  for an even count, of the two middle samples' geometric mean) and the within-run variance of
  that log median, ``w = (pi/2) * (1.4826 * MAD)^2 / n`` (the median's large-sample variance
  for near-normal samples, with a robust scale: one odd round does not inflate it).
* Between runs, ``y`` moves by more than ``w`` says: another process has another memory
  placement, clock state, JIT choice. That part, ``tau^2``, comes from recorded A/A runs of the
  same machine (bot/decide/noise_model.py) and, when this job measured a side more than once,
  from the spread of its own repeats; the two estimates are pooled by their degrees of freedom,
  the model's capped at :data:`PRIOR_DF` then.
* Head against base, with ``n`` base runs and ``m`` head runs: ``d = mean(y_head) -
  mean(y_base)``, ``se^2 = (tau^2 + w_base)/n + (tau^2 + w_head)/m``. The interval and the
  one-sided p-values use Student's t with Welch-Satterthwaite degrees of freedom (the tau^2
  part has few, the within part 37% of ``rounds - 1`` per run: the MAD's efficiency), so a
  point whose between-run noise is
  known from few runs gets a wide interval instead of a confident wrong one.

Everything here is pure and deterministic (no resampling), so a verdict costs microseconds a
series and reruns give identical numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from bot.decide.tdist import t_cdf, t_quantile

LEVEL = 0.95
#: When a job measured a side more than once, its own spread is the evidence closest to the
#: comparison (one machine, minutes apart), while the A/A runs of the model span machines and
#: days: the model then weighs as this many runs (bot/decide/noise_model.py uses the same
#: weight for its pool).
PRIOR_DF = 4.0
#: Normal-consistency factor of the median absolute deviation.
MAD_SCALE = 1.4826
#: Large-sample variance of a median over that of a mean, for normal samples.
MEDIAN_EFFICIENCY = math.pi / 2
#: The MAD estimates a normal scale with 37% of the sample SD's efficiency: its degrees of
#: freedom are that share of the rounds' (used in the Welch-Satterthwaite sum).
MAD_EFFICIENCY = 0.37


@dataclass(frozen=True)
class Interval:
    """A point estimate and its 95% confidence interval."""

    estimate: float
    low: float
    high: float

    def excludes_one(self) -> int:
        """+1 if the whole interval is above 1, -1 if below, 0 if it contains 1."""
        return 1 if self.low > 1.0 else -1 if self.high < 1.0 else 0


class RunStat(NamedTuple):
    """One series in one run: the log median, its within-run variance, the sample count. A
    tuple (built and read in C) where a dataclass costs 4x: a history's search builds ~10^5."""

    y: float
    w: float
    n: int


@dataclass(frozen=True)
class Between:
    """Between-run variance of a series' log median, with its degrees of freedom (0: unknown)."""

    tau2: float = 0.0
    df: float = 0.0


@dataclass(frozen=True)
class Comparison:
    """Head against base for one series: each side's level, the change, and the test."""

    base: Interval
    head: Interval
    change: Interval
    p_up: float  # one-sided p that head is larger (slower, or a higher ratio)
    p_down: float
    log_change: float
    se: float  # standard error of log_change
    df: float
    tau2: float  # the between-run variance that was used
    runs: tuple[int, int]  # base runs, head runs
    model_df: float = 0.0  # the A/A model's degrees of freedom, before any cap
    within_df: float = math.inf  # one run's within-run degrees of freedom (for projections)

    def runs_to_settle(self, threshold: float, alpha: float = 0.01, most: int = 10) -> int | None:
        """Repeats a side in all (more than this job has) after which, if the change stayed
        where it is, the verdict's own test would settle it: established (the change at least
        ``threshold``, its one-sided p below ``alpha`` and its interval above 1: pass alpha
        over the size of its Holm family, the bound Holm meets at worst) or ruled out (the
        interval under ``1 + threshold``). None if even ``most`` would not (the change sits on
        the threshold, or is too small to establish).

        The projection is :func:`compare`'s own arithmetic for ``r`` alternated repeats (paired)
        whose spread is what the model expects: the between-run variance stays, its degrees of
        freedom become the model's (capped at :data:`PRIOR_DF`) plus ``r - 1``, and the
        within-run part shrinks as ``1 / r`` with ``r`` times its degrees of freedom.
        """
        bar, d = math.log1p(threshold), self.log_change
        n, m = self.runs
        within = max(self.se**2 - self.tau2 * (1 / n + 1 / m), 0.0) * n * m / (n + m)
        for r in range(max(n, m) + 1, most + 1):
            tau_df = min(self.model_df, PRIOR_DF) + (r - 1)
            parts = [2 * self.tau2 / r, 2 * within / r]
            df = satterthwaite(parts, [tau_df, r * self.within_df])
            se = math.sqrt(sum(parts))
            q = t_quantile((1 + LEVEL) / 2, df)
            if se == 0.0 or d + q * se < bar:
                return r
            if d >= bar and t_cdf(-d / se, df) < alpha and d - q * se > 0:
                return r
        return None


def _median(values: list[float]) -> float:
    """numpy's median, bit for bit (an even count: the mean of the two middle values), without
    its per-call overhead: a sweep computes one per series and run, thousands of them."""
    values = sorted(values)
    half = len(values) // 2
    return values[half] if len(values) % 2 else (values[half - 1] + values[half]) / 2


def run_stat(samples: Sequence[float]) -> RunStat:
    """``y`` and ``w`` of one run (see the module docstring)."""
    logs = np.log(np.asarray(samples, dtype=np.float64)).tolist()
    med = _median(logs)
    mad = _median([abs(x - med) for x in logs])
    n = len(logs)
    return RunStat(med, MEDIAN_EFFICIENCY * (MAD_SCALE * mad) ** 2 / n, n)


def job_between(base: Sequence[RunStat], head: Sequence[RunStat]) -> Between:
    """tau^2 from this job's own repeats: the spread of each side's runs about its mean, less
    what the within-run noise explains (none without repeats)."""
    df = len(base) + len(head) - 2
    if df <= 0:
        return Between()
    ys = [[r.y for r in base], [r.y for r in head]]
    ss = sum([sum([(y - mean) ** 2 for y in side]) for side in ys for mean in [_mean(side)]])
    within = sum([r.w for r in base] + [r.w for r in head]) / (len(base) + len(head))
    return Between(max(ss / df - within, 0.0), float(df))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)  # a list: sum() over a generator costs twice as much


def paired_between(base: Sequence[RunStat], head: Sequence[RunStat]) -> Between:
    """tau^2 from a job that measured base and head alternately, repeat k's base and head
    side by side (bench-pr.yml, data/record.sh --pair): the spread of the per-repeat changes
    ``d_k = y_head,k - y_base,k``, whose variance is ``2 tau^2 + w_base,k + w_head,k``.

    Why paired: whatever a repeat shares (the machine's state that minute, which variants its
    rounds interleave: on the H200 the 15-us kernels ran 5% slower in repeats without the
    context baselines, on both sides alike) cancels in ``d_k`` instead of counting as noise.
    """
    if len(base) != len(head) or len(base) < 2:
        raise ValueError("a paired estimate needs the same number (at least 2) of runs a side")
    d = [h.y - b.y for b, h in zip(base, head, strict=True)]
    mean = sum(d) / len(d)
    var = sum((x - mean) ** 2 for x in d) / (len(d) - 1)
    within = sum(b.w + h.w for b, h in zip(base, head, strict=True)) / len(d)
    return Between(max((var - within) / 2, 0.0), float(len(d) - 1))


def pooled(a: Between, b: Between) -> Between:
    """Two estimates of one tau^2, weighted by their degrees of freedom."""
    df = a.df + b.df
    return Between((a.tau2 * a.df + b.tau2 * b.df) / df, df) if df > 0 else Between()


def compare(
    base: Sequence[RunStat], head: Sequence[RunStat], model: Between, *, paired: bool = False
) -> Comparison:
    """Head against base for one series, ``model`` being the A/A runs' tau^2. ``paired``:
    base[k] and head[k] were measured as one repeat (see :func:`paired_between`); the change
    and its variance are the same formulas, only the job's tau^2 comes from the repeats'
    changes instead of each side's spread."""
    if not base or not head:
        raise ValueError("a comparison needs at least one run a side")
    job = paired_between(base, head) if paired else job_between(base, head)
    model_df = model.df
    if job.df > 0:  # the job's own repeats lead; the A/A runs are a prior of PRIOR_DF runs
        model = Between(model.tau2, min(model.df, PRIOR_DF))
    between = pooled(model, job)
    tau2 = between.tau2
    n, m = len(base), len(head)
    # Lists, not generators, into sum and min: the same numbers in the same order, at half
    # the cost (a history's search compares ~10k series).
    yb, yh = _mean([r.y for r in base]), _mean([r.y for r in head])
    wb, wh = _mean([r.w for r in base]), _mean([r.w for r in head])
    least_b, least_h = min([r.n for r in base]), min([r.n for r in head])
    parts = [tau2 * (1 / n + 1 / m), wb / n, wh / m]
    dfs = [
        between.df,
        MAD_EFFICIENCY * n * (least_b - 1),
        MAD_EFFICIENCY * m * (least_h - 1),
    ]
    var = sum(parts)
    df = satterthwaite(parts, dfs)
    se = math.sqrt(var)
    d = yh - yb
    q = t_quantile((1 + LEVEL) / 2, df)

    def level(y: float, w: float, k: int) -> Interval:
        half = q * math.sqrt((tau2 + w) / k)
        return Interval(math.exp(y), math.exp(y - half), math.exp(y + half))

    if se == 0.0:  # identical medians and no spread anywhere: no evidence either way
        p_up, p_down = (0.0 if d > 0 else 1.0), (0.0 if d < 0 else 1.0)
    else:
        p_up, p_down = t_cdf(-d / se, df), t_cdf(d / se, df)
    return Comparison(
        base=level(yb, wb, n),
        head=level(yh, wh, m),
        change=Interval(math.exp(d), math.exp(d - q * se), math.exp(d + q * se)),
        p_up=p_up,
        p_down=p_down,
        log_change=d,
        se=se,
        df=df,
        tau2=tau2,
        runs=(n, m),
        model_df=model_df,
        within_df=MAD_EFFICIENCY * (min(least_b, least_h) - 1),
    )


def satterthwaite(parts: Sequence[float], dfs: Sequence[float]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance estimates; a part with no
    degrees of freedom must be zero (an unknown tau^2 is not used)."""
    total = sum(parts)
    denom = sum(p * p / df for p, df in zip(parts, dfs, strict=True) if p > 0 and df > 0)
    return total * total / denom if denom > 0 else math.inf


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


def aggregate(stats: Sequence[Sequence[RunStat]]) -> list[RunStat]:
    """Per run, the mean of several series' log medians (a geometric mean): ``stats[s][r]`` is
    series s in run r. Within a run the series are separate rounds, so their w's add."""
    k = len(stats)
    runs = len(stats[0])
    return [
        RunStat(
            sum(s[r].y for s in stats) / k,
            sum(s[r].w for s in stats) / (k * k),
            min(s[r].n for s in stats),
        )
        for r in range(runs)
    ]
