"""The screen (pure, vectorised): at every split of the history at once, the same windowed
two-sample statistic as :func:`bot.decide.stats.compare` for every series and geometric mean,
and which splits could possibly flag a guard.

Why a screen: deciding a split in full (bot/history/window.py) costs one ``compare`` per
series, ~40 ms for a nightly's ~900 series, and a history has a split per commit. A guard can
only be flagged at a split where some series or geometric mean moved by its threshold with a
one-sided p below the per-window alpha; its t must then exceed the NORMAL quantile of that alpha
(a t quantile is always larger), so a split where nothing passes that is never decided in full
and loses nothing.

The arithmetic is compare()'s, for unpaired runs: each side's mean of ``y``; the windows' own
between-run variance (each side's spread about its mean, less the within-run part) pooled with
the noise model's, the model weighing ``min(df, PRIOR_DF)`` runs when the windows have spread
of their own; the variance of the change ``tau^2 (1/n_b + 1/n_a) + w_b/n_b + w_a/n_a``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from bot.decide.stats import PRIOR_DF, Between
from bot.history.table import FamilyTable, Floats, Table

Ints = NDArray[np.int64]
#: Room for the last bits of floating point between this and compare()'s scalar arithmetic.
SLACK = 1e-9


@dataclass(frozen=True)
class Windows:
    """Per split (last good commit ``split[j]``), the before window's first commit and the
    after window's last commit; every bound is inclusive."""

    split: Ints
    first: Ints
    last: Ints

    def columns(self, table: Table) -> tuple[Ints, Ints, Ints]:
        starts = np.asarray(table.starts, dtype=np.int64)
        return starts[self.first], starts[self.split + 1], starts[self.last + 1]


def _prefix(a: Floats) -> Floats:
    return np.concatenate([np.zeros((a.shape[0], 1)), np.cumsum(a, axis=1)], axis=1)


def window_stats(
    y: Floats, w: Floats, n: Ints, between: Sequence[Between], lo: Ints, mid: Ints, hi: Ints
) -> tuple[Floats, Floats, Floats, Floats]:
    """Change ``d``, statistic ``t`` and run counts (before, after) of every row at every
    split: before = runs ``lo..mid-1``, after = ``mid..hi-1``."""
    has = n > 0
    count = has.sum(axis=1)  # a row with no run at all (a point no comparable run measured): 0
    centre = np.where(has, y, 0.0).sum(axis=1) / np.maximum(count, 1)
    yc = np.where(has, y - centre[:, None], 0.0)
    wz = np.where(has, w, 0.0)
    pn, py, py2, pw = (_prefix(a) for a in (has.astype(np.float64), yc, yc * yc, wz))

    def win(p: Floats, a: Ints, b: Ints) -> Floats:
        return np.asarray(p[:, b] - p[:, a])

    nb, na = win(pn, lo, mid), win(pn, mid, hi)
    sb, sa = win(py, lo, mid), win(py, mid, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        mb, ma = sb / nb, sa / na
        ss = (win(py2, lo, mid) - nb * mb * mb) + (win(py2, mid, hi) - na * ma * ma)
        wsum_b, wsum_a = win(pw, lo, mid), win(pw, mid, hi)
        df_job = nb + na - 2
        tau2_job = np.where(
            df_job > 0, np.maximum(ss / df_job - (wsum_b + wsum_a) / (nb + na), 0.0), 0.0
        )
        tau2_model = np.asarray([b.tau2 for b in between])[:, None]
        df_model = np.asarray([b.df for b in between])[:, None]
        df_model = np.where(df_job > 0, np.minimum(df_model, PRIOR_DF), df_model)
        df_all = df_model + np.maximum(df_job, 0.0)
        tau2 = np.where(df_all > 0, (tau2_model * df_model + tau2_job * df_job) / df_all, 0.0)
        var = tau2 * (1 / nb + 1 / na) + wsum_b / nb / nb + wsum_a / na / na
        d = ma - mb
        t = np.where(var > 0, d / np.sqrt(var), np.sign(d) * np.inf)
    return d, t, nb, na


def _flags(
    d: Floats, t: Floats, nb: Floats, na: Floats, bar: Floats, z: float, least: int
) -> NDArray[np.bool_]:
    ok = (nb >= least) & (na >= 1)
    up = (t >= z * (1 - SLACK)) & (d >= bar * (1 - SLACK))
    down = (t <= -z * (1 - SLACK)) & (d <= -bar * (1 - SLACK))
    flags: NDArray[np.bool_] = np.asarray(np.asarray(ok & (up | down)).any(axis=0))
    return flags


def family_screen(
    ft: FamilyTable, lo: Ints, mid: Ints, hi: Ints, z: float, broad: float, least: int
) -> NDArray[np.bool_]:
    """Splits where some series or geometric mean of one family passes the screen."""
    out = np.zeros(lo.shape, dtype=bool)
    if ft.keys:
        d, t, nb, na = window_stats(ft.y, ft.w, ft.n, ft.between, lo, mid, hi)
        bars = np.log1p(np.asarray(ft.thresholds))[:, None]
        out |= _flags(d, t, nb, na, bars, z, least)
    if ft.aggregates:
        y = np.vstack([a.y for a in ft.aggregates])
        w = np.vstack([a.w for a in ft.aggregates])
        n = np.vstack([a.n for a in ft.aggregates])
        d, t, nb, na = window_stats(y, w, n, [a.between for a in ft.aggregates], lo, mid, hi)
        out |= _flags(d, t, nb, na, np.full((len(ft.aggregates), 1), math.log1p(broad)), z, least)
    return out


def screen(table: Table, windows: Windows, alpha: float, least: int) -> NDArray[np.bool_]:
    """Per split, whether any family could flag a guard there at per-split ``alpha``."""
    if windows.split.size == 0:
        return np.zeros(0, dtype=bool)
    lo, mid, hi = windows.columns(table)
    z = NormalDist().inv_cdf(1 - alpha)
    broad = table.settings.broad_effect
    out = np.zeros(windows.split.shape, dtype=bool)
    for ft in table.families.values():
        out |= family_screen(ft, lo, mid, hi, z, broad, least)
    return out
