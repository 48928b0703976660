"""One family's series at one split (pure): every point's comparison, its Holm-adjusted
p-values, its state with the persistence rule, its corroboration, and the family's geometric
means; bot/history/window.py assembles the families into the four guards.

The rules are the PR mode's (bot/decide/rules.py); what this adds is the persistence rule
(docs/HISTORY.md: each of the first commits after the split moved at least half the change)
and the search's shortcut: only the rows whose p could be under alpha are compared, which
gives the same states and Holm p-values (tests/history/test_history_arrays.py).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from bot.decide.rules import aggregate_state, is_corroborated, point_state
from bot.decide.stats import Comparison, RunStat, compare, holm
from bot.decide.types import PointVerdict, State, VariantSummary
from bot.history.scan import SLACK, window_stats
from bot.history.table import Aggregate, FamilyTable, Floats, Table


@dataclass(frozen=True)
class Span:
    """A split and its windows: commits ``first..split`` before, ``split+1..last`` after."""

    split: int
    first: int
    last: int

    @property
    def before(self) -> int:
        return self.split - self.first + 1

    @property
    def after(self) -> int:
        return self.last - self.split


@dataclass(frozen=True)
class Rows:
    rows: tuple[PointVerdict, ...]
    aggregates: tuple[VariantSummary, ...]


def _persistent(
    table: Table, y: Floats, n: np.ndarray, span: Span, c: Comparison, min_after: int
) -> bool:
    """Each of the first ``min_after`` commits after the split (with data) moved at least
    half the change, the same way, measured from the before window's mean; a series with data
    at fewer of them (a pending span: at its commits after) has not persisted."""
    before_mean = math.log(c.base.estimate)
    seen = 0
    for commit in range(span.split + 1, span.last + 1):
        lo, hi = table.runs(commit, commit)
        vals = [float(y[r]) for r in range(lo, hi) if n[r] > 0]
        if not vals:
            continue
        moved = sum(vals) / len(vals) - before_mean
        if moved * math.copysign(1.0, c.log_change) < abs(c.log_change) / 2:
            return False
        seen += 1
        if seen == min_after:
            break
    return seen >= min(min_after, span.after)


def columns(table: Table, span: Span) -> tuple[int, int, int]:
    """The run columns: before = ``lo..mid-1``, after = ``mid..hi-1``."""
    s = table.starts
    return s[span.first], s[span.split + 1], s[span.last + 1]


def _agg_stats(a: Aggregate, lo: int, hi: int) -> list[RunStat]:
    return [RunStat(float(a.y[r]), float(a.w[r]), int(a.n[r])) for r in range(lo, hi)]


def _others(
    ft: FamilyTable, variant: str, row: int, cols: tuple[int, int, int]
) -> Comparison | None:
    """The geometric mean of the variant's OTHER points (for corroboration), leave-one-out."""
    a = next((g for g in ft.aggregates if g.variant == variant), None)
    if a is None or row not in a.members or len(a.members) < 2:
        return None
    lo, mid, hi = cols
    prior = a.prior.without(a.members.index(row))
    return compare(a.without(ft, row, lo, mid), a.without(ft, row, mid, hi), prior)


def _summaries(
    table: Table, ft: FamilyTable, span: Span, alpha: float, min_after: int
) -> tuple[VariantSummary, ...]:
    """Each variant's geometric mean, Holm-adjusted over the family's variants."""
    s = table.settings
    lo, mid, hi = columns(table, span)
    effect = s.effect if ft.kind == "ratio" else s.kernel_effect
    cmps = [
        compare(_agg_stats(g, lo, mid), _agg_stats(g, mid, hi), g.between) for g in ft.aggregates
    ]
    ups, downs = holm([c.p_up for c in cmps]), holm([c.p_down for c in cmps])
    out = []
    for g, c, pu, pd in zip(ft.aggregates, cmps, ups, downs, strict=True):
        state = aggregate_state(c, len(g.members), pu, pd, s.broad_effect, effect, alpha)
        if state in ("regressed", "improved") and not _persistent(
            table, g.y, g.n, span, c, min_after
        ):
            state = "no change"
        out.append(VariantSummary(g.variant, len(g.members), c.change, ft.kind, c, pu, state))
    return tuple(out)


def holm_within(pvalues: Sequence[float], m: int) -> list[float]:
    """Holm-adjusted p-values of the ``len(pvalues)`` smallest of ``m`` (the others are all
    at least alpha, so they rank after these and change none of them): stats.holm for
    ``m == len(pvalues)``."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [1.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _worth(ft: FamilyTable, cols: tuple[int, int, int], alpha: float, least: int) -> set[int]:
    """The rows whose one-sided p could be under alpha (|t| over the normal quantile: a t
    quantile is larger), and the row of largest |t| (so a guard has a row with data)."""
    lo, mid, hi = (np.asarray([c], dtype=np.int64) for c in cols)
    _, t, nb, na = window_stats(ft.y, ft.w, ft.n, ft.between, lo, mid, hi)
    ok = (nb[:, 0] >= least) & (na[:, 0] >= 1)
    size = np.where(ok, np.abs(t[:, 0]), -1.0)
    z = NormalDist().inv_cdf(1 - alpha) * (1 - SLACK)
    rows = {int(j) for j in np.flatnonzero(size >= z)}
    if ok.any():
        rows.add(int(np.argmax(size)))
    return rows


def family_rows(
    table: Table,
    ft: FamilyTable,
    span: Span,
    alpha: float,
    min_before: int,
    min_after: int,
    full: bool = True,
) -> Rows:
    """Every series of one family at one split, and the family's geometric means.

    ``full=False`` (the search for change points) compares only the rows whose p could be
    under alpha (the others read "no change", without figures): the same states, guards and
    Holm-adjusted p-values as in full, for a fraction of the cost (compare()'s t
    distribution is most of a decision's time)."""
    lo, mid, hi = columns(table, span)
    tested = [
        j
        for j in range(len(ft.keys))
        if int((ft.n[j, lo:mid] > 0).sum()) >= min_before and (ft.n[j, mid:hi] > 0).any()
    ]
    chosen = tested if full else sorted(_worth(ft, (lo, mid, hi), alpha, min_before))
    cmps = {j: compare(ft.stats(j, lo, mid), ft.stats(j, mid, hi), ft.between[j]) for j in chosen}
    order = list(cmps)
    ups = dict(zip(order, holm_within([cmps[j].p_up for j in order], len(tested)), strict=True))
    downs = dict(zip(order, holm_within([cmps[j].p_down for j in order], len(tested)), strict=True))
    rows = []
    for j, key in enumerate(ft.keys):
        t = ft.thresholds[j]
        if j not in cmps:
            if j in tested:
                rows.append(PointVerdict(key, True, t, "no change", kind=ft.kind))
            else:
                why = "too few runs with data"
                rows.append(PointVerdict(key, True, t, "no data", no_data=why, kind=ft.kind))
            continue
        c, pu, pd = cmps[j], ups[j], downs[j]
        state: State = point_state(c, pu, pd, t, alpha)
        if state in ("regressed", "improved") and not _persistent(
            table, ft.y[j], ft.n[j], span, c, min_after
        ):
            state = "no change"
        others = functools.partial(_others, ft, key.variant, j, (lo, mid, hi))
        corroborated = is_corroborated(state, c, t, others, alone=ft.kind == "ratio")
        rows.append(PointVerdict(key, True, t, state, c, pu, pd, corroborated, kind=ft.kind))
    return Rows(tuple(rows), _summaries(table, ft, span, alpha, min_after))
