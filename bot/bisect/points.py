"""Which points and variants a bisect measures and decides on (pure, but the report's reading).

Only the regressed points: each build then costs seconds of GPU time instead of a whole size
set, and a point that did not move cannot tell good from bad anyway. The points come as the
keys the suite's ``RMSNORM_BENCH_POINTS`` takes (``dtype/MxN`` for RMSNorm backward,
``fusion/dtype/MxN`` for another fusion of the catalog), given or read from the JSON of
``report --json`` (or ``history --json``) that found the regression. One bisect measures one
fusion: each fusion is judged on its own (as the PR mode judges it), so a list of two fusions'
points would be two bisects.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.fusion.names import known
from bot.results.limits import MAX_RESULTS_BYTES
from bot.results.strict_json import read_document
from bot.results.types import DEFAULT_FUSION, REFERENCE, BadInput, CommitResults, PointKey

DTYPES = ("bfloat16", "float16", "float32")
_POINT = re.compile(
    rf"(?:(?P<fusion>[a-z][a-z0-9_]{{0,40}})/)?(?P<dtype>{'|'.join(DTYPES)})"
    r"/(?P<shape>[1-9][0-9]{0,6}x[1-9][0-9]{0,6})"
)
_LOOK = "keys look like bfloat16/2048x8192, or softmax_bwd/bfloat16/16384x4096"
_VARIANT = re.compile(r"[a-z][a-z0-9-]{0,40}")
#: What decides a Thunder-vs-nvFuser regression; the context baselines decide nothing.
DEFAULT_VARIANTS = ("nvfuser", "thunder-prims", "thunder-func")
#: Row states of a report that make a point worth bisecting.
BISECTED_STATES = ("regressed", "broken")
#: ``history --json`` (bot/history/render.py), whose confirmed breaks name their points.
HISTORY_SCHEMA = "perfbot-history/1"


class PointsError(ValueError):
    """A point or variant list that names nothing the suite can measure."""


def _split(key: str) -> tuple[str, str, str] | None:
    """(fusion, dtype, shape) of a point key, or None where it is none (an unknown fusion)."""
    m = _POINT.fullmatch(key)
    fusion = (m.group("fusion") or DEFAULT_FUSION) if m else ""
    return (fusion, m.group("dtype"), m.group("shape")) if m and known(fusion) else None


def canonical(key: str) -> str | None:
    """The key as the suite and the provenance records name the point
    (benchmarks/engine/config.point_key): RMSNorm backward's without its fusion."""
    parts = _split(key)
    return PointKey("", parts[1], parts[2], parts[0]).point if parts else None


def series_key(variant: str, key: str) -> PointKey:
    """A variant's series at a (checked) point key, as the results name it."""
    parts = _split(key)
    assert parts is not None, key
    fusion, dtype, shape = parts
    return PointKey(variant, dtype, shape, fusion)


def fusion_of(key: str) -> str:
    """The fusion a (checked) point key is of."""
    parts = _split(key)
    assert parts is not None, key
    return parts[0]


def one_fusion(points: Sequence[str]) -> str:
    """The one fusion the points are of: a bisect decides each build on one fusion's points
    with that fusion's noise series, as the PR mode judges each fusion on its own."""
    fusions = sorted({fusion_of(p) for p in points})
    if len(fusions) > 1:
        raise PointsError(
            f"points of {len(fusions)} fusions ({', '.join(fusions)}): a bisect measures one "
            "fusion; bisect each on its own, with that fusion's points"
        )
    return fusions[0] if fusions else DEFAULT_FUSION


def parse_points(text: str) -> tuple[str, ...]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise PointsError(f"no point given ({_LOOK})")
    keys = [canonical(n) for n in names]
    bad = [n for n, k in zip(names, keys, strict=True) if k is None]
    if bad:
        raise PointsError(f"{bad[0]!r} is not a point ({_LOOK})")
    found = tuple(sorted({k for k in keys if k}))
    one_fusion(found)
    return found


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
                key = point_of_label(label)
                if key is None:
                    raise BadInput(f"{where}: a break names the point {label[:60]!r}")
                found.add(key)
    return found


def point_of_label(label: str) -> str | None:
    """The point key of a series label (PointKey.label): ``thunder-prims/bfloat16/2048x8192``
    is ``bfloat16/2048x8192``, ``gelu_bwd:thunder-func/bfloat16/16384x4096`` is
    ``gelu_bwd/bfloat16/16384x4096``; None where the label names no point."""
    series, _, at = label.partition("/")
    fusion, colon, _variant = series.partition(":")
    return canonical(f"{fusion}/{at}" if colon else at)


def _verdicts(data: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """Each verdict of a ``report --json`` with the fusion it judged: one a machine and fusion
    (its rows name no fusion); the top-level one (a copy of the first) where none is listed."""
    machines = data.get("machines")
    listed = [
        (m.get("verdict"), str(m.get("fusion") or DEFAULT_FUSION))
        for m in (machines if isinstance(machines, list) else ())
        if isinstance(m, Mapping) and isinstance(m.get("verdict"), Mapping)
    ]
    return listed or [(data, DEFAULT_FUSION)]


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
        one_fusion(tuple(found))
        return tuple(sorted(found))
    found = set()
    for verdict, fusion in _verdicts(data):
        for row in _rows(verdict):
            if row.get("gating") is False or row.get("state") not in BISECTED_STATES:
                continue
            at = f"{row.get('dtype')}/{row.get('shape')}"
            key = canonical(at if fusion == DEFAULT_FUSION else f"{fusion}/{at}")
            if key is None or not _POINT.fullmatch(at):
                raise BadInput(f"{where}: a regressed row names the point {at[:60]!r}")
            found.add(key)
    if not found:
        raise BadInput(f"{where}: the report has no regressed or broken point to bisect")
    one_fusion(tuple(found))
    return tuple(sorted(found))


def read_report_points(path: Path) -> tuple[str, ...]:
    return points_in_report(read_document(path, MAX_RESULTS_BYTES, "report JSON"), str(path))


def restrict(run: CommitResults, points: Sequence[str], variants: Sequence[str]) -> CommitResults:
    """The run as if only these points and variants had been measured: a build is decided on
    what the bisect asked for, whatever else its results hold (a catalog run holds every
    fusion's points: only the bisected fusion's are judged, as the PR mode judges each)."""
    one = run.of_fusion(one_fusion(points))  # the fusion's points, as the PR mode takes them
    at = {(k.dtype, k.shape) for k in (series_key(REFERENCE, p) for p in points)}
    kept = set(variants)
    chosen = {k: p for k, p in one.points.items() if (k.dtype, k.shape) in at and k.variant in kept}
    return replace(one, points=chosen)


def without_data(run: CommitResults, points: Sequence[str], variants: Sequence[str]) -> list[str]:
    """The label (``variant/dtype/shape``, ``fusion:variant/...`` for another fusion) of every
    asked-for series the run has no kernel time for: a reference (the known-good build)
    without them cannot decide any build there."""
    have = {k for k, p in run.points.items() if p.kernel_s}
    asked = [series_key(v, p) for p in points for v in variants]
    return [k.label for k in asked if k not in have]
