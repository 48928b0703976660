"""The decision at one split (pure): the commits before it against the commits after it, with
the PR mode's four guards and rules (bot/decide/rules.py), as a real
:class:`~bot.decide.types.Verdict` whose base is the last commit before the split and whose
head is the first after it.

What differs from ``pr`` (bot/decide/families.py) and why:

* the runs of a window are several commits, never paired with the other window's by index
  (a job's repeats are; commits k of two windows are not): always the unpaired comparison;
* alpha is the per-split alpha the caller passes (the configured alpha over the number of
  splits tested: Bonferroni over positions, Holm over the points within each guard);
* the persistence rule: a series or geometric mean flagged at a split counts only when each of
  the first ``min_after`` commits after it, on its own, moved at least half the window's change
  the same way (two consecutive commits past the midpoint, as PyTorch's HUD asks for two
  consecutive violations); otherwise it is a transient and reads "no change";
* a geometric mean is over the points with data in every run of the history (table.py);
* the broken guard is decided along the commits, not on windows (bot/history/broken.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist

import numpy as np

from bot.config import VerdictSettings
from bot.decide.rules import (
    aggregate_state,
    corroborate_kernels,
    guard_state,
    is_corroborated,
    overall_state,
    point_state,
    ratio_owner,
    side_moved,
)
from bot.decide.stats import Comparison, RunStat, compare, holm
from bot.decide.types import Guard, GuardKind, PointVerdict, State, VariantSummary, Verdict
from bot.decide.wording import guard_summary
from bot.history.scan import SLACK, window_stats
from bot.history.table import Aggregate, FamilyTable, Floats, Table
from bot.results.types import REFERENCE, PointKey

BROKEN_ALONG = "decided along the commits, not on a window"


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
    half the change, the same way, measured from the before window's mean."""
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
    return True


def columns(table: Table, span: Span) -> tuple[int, int, int]:
    """The run columns: before = ``lo..mid-1``, after = ``mid..hi-1``."""
    s = table.starts
    return s[span.first], s[span.split + 1], s[span.last + 1]


def _agg_stats(a: Aggregate, lo: int, hi: int) -> list[RunStat]:
    return [RunStat(float(a.y[r]), float(a.w[r]), int(a.n[r])) for r in range(lo, hi)]


def _others(
    ft: FamilyTable, a: Aggregate, row: int, cols: tuple[int, int, int]
) -> Comparison | None:
    """The geometric mean of the variant's OTHER points (for corroboration), leave-one-out."""
    if row not in a.members or len(a.members) < 2:
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
        alone = ft.kind == "ratio"
        corroborated = is_corroborated(state, c, t, None, alone=alone)
        if state in ("regressed", "improved") and not corroborated:  # the group, then
            agg = next((g for g in ft.aggregates if g.variant == key.variant), None)
            others = _others(ft, agg, j, (lo, mid, hi)) if agg else None
            corroborated = is_corroborated(state, c, t, others, alone=alone)
        rows.append(PointVerdict(key, True, t, state, c, pu, pd, corroborated, kind=ft.kind))
    return Rows(tuple(rows), _summaries(table, ft, span, alpha, min_after))


def _explain(ratio: Sequence[PointVerdict], kernels: Sequence[PointVerdict]) -> list[PointVerdict]:
    """Which side moved, for each ratio row (bot/decide/verdict.py does the same)."""
    by_key = {p.key: p.cmp for p in kernels}
    out = []
    for p in ratio:
        mine, nv = by_key.get(p.key), by_key.get(PointKey(REFERENCE, p.key.dtype, p.key.shape))
        moved = side_moved(mine, nv, p.cmp, p.threshold) if p.cmp else "unknown"
        out.append(replace(p, moved=moved, contender_kernel=mine, nvfuser_kernel=nv))
    return out


def decide_span(
    table: Table,
    span: Span,
    alpha: float,
    min_before: int,
    min_after: int,
    model_note: str,
    full: bool = True,
) -> Verdict:
    """The four guards at one split, as a verdict of the first commit after it against the
    last commit before it (runs: the windows' runs); ``full=False``: see family_rows."""
    s: VerdictSettings = table.settings
    fams = {
        f: family_rows(table, ft, span, alpha, min_before, min_after, full)
        for f, ft in table.families.items()
    }
    ratio = _explain(fams["ratio"].rows, (*fams["nvfuser"].rows, *fams["thunder"].rows))
    nv_rows = corroborate_kernels(fams["nvfuser"].rows, ratio)
    th_rows = corroborate_kernels(fams["thunder"].rows, ratio)
    nv_state = guard_state(nv_rows, fams["nvfuser"].aggregates)
    th_state = guard_state(th_rows, fams["thunder"].aggregates)
    ratio_state = ratio_owner(guard_state(ratio, fams["ratio"].aggregates), nv_state, th_state)
    nv_slower = nv_state in ("regressed", "unsure")

    def guard(
        kind: GuardKind,
        state: State,
        rows: Sequence[PointVerdict],
        aggs: tuple[VariantSummary, ...],
    ) -> Guard:
        g = Guard(kind, state, "", tuple(rows), aggs)
        return replace(g, summary=guard_summary(g, s, nv_slower))

    guards = (
        Guard("broken", "no change", BROKEN_ALONG, ()),
        guard("nvfuser", nv_state, nv_rows, fams["nvfuser"].aggregates),
        guard("thunder", th_state, th_rows, fams["thunder"].aggregates),
        guard("ratio", ratio_state, ratio, fams["ratio"].aggregates),
    )
    commits = table.history.commits
    lo, mid, hi = columns(table, span)
    with_data = [p for p in ratio if p.cmp is not None]
    worst = max(with_data, key=lambda p: p.cmp.change.estimate if p.cmp else 0.0, default=None)
    overall = overall_state(guards)
    return Verdict(
        overall=overall,
        reason="; ".join(f"{g.title}: {g.summary}" for g in guards[1:] if g.state != "no change")
        or "no guard moved by its threshold",
        machine=table.history.machine,
        base=commits[span.split].sha,
        head=commits[span.split + 1].sha,
        points=tuple(ratio),
        summaries=fams["ratio"].aggregates,
        worst=worst,
        settings=s,
        guards=guards,
        kernels=(*nv_rows, *th_rows),
        runs=(mid - lo, hi - mid),
        model=model_note,
    )


def strength(g: Guard, direction: State) -> float:
    """How strongly a guard's evidence says ``direction``: the largest |t| among its
    corroborated points and geometric means in that state (0: none)."""
    cmps = [p.cmp for p in g.points if p.state == direction and p.corroborated and p.cmp]
    cmps += [a.cmp for a in g.aggregates if a.state == direction and a.cmp]
    return max((abs(c.log_change) / c.se if c.se > 0 else math.inf for c in cmps), default=0.0)
