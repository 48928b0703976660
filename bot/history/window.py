"""The decision at one split (pure): the commits before it against the commits after it, with
the PR mode's four guards and rules (bot/decide/rules.py), as a real
:class:`~bot.decide.types.Verdict` whose base is the last commit before the split and whose
head is the first after it.

What differs from ``pr`` (bot/decide/families.py) and why:

* the runs of a window are several commits, never paired with the other window's by index
  (a job's repeats are; commits k of two windows are not): always the unpaired comparison;
* alpha is the per-window alpha the caller passes (the configured alpha over the number of
  windows tested: Bonferroni over positions and windows, Holm over the points within each guard);
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
from dataclasses import replace

from bot.config import VerdictSettings
from bot.decide.rules import (
    corroborate_kernels,
    guard_state,
    overall_state,
    ratio_owner,
    side_moved,
)
from bot.decide.stats import Comparison, Interval
from bot.decide.types import Guard, GuardKind, PointVerdict, State, VariantSummary, Verdict
from bot.decide.wording import guard_summary
from bot.history.rows import Span, columns, family_rows
from bot.history.table import Family, Table

__all__ = ["BROKEN_ALONG", "Span", "columns", "decide_span", "evidence", "headline", "strength"]

BROKEN_ALONG = "decided along the commits, not on a window"


def _explain(ratio: Sequence[PointVerdict], kernels: Sequence[PointVerdict]) -> list[PointVerdict]:
    """Which side moved, for each ratio row (bot/decide/verdict.py does the same)."""
    by_key = {p.key: p.cmp for p in kernels}
    out = []
    for p in ratio:
        mine, nv = by_key.get(p.key), by_key.get(p.key.reference())
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

    lo, mid, hi = columns(table, span)

    def with_bw(rows: Sequence[PointVerdict], family: Family) -> list[PointVerdict]:
        """Each side's window's share of peak bandwidth (the PR mode's column)."""
        ft = table.families[family]
        before, after = ft.bandwidth_means(lo, mid), ft.bandwidth_means(mid, hi)
        return [replace(p, bandwidth_pct=(before.get(p.key), after.get(p.key))) for p in rows]

    if full:  # a verdict that is reported; the search's own (full=False) shows nobody a row
        ratio = with_bw(ratio, "ratio")
        nv_rows, th_rows = with_bw(nv_rows, "nvfuser"), with_bw(th_rows, "thunder")
    guards = (
        Guard("broken", "no change", BROKEN_ALONG, ()),
        guard("nvfuser", nv_state, nv_rows, fams["nvfuser"].aggregates),
        guard("thunder", th_state, th_rows, fams["thunder"].aggregates),
        guard("ratio", ratio_state, ratio, fams["ratio"].aggregates),
    )
    commits = table.history.commits
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


def headline(g: Guard, direction: str) -> tuple[str, Comparison, float | None] | None:
    """The headline figure of a guard's change: (what, its comparison, its own threshold: a
    point's, None for a geometric mean), a variant's geometric mean when one moved (the
    surest of them), else the surest corroborated point."""

    def t(c: Comparison) -> float:
        return abs(c.log_change) / c.se if c.se else math.inf

    means: list[tuple[str, Comparison, float | None]] = [
        (f"{a.variant} geometric mean over {a.points} point(s)", a.cmp, None)
        for a in g.aggregates
        if a.state == direction and a.cmp
    ]
    points: list[tuple[str, Comparison, float | None]] = [
        (p.key.label, p.cmp, p.threshold)
        for p in g.points
        if p.state == direction and p.corroborated and p.cmp
    ]
    found = means or points
    return max(found, key=lambda x: t(x[1])) if found else None


def evidence(g: Guard, direction: str) -> tuple[str, Interval, float] | None:
    """The headline figure (:func:`headline`) as (what, change interval, |t|)."""
    found = headline(g, direction)
    if found is None:
        return None
    what, c, _ = found
    return what, c.change, abs(c.log_change) / c.se if c.se else math.inf
