"""Every series of a history as arrays: one row a series, one column a run, runs in commit
order (pure).

A series is what bot/decide/stats.py calls one (a contender's per-round ratio, or a variant's
kernel time, at one point), reduced per run to the same ``y`` (log median) and ``w``
(within-run variance of it) as :func:`bot.decide.stats.run_stat`, but computed for all series
of a run at once: a nightly history has ~900 series x 100 runs, and the scan and the
decisions at each split read these arrays instead of recomputing them.

Three families, one per timing guard, as the PR mode groups them (bot/decide/verdict.py): the
gating contenders' ratios (ratio guard), nvFuser's hand-written fusion's kernel times (nvFuser
guard), the gating contenders' kernel times (Thunder guard). A variant's geometric mean over
its points is kept per run too, over the points that have data in EVERY run of the history
(so one set of points along the whole history; a point that stops running is the broken
guard's business).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from bot.config import VerdictSettings
from bot.decide.noise_model import Kind, NoiseModel
from bot.decide.others import PriorSums
from bot.decide.stats import MAD_SCALE, MEDIAN_EFFICIENCY, Between, RunStat
from bot.history.series import Commit, History
from bot.results.packed import Groups, Samples, bandwidths, sample_groups
from bot.results.types import REFERENCE, CommitResults, PointKey

Family = Literal["ratio", "nvfuser", "thunder"]
FAMILIES: tuple[Family, ...] = ("ratio", "nvfuser", "thunder")
KIND: dict[Family, Kind] = {"ratio": "ratio", "nvfuser": "kernel", "thunder": "kernel"}
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Aggregate:
    """A variant's geometric mean over its members, per run, and its between-run noise; the
    two smallest round counts per run and the model's sums, to leave one member out in O(1)
    (bot/decide/others.py does the same for the PR mode)."""

    variant: str
    members: tuple[int, ...]  # rows of the family
    y: Floats
    w: Floats
    n: NDArray[np.int64]
    between: Between
    prior: PriorSums
    least: NDArray[np.int64]  # 2 x runs: the smallest and second smallest member n

    def without(self, ft: FamilyTable, row: int, lo: int, hi: int) -> list[RunStat]:
        """The geometric mean of every member but ``row``, over runs ``lo..hi-1``."""
        m = len(self.members)
        y = (self.y[lo:hi] * m - ft.y[row, lo:hi]) / (m - 1)
        w = (self.w[lo:hi] * m * m - ft.w[row, lo:hi]) / ((m - 1) * (m - 1))
        own, first, second = ft.n[row, lo:hi], self.least[0, lo:hi], self.least[1, lo:hi]
        n = np.where(own == first, second, first)
        return [RunStat(float(a), float(b), int(c)) for a, b, c in zip(y, w, n, strict=True)]


@dataclass(frozen=True)
class FamilyTable:
    family: Family
    kind: Kind
    keys: tuple[PointKey, ...]
    y: Floats  # series x runs; NaN where a run has no data
    w: Floats
    n: NDArray[np.int64]  # rounds; 0 where a run has no data
    thresholds: tuple[float, ...]  # per series, as a fraction
    between: tuple[Between, ...]  # per series: the noise model's (none: no model)
    aggregates: tuple[Aggregate, ...]
    #: Per series and run: the point's share of the GPU's peak bandwidth (NaN: not recorded).
    bandwidth: Floats

    def bandwidth_means(self, lo: int, hi: int) -> dict[PointKey, float | None]:
        """Each series' mean share of peak over runs ``lo..hi-1`` (None: none recorded)."""
        part = self.bandwidth[:, lo:hi]
        have = ~np.isnan(part)
        counts = have.sum(axis=1)
        sums = np.where(have, part, 0.0).sum(axis=1)
        return {
            k: (float(sums[i] / counts[i]) if counts[i] else None) for i, k in enumerate(self.keys)
        }

    def stats(self, row: int, lo: int, hi: int) -> list[RunStat]:
        """The series' runs with data among runs ``lo..hi-1``."""
        # Whole slices to Python numbers at once: an element of a numpy array read one by one
        # costs more than the RunStat built from it.
        ys, ws, ns = (a[row, lo:hi].tolist() for a in (self.y, self.w, self.n))
        return [RunStat(y, w, n) for y, w, n in zip(ys, ws, ns, strict=True) if n > 0]


@dataclass(frozen=True)
class Table:
    history: History
    starts: tuple[int, ...]  # run index where commit i starts; len = commits + 1
    families: dict[Family, FamilyTable]
    settings: VerdictSettings
    model: NoiseModel | None

    @property
    def size(self) -> int:
        return len(self.history.commits)

    def runs(self, first: int, last: int) -> tuple[int, int]:
        """The run columns of commits ``first..last`` (inclusive)."""
        return self.starts[first], self.starts[last + 1]


def run_stats(groups: Groups, rows: int) -> tuple[Floats, Floats, NDArray[np.int64]]:
    """``run_stat`` of ``rows`` series of one run at once, from their samples one matrix per
    sample count (bot/results/packed.py); a row in no group has no data."""
    y = np.full(rows, np.nan)
    w = np.full(rows, np.nan)
    n = np.zeros(rows, dtype=np.int64)
    for size, (members, samples) in groups.items():
        logs = np.log(samples)
        med = np.median(logs, axis=1)
        mad = np.median(np.abs(logs - med[:, None]), axis=1)
        y[members] = med
        w[members] = MEDIAN_EFFICIENCY * (MAD_SCALE * mad) ** 2 / size
        n[members] = size
    return y, w, n


def family_keys(family: Family, keys: Iterable[PointKey], s: VerdictSettings) -> list[PointKey]:
    """The points of one family among ``keys`` (every point of a history's runs)."""
    if family == "nvfuser":
        return sorted(k for k in keys if k.variant == REFERENCE)
    return sorted(k for k in keys if k.variant != REFERENCE and s.is_gating(k.variant))


def every_key(runs: Sequence[CommitResults]) -> set[PointKey]:
    """Every point of the runs (a key is hashed once a run: ~900 a nightly run)."""
    out: set[PointKey] = set()
    for r in runs:
        out.update(r.points)
    return out


def _aggregates(
    kind: Kind,
    keys: Sequence[PointKey],
    y: Floats,
    w: Floats,
    n: NDArray[np.int64],
    model: NoiseModel | None,
) -> tuple[Aggregate, ...]:
    out = []
    for variant in sorted({k.variant for k in keys}):
        rows = tuple(i for i, k in enumerate(keys) if k.variant == variant and (n[i] > 0).all())
        if not rows:
            continue
        members = [keys[i] for i in rows]
        between = model.between_aggregate(kind, variant, members) if model else Between()
        m = len(rows)
        counts = np.sort(n[list(rows)], axis=0)
        least = counts[:2] if m > 1 else np.vstack([counts[0], counts[0]])
        out.append(
            Aggregate(
                variant,
                rows,
                y[list(rows)].sum(axis=0) / m,
                w[list(rows)].sum(axis=0) / (m * m),
                counts[0],
                between,
                PriorSums(model, kind, variant, members),
                least,
            )
        )
    return tuple(out)


def build(history: History, s: VerdictSettings, model: NoiseModel | None) -> Table:
    """The arrays of every family over the history's runs (the model: None when it does not
    fit this machine or sampling; then the windows' own spread is the only between-run part)."""
    runs = history.runs
    starts = [0]
    for c in history.commits:
        starts.append(starts[-1] + len(c.runs))
    families = {}
    everything = every_key(runs)
    for family in FAMILIES:
        kind = KIND[family]
        keys = family_keys(family, everything, s)
        which: Samples = "ratio" if kind == "ratio" else "kernel_s"
        columns = [run_stats(sample_groups(r.points, keys, which), len(keys)) for r in runs]
        shape = (len(keys), len(runs))
        y = np.column_stack([c[0] for c in columns]) if columns and keys else np.full(shape, np.nan)
        w = np.column_stack([c[1] for c in columns]) if columns and keys else np.full(shape, np.nan)
        n = (
            np.column_stack([c[2] for c in columns])
            if columns and keys
            else np.zeros(shape, dtype=np.int64)
        )
        pick = s.threshold_for if kind == "ratio" else s.kernel_threshold_for
        bandwidth = (
            np.column_stack([bandwidths(r.points, keys) for r in runs])
            if runs and keys
            else np.full(shape, np.nan)
        )
        families[family] = FamilyTable(
            family,
            kind,
            tuple(keys),
            y,
            w,
            n,
            tuple(pick(k.label) for k in keys),
            tuple(model.between(kind, k) if model else Between() for k in keys),
            _aggregates(kind, keys, y, w, n, model),
            bandwidth,
        )
    return Table(history, tuple(starts), families, s, model)


def select(table: Table, commits: Sequence[int]) -> Table:
    """The table of some of the history's commits, in the order given (a follow-up compares a
    change's before window with commits further on): the same arrays, sliced, and each
    variant's geometric mean over the points with data in every run kept."""
    return select_runs(table, [(i, None) for i in commits])


def select_runs(table: Table, picks: Sequence[tuple[int, Sequence[int] | None]]) -> Table:
    """As :func:`select`, each pick a commit and which of its runs to keep (their indexes in
    the commit's runs; None: every one): a re-measured commit's runs judged one at a time
    (bot/history/remeasure.py)."""
    h = table.history
    chosen: list[Commit] = []
    cols: list[int] = []
    for i, keep in picks:
        c = h.commits[i]
        which = range(len(c.runs)) if keep is None else keep
        chosen.append(c if keep is None else replace(c, runs=tuple(c.runs[k] for k in which)))
        cols += [table.starts[i] + k for k in which]
    starts = [0]
    for c in chosen:
        starts.append(starts[-1] + len(c.runs))
    families = {}
    for f, ft in table.families.items():
        y, w, n = ft.y[:, cols], ft.w[:, cols], ft.n[:, cols]
        aggs = _aggregates(ft.kind, ft.keys, y, w, n, table.model)
        families[f] = replace(ft, y=y, w=w, n=n, aggregates=aggs, bandwidth=ft.bandwidth[:, cols])
    sub = History(h.machine, tuple(chosen), h.notes)
    return Table(sub, tuple(starts), families, table.settings, table.model)
