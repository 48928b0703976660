"""A run's points kept as columns, a :class:`Point` built only when one is asked for.

The run cache (bot/results/run_cache.py) stores a run by column: the keys, each point's three
sample counts and three scalars, and every sample in one float64 array. Turning a nightly run
back into ~900 Points is ~2,700 tuples of ~50k floats, and a 100-commit history is 5M floats
built, kept and freed: ~0.8 s of the watch's ~2.5 s. The watch reads none of them one by one:
the table (bot/history/table.py) wants each series' samples as one matrix per sample count,
the broken guard whether a point has samples, and both the share of peak bandwidth. So a run
read from the cache keeps the columns, answers those three questions from them, and is an
ordinary ``Mapping[PointKey, Point]`` for every other reader (each Point built once, on first
access, equal to the one the file reader makes).

The three functions at the bottom answer for any run's points, packed or a plain dict, so a
caller never asks which it holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from bot.results.types import Point, PointKey

#: Which of a point's sample lists: the per-round ratio, the kernel times, the host times.
Samples = Literal["ratio", "kernel_s", "host_s"]
SAMPLES: tuple[Samples, ...] = ("ratio", "kernel_s", "host_s")
COLUMN = {which: i for i, which in enumerate(SAMPLES)}
Floats = NDArray[np.float64]
#: Rows of one sample count: the rows' positions among the keys asked for, and their samples.
Groups = dict[int, tuple[list[int], Floats]]


class PackedPoints(Mapping[PointKey, Point]):
    """``lengths``: per point, its ratio, kernel and host sample counts (-1: none, the list is
    None); ``scalars``: per point, bandwidth share, kernel count, compile seconds (NaN: None);
    ``samples``: the lists, in that order, point after point. Checked by the caller."""

    def __init__(
        self,
        keys: Sequence[PointKey],
        no_data: Sequence[str | None],
        lengths: NDArray[np.int32],
        scalars: Floats,
        samples: Floats,
    ) -> None:
        self._keys = tuple(keys)
        self._index = {k: i for i, k in enumerate(self._keys)}
        self._no_data = tuple(no_data)
        self._lengths = lengths.reshape(len(self._keys), 3)
        sizes = np.maximum(self._lengths, 0)
        self._starts = np.cumsum(sizes).reshape(sizes.shape) - sizes
        self._scalars = scalars.reshape(len(self._keys), 3)
        self._samples = samples
        self._built: dict[int, Point] = {}
        # As Python ints: the broken guard asks ~500 points of every run, one at a time.
        self._counts: list[list[int]] = sizes.tolist()

    def __getitem__(self, key: PointKey) -> Point:
        i = self._index[key]
        point = self._built.get(i)
        if point is None:
            point = self._built[i] = self._point(i)
        return point

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __iter__(self) -> Iterator[PointKey]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def _list(self, i: int, which: int) -> tuple[float, ...] | None:
        size = int(self._lengths[i, which])
        if size < 0:
            return None
        start = int(self._starts[i, which])
        return tuple(self._samples[start : start + size].tolist())

    def _point(self, i: int) -> Point:
        bw, count, compile_s = (None if math.isnan(v) else v for v in self._scalars[i].tolist())
        ratio, kernel, host = (self._list(i, j) for j in range(3))
        return Point(self._keys[i], ratio, kernel, host, bw, count, compile_s, self._no_data[i])

    def subset(self, keys: Sequence[PointKey]) -> PackedPoints:
        """These points only, still as columns (their samples copied as one array): one
        fusion's points of a catalog run (``CommitResults.of_fusion``), which the watch judges
        on their own, without building a Point of the others or of these."""
        rows = [self._index[k] for k in keys]
        pieces = [
            self._samples[start : start + size]
            for i in rows
            for start, size in zip(self._starts[i].tolist(), self._counts[i], strict=True)
        ]
        return PackedPoints(
            [self._keys[i] for i in rows],
            [self._no_data[i] for i in rows],
            self._lengths[rows].reshape(-1),
            self._scalars[rows].reshape(-1),
            np.concatenate(pieces) if pieces else np.empty(0, dtype=np.float64),
        )

    @property
    def built(self) -> int:
        """How many Points were asked for (the watch asks for those of failed points only)."""
        return len(self._built)

    def groups(self, keys: Sequence[PointKey], which: Samples) -> Groups:
        """The samples of ``keys`` (absent ones: none) as one matrix per sample count."""
        col = COLUMN[which]
        rows = self._rows(keys)
        sizes = self._column(self._lengths, rows, col, 0)
        out: Groups = {}
        for size in np.unique(sizes[sizes > 0]).tolist():
            (picked,) = np.nonzero(sizes == size)
            starts = self._starts[rows[picked], col]
            out[size] = (picked.tolist(), self._samples[starts[:, None] + np.arange(size)])
        return out

    def count(self, key: PointKey, which: Samples) -> int:
        i = self._index.get(key)
        return 0 if i is None else self._counts[i][COLUMN[which]]

    def bandwidth(self, keys: Sequence[PointKey]) -> Floats:
        return self._column(self._scalars, self._rows(keys), 0, math.nan)

    def _rows(self, keys: Sequence[PointKey]) -> NDArray[np.int64]:
        """Each key's row (-1: not a point of this run; see _column)."""
        return np.asarray([self._index.get(k, -1) for k in keys], dtype=np.int64)

    def _column(
        self, values: NDArray[Any], rows: NDArray[np.int64], col: int, missing: float
    ) -> NDArray[Any]:
        """``values[row, col]`` for each row, ``missing`` where a key is not a point here."""
        if not self._keys:  # nothing to index, not even the -1 that np.where masks
            return np.full(len(rows), missing, dtype=values.dtype)
        return np.where(rows >= 0, values[rows, col], missing)


def sample_groups(
    points: Mapping[PointKey, Point], keys: Sequence[PointKey], which: Samples
) -> Groups:
    """The samples of ``keys`` in these points, one matrix per sample count (rows: positions
    in ``keys``; a point without samples is in none)."""
    if isinstance(points, PackedPoints):
        return points.groups(keys, which)
    lists: list[Any] = [getattr(points[k], which) if k in points else None for k in keys]
    by_size: dict[int, list[int]] = {}
    for i, xs in enumerate(lists):
        if xs:
            by_size.setdefault(len(xs), []).append(i)
    return {
        size: (rows, np.asarray([lists[i] for i in rows], dtype=np.float64))
        for size, rows in by_size.items()
    }


def sample_count(points: Mapping[PointKey, Point], key: PointKey, which: Samples) -> int:
    """How many samples of ``which`` the point has (0: none, or no such point)."""
    if isinstance(points, PackedPoints):
        return points.count(key, which)
    point = points.get(key)
    values = getattr(point, which) if point is not None else None
    return len(values) if values else 0


def bandwidths(points: Mapping[PointKey, Point], keys: Sequence[PointKey]) -> Floats:
    """Each key's share of peak bandwidth (NaN: not recorded, or no such point)."""
    if isinstance(points, PackedPoints):
        return points.bandwidth(keys)
    found = (points.get(k) for k in keys)
    values = [p.bandwidth_pct if p is not None else None for p in found]
    return np.asarray([math.nan if v is None else v for v in values], dtype=np.float64)
