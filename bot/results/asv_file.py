"""Parse asv 0.6 results files (docs/DATA.md) into :class:`~bot.results.types.Point` records.

asv's own loader (``asv.results.Results.load``) is not used on purpose: it logs and skips bad
files, while the bot must stop with a message that names the file, the benchmark and the point.
The layout read here is asv's ``Results.save``: ``result_columns`` names the columns of each row,
parameters are Python reprs, and results are stored in ``itertools.product(*params)`` order.
In ``result``, ``null`` is a failed point and ``NaN`` a skipped one; both are "no data", never
fatal. Anything else that is wrong is a :class:`~bot.results.types.BadInput`.
Only :func:`read_json` touches the disk; the rest are pure functions of the decoded dict.
"""

from __future__ import annotations

import ast
import itertools
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.results import names
from bot.results.limits import MAX_POINTS, MAX_RESULTS_BYTES, MAX_SAMPLES
from bot.results.strict_json import read_document
from bot.results.types import (
    CATALOG_SUITE,
    DEFAULT_FUSION,
    REFERENCE,
    SUITE,
    BadInput,
    Point,
    PointKey,
    bench_names,
    catalog_fusions,
)

_Row = dict[str, Any]
_Combo = tuple[str, str, str]


def read_json(path: Path) -> dict[str, Any]:
    """An asv results file (size capped), checked down to the keys the reader relies on."""
    data = read_document(path, MAX_RESULTS_BYTES, "results file")
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not an asv results file (top level is not an object)")
    if data.get("version") != 2:
        raise BadInput(f"{path}: asv results format version {data.get('version')!r}, expected 2")
    return data


#: What each parameter position is, and the check its names pass (bot/results/names.py).
_PARAMETERS = (names.variant, names.dtype, names.shape)


def _param_values(path: Path, bench: str, raw: Any) -> list[list[str]]:
    where = f"{path}: {bench}"
    if not isinstance(raw, list) or len(raw) != 3:
        raise BadInput(f"{where}: expected 3 parameters (variant, dtype, shape), got {raw!r:.200}")
    out: list[list[str]] = []
    for values, accept in zip(raw, _PARAMETERS, strict=True):
        if not isinstance(values, list):
            raise BadInput(f"{where}: parameter values are not a list: {values!r:.200}")
        parsed = []
        for text in values:
            try:
                value = ast.literal_eval(text) if isinstance(text, str) else None
            except (ValueError, SyntaxError):
                value = None
            if not isinstance(value, str):
                raise BadInput(f"{where}: parameter {text!r:.80} is not a quoted name")
            parsed.append(accept(value, where))
        out.append(parsed)
    return out


def _rows(path: Path, data: Mapping[str, Any]) -> dict[str, _Row]:
    columns = data.get("result_columns")
    results = data.get("results")
    if not isinstance(columns, list) or not isinstance(results, dict):
        raise BadInput(f"{path}: not an asv results file (no result_columns/results)")
    rows: dict[str, _Row] = {}
    for name, row in results.items():
        if not isinstance(row, list):
            raise BadInput(f"{path}: {name}: row is not a list")
        rows[name] = dict(zip(columns, row, strict=False))  # asv drops trailing nulls
    return rows


def _where(path: Path, bench: str, key: _Combo) -> str:
    return f"{path}: {bench} at variant={key[0]}, dtype={key[1]}, shape={key[2]}"


def _samples(where: str, raw: Any, min_samples: int) -> tuple[float, ...]:
    if not isinstance(raw, list):
        raise BadInput(f"{where}: no samples (was asv run with --record-samples?)")
    if len(raw) > MAX_SAMPLES:
        raise BadInput(
            f"{where}: {len(raw)} samples, over the limit of {MAX_SAMPLES} a point "
            "(bot/results/limits.py)"
        )
    for i, v in enumerate(raw):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok or not math.isfinite(v) or v <= 0:
            raise BadInput(f"{where}: sample {i} is {v!r}, not a finite positive number")
    if len(raw) < min_samples:
        raise BadInput(f"{where}: {len(raw)} samples, at least {min_samples} needed")
    return tuple(float(v) for v in raw)


def _checked(
    path: Path, bench: str, combo: _Combo, raw: Any, min_samples: int
) -> tuple[float, ...]:
    """:func:`_samples`, building its message only when there is one to give: a sweep has
    tens of thousands of sample lists, and the usual one (floats, all finite and positive)
    passes two plain scans."""
    # Floats only (map and set run in C); then no NaN and no infinity (either makes the sum
    # one: an overflowing sum of finite values takes the plain scan, which accepts them); then
    # all positive (min is exact once no NaN is there).
    if (
        isinstance(raw, list)
        and min_samples <= len(raw) <= MAX_SAMPLES
        and raw
        and set(map(type, raw)) == {float}
        and math.isfinite(sum(raw))
        and min(raw) > 0.0
    ):
        return tuple(raw)
    return _samples(_where(path, bench, combo), raw, min_samples)


def _status(value: Any) -> str | None:
    """None when the point has data, else why not (asv: null = failed, NaN = skipped)."""
    if value is None:
        return "failed"
    if isinstance(value, float) and math.isnan(value):
        return "skipped"
    return None


def _table(
    path: Path, rows: Mapping[str, _Row], bench: str, required: bool = False
) -> dict[_Combo, _Row]:
    """Per point of one benchmark: result, samples; empty if the benchmark is absent."""
    row = rows.get(bench)
    if row is None:
        if required:
            raise BadInput(f"{path}: benchmark {bench} is missing")
        return {}
    params = _param_values(path, bench, row.get("params"))
    n = math.prod(len(values) for values in params)
    if n > MAX_POINTS:
        raise BadInput(
            f"{path}: {bench}: {n} parameter combinations, over the limit of {MAX_POINTS} "
            "(bot/results/limits.py)"
        )
    combos = [(v, d, s) for v, d, s in itertools.product(*params)]
    result = row.get("result")
    samples = row.get("samples")
    result = [None] * n if result is None else result
    samples = [None] * n if samples is None else samples
    if not isinstance(result, list) or not isinstance(samples, list):
        raise BadInput(f"{path}: {bench}: result/samples are not lists")
    for column, values in (("result", result), ("samples", samples)):
        if len(values) != n:
            raise BadInput(
                f"{path}: {bench}: {len(values)} entries in '{column}' for {n} parameter "
                "combinations"
            )
    return {c: {"result": r, "samples": s} for c, r, s in zip(combos, result, samples, strict=True)}


def _scalar(path: Path, bench: str, combo: _Combo, entry: _Row | None) -> float | None:
    if entry is None or _status(entry["result"]) is not None:
        return None
    value = entry["result"]
    if type(value) is float and 0.0 <= value < math.inf:
        return value
    where = _where(path, bench, combo)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{where}: value {value!r:.80} is not a finite number")
    if value < 0:
        raise BadInput(f"{where}: value {value!r} is negative")
    return float(value)


def _paired(
    path: Path,
    combo: _Combo,
    ratio: tuple[float, ...],
    kernel_entries: Mapping[str, _Row | None],
    bench: str,
) -> None:
    """Ratio sample i and kernel sample i must come from the same round (docs/DATA.md): the
    contender's kernel times and nvFuser's, each named when it is the one that differs."""
    for variant, entry in kernel_entries.items():
        if entry is None or _status(entry["result"]) is not None:
            continue
        n = len(entry["samples"]) if isinstance(entry["samples"], list) else 0
        if n != len(ratio):
            where = _where(path, bench, combo)
            raise BadInput(
                f"{where}: {len(ratio)} ratio samples but {n} kernel-time samples of {variant}: "
                "rounds are not paired"
            )


def fusions_in(rows: Mapping[str, Any], path: Path) -> list[str]:
    """The fusions a results file holds: RMSNorm backward (bench_rmsnorm_bwd, also when the
    file holds nothing: its benchmarks are then named missing), then each class of
    bench_fusions by name, each a fusion of the catalog (bot/results/names.py) or BadInput."""
    prefix = f"{CATALOG_SUITE}."
    for name in rows:  # every class of the module, however its name is cut
        if name.startswith(prefix):
            names.fusion(name[len(prefix) :].partition(".")[0], f"{path}: benchmark {prefix}")
    catalog = catalog_fusions(rows)
    default = any(name.startswith(f"{SUITE}.") for name in rows) or not catalog
    return [DEFAULT_FUSION] * default + catalog


def parse_points(path: Path, data: Mapping[str, Any], min_samples: int) -> dict[PointKey, Point]:
    """Every (variant, dtype, shape) of every fusion of the results file; see the module
    docstring for no-data."""
    rows = _rows(path, data)
    points: dict[PointKey, Point] = {}
    for fusion in fusions_in(rows, path):
        points.update(_fusion_points(path, rows, fusion, min_samples))
    return points


def _fusion_points(
    path: Path, rows: Mapping[str, _Row], fusion: str, min_samples: int
) -> dict[PointKey, Point]:
    names = bench_names(fusion)
    ratio = _table(path, rows, names.ratio, required=True)
    kernel = _table(path, rows, names.kernel, required=True)
    host, bandwidth, count, compile_ = (
        _table(path, rows, b) for b in (names.host, names.bandwidth, names.kernels, names.compile)
    )
    points: dict[PointKey, Point] = {}
    for combo in sorted(set(ratio) | set(kernel)):
        key = PointKey(*combo, fusion)
        k_entry, h_entry = kernel.get(combo), host.get(combo)
        k_status = "missing" if k_entry is None else _status(k_entry["result"])
        kernel_s = None
        if k_entry is not None and k_status is None:
            kernel_s = _checked(path, names.kernel, combo, k_entry["samples"], min_samples)
        host_s = None
        if h_entry is not None and _status(h_entry["result"]) is None:
            host_s = _checked(path, names.host, combo, h_entry["samples"], 1)
        ratio_s, no_data = None, k_status
        if key.variant != REFERENCE:
            r_entry = ratio.get(combo)
            no_data = "missing" if r_entry is None else _status(r_entry["result"])
            if r_entry is not None and no_data is None:
                ratio_s = _checked(path, names.ratio, combo, r_entry["samples"], min_samples)
                reference = kernel.get((REFERENCE, key.dtype, key.shape))
                entries = {key.variant: k_entry, REFERENCE: reference}
                _paired(path, combo, ratio_s, entries, names.ratio)
        points[key] = Point(
            key=key,
            ratio=ratio_s,
            kernel_s=kernel_s,
            host_s=host_s,
            bandwidth_pct=_scalar(path, names.bandwidth, combo, bandwidth.get(combo)),
            kernel_count=_scalar(path, names.kernels, combo, count.get(combo)),
            compile_s=_scalar(path, names.compile, combo, compile_.get(combo)),
            no_data=no_data,
        )
    return points
