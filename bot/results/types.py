"""The typed, immutable records the results readers produce and the verdict consumes.

Kept apart from the readers so that the verdict, the comment and the website depend on what a
result *is*, never on how asv lays it out on disk (docs/DATA.md); nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "BENCH_BANDWIDTH",
    "BENCH_COMPILE",
    "BENCH_COUNT",
    "BENCH_HOST",
    "BENCH_KERNEL",
    "BENCH_RATIO",
    "REFERENCE",
    "REQUIRED",
    "SUITE",
    "BadInput",
    "CommitInfo",
    "CommitResults",
    "Point",
    "PointKey",
    "Provenance",
    "RunCheck",
    "RunChecks",
    "compared_keys",
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


class BadInput(Exception):
    """The results cannot be used; the message names the file, benchmark and point."""


class PointKey(NamedTuple):
    """A tuple, not a dataclass: a history hashes and compares ~400k keys, and a tuple's
    hash and equality run in C where a dataclass's run in Python (5x the time)."""

    variant: str
    dtype: str
    shape: str

    @property
    def label(self) -> str:
        """The name thresholds are matched against, e.g. ``thunder-prims/bfloat16/2048x8192``."""
        return f"{self.variant}/{self.dtype}/{self.shape}"


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
        point = point.get(f"{key.dtype}/{key.shape}") if isinstance(point, Mapping) else None
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
        return self.points.get(PointKey(REFERENCE, key.dtype, key.shape))


@dataclass(frozen=True)
class CommitInfo:
    machine: str
    commit: str
    date: int
    thunder_variant: str | None


def compared_keys(base: CommitResults, head: CommitResults) -> Sequence[PointKey]:
    """Contender points present on either side (a point on one side only is "no data")."""
    return sorted(set(base.contenders()) | set(head.contenders()))
