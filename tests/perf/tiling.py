"""Tiling (pure): a recorded run's asv results and provenance record, stretched over a larger
set of points by giving every new point the real samples of a recorded one, in turn.

Why: the bot must be fast and its comment short at the size of the nightly sweep (180 dtype x
shape points) and beyond, long before such a sweep is measured. The samples stay the real
ones (real noise, real pairing of rounds), only their point's name changes, so the bot reads
a tiled file exactly as a real run's; and every file written says, in its own ``perfbot_tiled``
field, that it is tiled test input and from where, so that nothing takes it for a measurement.
bot/results/tiled.py is where the bot reads that field.

Only the dicts are handled here; tests/perf/tile.py reads and writes the files.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.results.tiled import TILED_KEY, TILED_SCHEMA
from bot.results.types import REFERENCE, BadInput

__all__ = [
    "TILED_KEY",
    "TILED_SCHEMA",
    "Plan",
    "plan",
    "tile_benchmarks",
    "tile_provenance",
    "tile_results",
]

Point = tuple[str, str]  # (dtype, shape), as the suite names them
#: The per-round lists of a provenance record's variant entry: dropped by a slim record (the
#: asv file keeps the samples), so a record of thousands of points stays under the bot's cap.
PER_ROUND = ("kernel_us", "kernel_us_calls", "ratio", "host_us", "kernel_names")
#: asv's per-parameter-combination columns (one entry per combination, in product order).
PER_COMBO = ("result", "samples", "profile")


@dataclass(frozen=True)
class Plan:
    """Which recorded point each new point takes its samples from, and the new parameters."""

    variants: tuple[str, ...]  # kept, in the suite's order (nvFuser always)
    dtypes: tuple[str, ...]
    shapes: tuple[str, ...]
    source_of: Mapping[Point, Point]  # new point -> recorded point, cycling in order
    size_set: str

    @property
    def points(self) -> int:
        return len(self.source_of)


def _names(raw: Any, where: str) -> list[str]:
    if not isinstance(raw, list):
        raise BadInput(f"{where}: parameter values are not a list")
    out = []
    for text in raw:
        value = ast.literal_eval(text) if isinstance(text, str) else None
        if not isinstance(value, str):
            raise BadInput(f"{where}: parameter {text!r:.60} is not a quoted name")
        out.append(value)
    return out


def _params(row: Mapping[str, Any], where: str) -> list[list[str]]:
    raw = row.get("params")
    if not isinstance(raw, list) or len(raw) != 3:
        raise BadInput(f"{where}: expected 3 parameters (variant, dtype, shape)")
    return [_names(values, where) for values in raw]


def _rows(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    columns, results = data.get("result_columns"), data.get("results")
    if not isinstance(columns, list) or not isinstance(results, dict):
        raise BadInput("not an asv results file (no result_columns/results)")
    return {name: dict(zip(columns, row, strict=False)) for name, row in results.items()}


def plan(
    data: Mapping[str, Any],
    dtypes: Sequence[str],
    shapes: Sequence[str],
    size_set: str,
    variants: Sequence[str] | None = None,
) -> Plan:
    """New points in the suite's order (dtype, then shape), each given the recorded points in
    turn (the recorded ones in their order), so that every recorded point is used alike."""
    recorded: list[Point] | None = None
    all_variants: list[str] = []
    for name, row in _rows(data).items():
        found_variants, found_dtypes, found_shapes = _params(row, name)
        points = [(d, s) for d in found_dtypes for s in found_shapes]
        if recorded is not None and points != recorded:
            raise BadInput(f"{name}: its points differ from the other benchmarks'")
        recorded = points
        all_variants += [v for v in found_variants if v not in all_variants]
    if not recorded:
        raise BadInput("the results hold no benchmark to tile")
    kept = tuple(v for v in all_variants if variants is None or v in variants)
    if REFERENCE not in kept:
        raise ValueError(f"the variants must include {REFERENCE}, the reference")
    unknown = sorted(set(variants or ()) - set(all_variants))
    if unknown:
        raise ValueError(f"variants not in the results: {', '.join(unknown)}")
    new = [(d, s) for d in dtypes for s in shapes]
    source_of = {p: recorded[i % len(recorded)] for i, p in enumerate(new)}
    return Plan(kept, tuple(dtypes), tuple(shapes), source_of, size_set)


def _quoted(values: Sequence[str]) -> list[str]:
    return [repr(v) for v in values]


def _tile_row(row: Mapping[str, Any], columns: Sequence[str], p: Plan, where: str) -> list[Any]:
    variants, dtypes, shapes = _params(row, where)
    index = {c: i for i, c in enumerate(itertools.product(variants, dtypes, shapes))}
    kept = [v for v in variants if v in p.variants]
    combos = [(v, *p.source_of[(d, s)]) for v in kept for d in p.dtypes for s in p.shapes]
    picks = [index[c] for c in combos]
    out: list[Any] = []
    for column in columns:
        value = row.get(column)
        if column == "params":
            value = [_quoted(kept), _quoted(p.dtypes), _quoted(p.shapes)]
        elif isinstance(value, list) and (column in PER_COMBO or column.startswith("stats_")):
            value = [value[i] for i in picks]
        out.append(value)
    while out and out[-1] is None:  # as asv's Results.save writes a row
        out.pop()
    return out


def tile_results(
    data: Mapping[str, Any],
    p: Plan,
    commit: str,
    date_ms: int | None,
    machine: str,
    marker: Mapping[str, Any],
) -> dict[str, Any]:
    """The asv results file of the tiled run (asv's own layout, one more top-level key)."""
    columns = list(data["result_columns"])
    rows = _rows(data)
    out = dict(data)
    out["commit_hash"] = commit
    if date_ms is not None:
        out["date"] = date_ms
    out["params"] = {**dict(data.get("params") or {}), "machine": machine}
    out["results"] = {name: _tile_row(row, columns, p, name) for name, row in rows.items()}
    out[TILED_KEY] = dict(marker)
    return out


def tile_benchmarks(benchmarks: Mapping[str, Any], p: Plan) -> dict[str, Any]:
    """asv's benchmarks.json with each suite benchmark's parameters set to the tiled ones."""
    out: dict[str, Any] = {}
    for name, bench in benchmarks.items():
        if isinstance(bench, dict) and len(bench.get("params") or []) == 3:
            variants = _names(bench["params"][0], name)
            kept = [v for v in variants if v in p.variants]
            bench = {**bench, "params": [_quoted(kept), _quoted(p.dtypes), _quoted(p.shapes)]}
        out[name] = bench
    return out


def tile_provenance(
    record: Mapping[str, Any],
    p: Plan,
    commit: str,
    machine: str,
    marker: Mapping[str, Any],
    *,
    slim: bool = False,
) -> dict[str, Any]:
    """The provenance record of the tiled run: the recorded one, its points renamed; with
    ``slim``, without the per-round lists (the asv file keeps the samples)."""
    recorded = record.get("points")
    if not isinstance(recorded, Mapping):
        raise BadInput("provenance record without points")
    points: dict[str, Any] = {}
    for (dtype, shape), (src_dtype, src_shape) in p.source_of.items():
        entry = recorded.get(f"{src_dtype}/{src_shape}")
        if not isinstance(entry, Mapping):
            raise BadInput(f"provenance record has no point {src_dtype}/{src_shape}")
        entry = {**entry, "dtype": dtype, "shape": shape}
        variants = entry.get("variants")
        if isinstance(variants, Mapping):
            entry["variants"] = {
                v: {k: x for k, x in e.items() if not (slim and k in PER_ROUND)}
                if isinstance(e, Mapping)
                else e
                for v, e in variants.items()
                if v in p.variants
            }
        points[f"{dtype}/{shape}"] = entry
    out = {**record, "commit": commit, "machine": machine, "size_set": p.size_set}
    if isinstance(record.get("variants"), list):
        out["variants"] = [v for v in record["variants"] if v in p.variants]
    out["points"] = points
    out[TILED_KEY] = {
        **marker,
        "slim": slim,
        "points_from": {f"{d}/{s}": f"{sd}/{ss}" for (d, s), (sd, ss) in p.source_of.items()},
    }
    return out
