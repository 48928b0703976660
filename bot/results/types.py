"""The typed, immutable records the results readers produce and the verdict consumes.

Kept apart from the readers so that the verdict, the comment and the website depend on what a
result *is*, never on how asv lays it out on disk (docs/DATA.md); nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "BENCH_BANDWIDTH",
    "BENCH_COMPILE",
    "BENCH_COUNT",
    "BENCH_HOST",
    "BENCH_KERNEL",
    "BENCH_RATIO",
    "CATALOG_SUITE",
    "DEFAULT_FUSION",
    "REFERENCE",
    "REQUIRED",
    "SUITE",
    "BadInput",
    "BenchNames",
    "CommitInfo",
    "CommitResults",
    "Point",
    "PointKey",
    "Provenance",
    "RunCheck",
    "RunChecks",
    "bench_names",
    "catalog_fusions",
    "compared_keys",
    "fusions_of",
]

SUITE = "bench_rmsnorm_bwd"
BENCH_RATIO = f"{SUITE}.RatioToNvfuser.track_ratio"
BENCH_KERNEL = f"{SUITE}.RMSNormBackward.track_kernel_time"
BENCH_HOST = f"{SUITE}.RMSNormBackward.track_host_time"
BENCH_BANDWIDTH = f"{SUITE}.RMSNormBackward.track_bandwidth_pct"
BENCH_COUNT = f"{SUITE}.RMSNormBackward.track_kernel_count"
BENCH_COMPILE = f"{SUITE}.RMSNormBackward.track_compile_time"
#: The verdict needs these two; the others only add context to the comment.
REQUIRED = (BENCH_RATIO, BENCH_KERNEL)
REFERENCE = "nvfuser"
#: The fusion every result, noise model and issue from before the catalog names.
DEFAULT_FUSION = "rmsnorm_bwd"
#: The asv module of every other fusion of the catalog: one class a fusion, named as it.
CATALOG_SUITE = "bench_fusions"


class BenchNames(NamedTuple):
    """One fusion's asv benchmark names (docs/DATA.md)."""

    ratio: str
    kernel: str
    host: str
    bandwidth: str
    kernels: str  # the kernel count
    compile: str


def bench_names(fusion: str) -> BenchNames:
    """RMSNorm backward keeps the names it had before the catalog; every other fusion's are
    ``bench_fusions.<fusion>.track_*``."""
    if fusion == DEFAULT_FUSION:
        return BenchNames(
            BENCH_RATIO, BENCH_KERNEL, BENCH_HOST, BENCH_BANDWIDTH, BENCH_COUNT, BENCH_COMPILE
        )
    stem = f"{CATALOG_SUITE}.{fusion}.track_"
    return BenchNames(*(stem + m for m in BENCH_METRICS))


#: The metric names behind ``track_`` in a catalog fusion's class, in BenchNames' order.
BENCH_METRICS = (
    "ratio",
    "kernel_time",
    "host_time",
    "bandwidth_pct",
    "kernel_count",
    "compile_time",
)


class BadInput(Exception):
    """The results cannot be used; the message names the file, benchmark and point."""


class PointKey(NamedTuple):
    """A tuple, not a dataclass: a history hashes and compares ~400k keys, and a tuple's
    hash and equality run in C where a dataclass's run in Python (5x the time)."""

    variant: str
    dtype: str
    shape: str
    fusion: str = DEFAULT_FUSION

    @property
    def series(self) -> str:
        """The variant within its fusion: ``thunder-prims`` for RMSNorm backward (its names
        from before the catalog), ``softmax_bwd:thunder-prims`` for another fusion. Noise
        pools and geometric means are per series."""
        return self.variant if self.fusion == DEFAULT_FUSION else f"{self.fusion}:{self.variant}"

    @property
    def label(self) -> str:
        """The name thresholds are matched against, e.g. ``thunder-prims/bfloat16/2048x8192``
        (RMSNorm backward) or ``softmax_bwd:thunder-prims/bfloat16/16384x4096``."""
        return f"{self.series}/{self.dtype}/{self.shape}"

    @property
    def point(self) -> str:
        """The point's key in a provenance record (benchmarks/engine/config.point_key)."""
        at = f"{self.dtype}/{self.shape}"
        return at if self.fusion == DEFAULT_FUSION else f"{self.fusion}/{at}"

    def reference(self) -> PointKey:
        """The hand-written fusion's key at this point."""
        return self._replace(variant=REFERENCE)


@dataclass(frozen=True)
class Point:
    """One variant at one (dtype, shape). Samples are index-aligned by round across variants."""

    key: PointKey
    ratio: tuple[float, ...] | None  # variant / nvFuser per round; None for nvFuser or no data
    kernel_s: tuple[float, ...] | None
    host_s: tuple[float, ...] | None = None
    bandwidth_pct: float | None = None
    kernel_count: float | None = None
    compile_s: float | None = None
    no_data: str | None = None  # why the ratio is missing ("failed", "skipped", ...)


@dataclass(frozen=True)
class Provenance:
    """The last line of ``<full-sha>.provenance.jsonl`` (one line per asv run; last wins)."""

    path: Path
    line: int
    record: Mapping[str, Any]

    def text(self, *keys: str) -> str | None:
        """A nested field as display text, or None where absent (the record is free-form)."""
        value: Any = self.record
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        return None if value is None or isinstance(value, (dict, list)) else str(value)

    def point_error(self, key: PointKey) -> str | None:
        """Why the suite recorded no data for a point, where it says so."""
        point = self.record.get("points", {})
        point = point.get(key.point) if isinstance(point, Mapping) else None
        if not isinstance(point, Mapping):
            return None
        if point.get("error"):
            return str(point["error"])
        entry = point.get("variants", {}).get(key.variant)
        if isinstance(entry, Mapping) and entry.get("status") not in (None, "ok"):
            return f"{entry.get('status')}: {entry.get('error')}"
        return None


@dataclass(frozen=True)
class RunCheck:
    """One line of ``<full-sha>.hygiene.jsonl``: the runner's check of the GPU before or
    after one measurement of the commit (docs/DATA.md)."""

    when: str  # "before" or "after"
    checked_at: str
    ok: bool
    problems: tuple[str, ...]


@dataclass(frozen=True)
class RunChecks:
    """Every runner check of one run (one commit in one results folder); clean when all pass."""

    path: Path
    checks: tuple[RunCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failed(self) -> tuple[RunCheck, ...]:
        return tuple(c for c in self.checks if not c.ok)


@dataclass(frozen=True)
class CommitResults:
    machine: str
    commit: str
    path: Path
    points: Mapping[PointKey, Point]
    provenance: Provenance | None = None
    date: int | None = field(default=None, compare=False)
    #: The runner's hygiene checks of this run; None where the runner wrote none (not checked).
    checks: RunChecks | None = field(default=None, compare=False)
    #: Test input tiled from a recorded run (bot/results/tiled.py), never a measurement.
    tiled: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def folder(self) -> str:
        """The results folder this run came from (``rep-2``), as the comment names it."""
        return self.path.parent.parent.name

    @property
    def started_at(self) -> str | None:
        """When the measurement started (its provenance record; None without one): a run of
        one commit found in two folders is one run when this agrees."""
        return self.provenance.text("started_at") if self.provenance else None

    def contenders(self) -> list[PointKey]:
        """Every point compared against nvFuser, in a stable order."""
        return sorted(k for k in self.points if k.variant != REFERENCE)

    def reference(self, key: PointKey) -> Point | None:
        return self.points.get(key.reference())

    def of_fusion(self, fusion: str) -> CommitResults:
        """This run with one fusion's points only (each fusion is judged on its own). A run
        the cache keeps as columns (bot/results/packed.py) stays so: ``subset``."""
        keys = [k for k in self.points if k.fusion == fusion]
        subset = getattr(self.points, "subset", None)
        if subset is not None:
            return replace(self, points=subset(keys))
        return replace(self, points={k: self.points[k] for k in keys})


@dataclass(frozen=True)
class CommitInfo:
    machine: str
    commit: str
    date: int
    thunder_variant: str | None


def fusions_of(runs: Sequence[CommitResults]) -> tuple[str, ...]:
    """Every fusion with points in any of the runs: RMSNorm backward first, then by name."""
    found = {k.fusion for r in runs for k in r.points}
    return tuple(sorted(found, key=lambda f: (f != DEFAULT_FUSION, f))) or (DEFAULT_FUSION,)


def catalog_fusions(benchmarks: Iterable[str]) -> list[str]:
    """The catalog's fusions among asv benchmark names (``bench_fusions.<fusion>.track_*``),
    by name: what a results file or a published site holds besides RMSNorm backward."""
    return sorted(
        {
            name.split(".")[1]
            for name in benchmarks
            if name.startswith(f"{CATALOG_SUITE}.") and name.count(".") == 2
        }
    )


def compared_keys(base: CommitResults, head: CommitResults) -> Sequence[PointKey]:
    """Contender points present on either side (a point on one side only is "no data")."""
    return sorted(set(base.contenders()) | set(head.contenders()))
