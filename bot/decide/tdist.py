"""Student's t distribution: CDF and quantile, without SciPy (the bot's only numeric dependency
is numpy, and a CI runner should not need a Fortran stack to read a p-value).

Why t and not the normal: the between-run variance of a point is estimated from a handful of
runs (six A/A runs, plus this job's repeats), so the interval must widen with how little is
known; the degrees of freedom come from the Welch-Satterthwaite formula (bot/decide/stats.py).
The CDF uses the regularized incomplete beta function by its continued fraction (Lentz's
method): within ~1e-10 of the exact value for the degrees of freedom a verdict meets (under
10^4); above that the log-gamma difference cancels and errors reach ~1e-8 near 10^7, past which
the normal is used. The quantile inverts the CDF by Newton's method.

Both are memoised (pure functions of two floats): a history scan, a bisect and a calibration
ask for the same (t, df) again and again, windows shared between splits and nights; in the
test suite three calls in four were repeats.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

_EPS = 1e-15
_TINY = 1e-300


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


@functools.lru_cache(maxsize=1 << 16)
def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (``inf``: the normal)."""
    if not df > 0:  # also NaN
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if math.isnan(t):
        return math.nan
    if math.isinf(df) or df > 1e7:
        return 0.5 * math.erfc(-t / math.sqrt(2.0))
    t2 = t * t
    if t2 < 1.0:
        # Near 0, x = df / (df + t^2) is close to 1 and 1 - x would lose t^2/df: use the
        # mirrored form, I_y(1/2, df/2) with y = t^2 / (df + t^2), the mass in (-|t|, |t|)
        # (under 0.69 for |t| < 1, so 1/2 -+ half of it keeps its digits; a larger mass
        # would cancel, so the tails use the direct form).
        inner = betainc(0.5, df / 2.0, t2 / (df + t2))
        return 0.5 + math.copysign(0.5 * inner, t)
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t2))
    return 1.0 - tail if t > 0 else tail


def t_sf(t: float, df: float) -> float:
    """P(T > t), computed from the lower tail of -t so small p-values keep their precision."""
    return t_cdf(-t, df)


def _density(t: float, df: float) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=1 << 14)
def t_quantile(p: float, df: float) -> float:
    """The t with ``t_cdf(t, df) == p``, for 0 < p < 1.

    Newton's method from the Cornish-Fisher expansion about the normal quantile (a few steps:
    every verdict computes one per series, and bisection cost 40 CDF calls each), with a
    bisection fallback should Newton leave its bracket.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    z = NormalDist().inv_cdf(p)
    if math.isinf(df) or df > 1e7:
        return z
    t = z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)
    for _ in range(50):
        step = (t_cdf(t, df) - p) / _density(t, df)
        if not math.isfinite(step) or t - step < 0:
            return _bisect(p, df)
        t -= step
        if abs(step) < 1e-13 * max(1.0, t):
            return t
    return _bisect(p, df)


def _bisect(p: float, df: float) -> float:
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0
