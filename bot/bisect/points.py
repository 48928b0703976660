"""Which points and variants a bisect measures and decides on (pure, but the report's reading).

Only the regressed points: each build then costs seconds of GPU time instead of a whole size
set, and a point that did not move cannot tell good from bad anyway. The points come as
``dtype/MxN`` keys (what the suite's ``RMSNORM_BENCH_POINTS`` takes), given or read from the
JSON of ``report --json`` (or ``history --json``) that found the regression.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.results.limits import MAX_RESULTS_BYTES
from bot.results.strict_json import read_document
from bot.results.types import REFERENCE, BadInput, CommitResults

DTYPES = ("bfloat16", "float16", "float32")
_POINT = re.compile(rf"(?:{'|'.join(DTYPES)})/[1-9][0-9]{{0,6}}x[1-9][0-9]{{0,6}}")
_VARIANT = re.compile(r"[a-z][a-z0-9-]{0,40}")
#: What decides a Thunder-vs-nvFuser regression; the context baselines decide nothing.
DEFAULT_VARIANTS = ("nvfuser", "thunder-prims", "thunder-func")
#: Row states of a report that make a point worth bisecting.
BISECTED_STATES = ("regressed", "broken")
#: ``history --json`` (bot/history/render.py), whose confirmed breaks name their points.
HISTORY_SCHEMA = "perfbot-history/1"


class PointsError(ValueError):
    """A point or variant list that names nothing the suite can measure."""


def parse_points(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise PointsError("no point given (keys look like bfloat16/2048x8192)")
    bad = [n for n in names if not _POINT.fullmatch(n)]
    if bad:
        raise PointsError(f"{bad[0]!r} is not a point (keys look like bfloat16/2048x8192)")
    return tuple(sorted(names))


def parse_variants(text: str) -> tuple[str, ...]:
    """The variants to measure; nvFuser's hand-written fusion always (every ratio needs it)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if not _VARIANT.fullmatch(n)]
    if bad:
        raise PointsError(f"{bad[0]!r} is not a variant name")
    return tuple(dict.fromkeys([REFERENCE, *names]))


def _rows(verdict: Any) -> Iterable[Mapping[str, Any]]:
    if not isinstance(verdict, Mapping):
        return
    for series in ("points", "kernels"):
        rows = verdict.get(series)
        if isinstance(rows, list):
            yield from (r for r in rows if isinstance(r, Mapping))


def _history_points(data: Mapping[str, Any], where: str) -> set[str]:
    """``history --json``: the points of its confirmed breaks (``variant/dtype/shape``); its
    timing changes are decided per guard and name no points of their own."""
    found = set()
    machines = [m for m in data.get("machines") or () if isinstance(m, Mapping)]
    for machine in machines:
        for brk in machine.get("breaks") or ():
            if not isinstance(brk, Mapping) or brk.get("status") != "confirmed":
                continue
            for p in brk.get("points") or ():
                label = str(p.get("point", "")) if isinstance(p, Mapping) else ""
                key = label.split("/", 1)[-1]
                if not _POINT.fullmatch(key):
                    raise BadInput(f"{where}: a break names the point {label[:60]!r}")
                found.add(key)
    return found


def points_in_report(data: Any, where: str) -> tuple[str, ...]:
    """The gating points a ``report --json`` found regressed or broken, on any machine; or
    the points of the confirmed breaks of a ``history --json``."""
    if not isinstance(data, Mapping) or not isinstance(data.get("schema"), str):
        raise BadInput(f"{where}: not the JSON of `report --json` (no schema)")
    if data["schema"] == HISTORY_SCHEMA:
        found = _history_points(data, where)
        if not found:
            raise BadInput(
                f"{where}: the history names no broken point (its timing changes are per "
                "guard): give the points with --points"
            )
        return tuple(sorted(found))
    verdicts: list[Any] = [data]
    machines = data.get("machines")
    if isinstance(machines, list):
        verdicts += [m.get("verdict") for m in machines if isinstance(m, Mapping)]
    found = set()
    for row in (r for v in verdicts for r in _rows(v)):
        if row.get("gating") is False or row.get("state") not in BISECTED_STATES:
            continue
        key = f"{row.get('dtype')}/{row.get('shape')}"
        if not _POINT.fullmatch(key):
            raise BadInput(f"{where}: a regressed row names the point {key[:60]!r}")
        found.add(key)
    if not found:
        raise BadInput(f"{where}: the report has no regressed or broken point to bisect")
    return tuple(sorted(found))


def read_report_points(path: Path) -> tuple[str, ...]:
    return points_in_report(read_document(path, MAX_RESULTS_BYTES, "report JSON"), str(path))


def restrict(run: CommitResults, points: Sequence[str], variants: Sequence[str]) -> CommitResults:
    """The run as if only these points and variants had been measured: a build is decided on
    what the bisect asked for, whatever else its results hold."""
    wanted, kept = set(points), set(variants)
    return replace(
        run,
        points={
            k: p
            for k, p in run.points.items()
            if f"{k.dtype}/{k.shape}" in wanted and k.variant in kept
        },
    )


def without_data(run: CommitResults, points: Sequence[str], variants: Sequence[str]) -> list[str]:
    """``variant/dtype/shape`` of every asked-for series the run has no kernel time for: a
    reference (the known-good build) without them cannot decide any build there."""
    have = {f"{k.variant}/{k.dtype}/{k.shape}" for k, p in run.points.items() if p.kernel_s}
    return [f"{v}/{p}" for p in points for v in variants if f"{v}/{p}" not in have]
