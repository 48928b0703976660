"""Read asv 0.6 results (docs/DATA.md) into typed, immutable points.

asv's own loader (``asv.results.Results.load``) is not used on purpose: it logs and skips bad
files, while the bot must stop with a message that names the file, the benchmark and the point.
The layout read here is asv's ``Results.save``: ``result_columns`` names the columns of each row,
parameters are Python reprs, and results are stored in ``itertools.product(*params)`` order.
In ``result``, ``null`` is a failed point and ``NaN`` a skipped one; both are "no data", never
fatal. Anything else that is wrong is a :class:`BadInput`.
"""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BadInput",
    "CommitInfo",
    "CommitResults",
    "Point",
    "PointKey",
    "Provenance",
    "list_commits",
    "load_commit",
    "load_pair",
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
DEFAULT_MIN_SAMPLES = 10


@dataclass(frozen=True, order=True)
class PointKey:
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
class CommitResults:
    machine: str
    commit: str
    path: Path
    points: Mapping[PointKey, Point]
    provenance: Provenance | None = None
    date: int | None = field(default=None, compare=False)

    def contenders(self) -> list[PointKey]:
        """Every point compared against nvFuser, in a stable order."""
        return sorted(k for k in self.points if k.variant != REFERENCE)

    def reference(self, key: PointKey) -> Point | None:
        return self.points.get(PointKey(REFERENCE, key.dtype, key.shape))


_Row = dict[str, Any]
_Combo = tuple[str, str, str]
PROVENANCE_SCHEMA = "rmsnorm-bwd-provenance/1"


class BadInput(Exception):
    """The results cannot be used; the message names the file, benchmark and point."""


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


def _decode(path: Path, text: str, line: int | None = None) -> Any:
    where = f"{path}" if line is None else f"{path} line {line}"
    try:
        return json.loads(text)
    except RecursionError:
        raise BadInput(f"{where}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        # The parser hit the end of the text: the file was cut short, not scrambled.
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise BadInput(f"{where}: truncated JSON (ends after {len(text)} characters)") from None
        raise BadInput(
            f"{where}: corrupt JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def read_json(path: Path) -> dict[str, Any]:
    """An asv results file, checked down to the keys the reader relies on."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise BadInput(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text") from None
    data = _decode(path, text)
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not an asv results file (top level is not an object)")
    if data.get("version") != 2:
        raise BadInput(f"{path}: asv results format version {data.get('version')!r}, expected 2")
    return data


def load_provenance(path: Path, commit: str) -> Provenance | None:
    if not path.exists():
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read provenance: {exc}") from None
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise BadInput(f"{path}: empty provenance file")
    number, line = numbered[-1]
    record = _decode(path, line, number)
    if not isinstance(record, dict) or record.get("schema") != PROVENANCE_SCHEMA:
        raise BadInput(f"{path} line {number}: not a {PROVENANCE_SCHEMA} record")
    if isinstance(record.get("commit"), str) and record["commit"] != commit:
        raise BadInput(f"{path} line {number}: record is for commit {record['commit']}")
    return Provenance(path, number, record)


_SHA = re.compile(r"[0-9a-f]{4,40}")
_MACHINE = re.compile(r"[A-Za-z0-9_.+-]{1,100}")


def _machine_dirs(results_dir: Path) -> list[Path]:
    """asv's machine directories (those with a machine.json), names checked: they end up in
    the comment, the issue key and URLs."""
    machines = sorted(d for d in results_dir.iterdir() if (d / "machine.json").is_file())
    if not machines:
        raise BadInput(f"{results_dir}: no asv machine directories (no */machine.json)")
    for mdir in machines:
        if not _MACHINE.fullmatch(mdir.name):
            raise BadInput(
                f"{results_dir}: machine directory {mdir.name!r:.120} is not a plain name"
            )
    return machines


def find_commit_files(results_dir: Path, sha: str) -> dict[str, tuple[str, Path]]:
    """Per machine, the full hash and results file of the one commit ``sha`` abbreviates.

    asv names files ``<sha8>-<env>.json``; the full hash is inside, so a prefix longer than 8
    is checked against the file. A machine is a subdirectory with a ``machine.json``.
    """
    sha = sha.lower()
    if not _SHA.fullmatch(sha):
        raise BadInput(f"{sha!r} is not a commit hash (4 to 40 hex digits)")
    if not results_dir.is_dir():
        raise BadInput(f"{results_dir}: results directory does not exist")
    machines = _machine_dirs(results_dir)
    found: dict[str, tuple[str, Path]] = {}
    for mdir in machines:
        hits: dict[str, list[Path]] = {}
        for path in sorted(mdir.glob("*.json")):
            short = path.name.split("-", 1)[0]
            if path.name == "machine.json" or not short.startswith(sha[:8]):
                continue
            full = sha if len(sha) == 40 else None
            if full is None:
                commit = read_json(path).get("commit_hash")
                full = commit if isinstance(commit, str) else ""
            if full.startswith(sha):
                hits.setdefault(full, []).append(path)
        if len(hits) > 1:
            raise BadInput(f"{mdir}: commit prefix {sha} is ambiguous: {', '.join(sorted(hits))}")
        for full, paths in hits.items():
            if len(paths) > 1:
                names = ", ".join(p.name for p in paths)
                raise BadInput(f"{mdir}: several results files for commit {full}: {names}")
            found[mdir.name] = (full, paths[0])
    if not found:
        raise BadInput(f"{results_dir}: no results for commit {sha}")
    return found


def _param_values(path: Path, bench: str, raw: Any) -> list[list[str]]:
    where = f"{path}: {bench}"
    if not isinstance(raw, list) or len(raw) != 3:
        raise BadInput(f"{where}: expected 3 parameters (variant, dtype, shape), got {raw!r:.200}")
    out: list[list[str]] = []
    for values in raw:
        if not isinstance(values, list):
            raise BadInput(f"{where}: parameter values are not a list: {values!r:.200}")
        parsed = []
        for text in values:
            try:
                value = ast.literal_eval(text) if isinstance(text, str) else None
            except (ValueError, SyntaxError):
                value = None
            if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", value):
                raise BadInput(f"{where}: parameter {text!r:.80} is not a quoted plain name")
            parsed.append(value)
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
    for i, v in enumerate(raw):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if not ok or not math.isfinite(v) or v <= 0:
            raise BadInput(f"{where}: sample {i} is {v!r}, not a finite positive number")
    if len(raw) < min_samples:
        raise BadInput(f"{where}: {len(raw)} samples, at least {min_samples} needed")
    return tuple(float(v) for v in raw)


def _status(value: Any) -> str | None:
    """None when the point has data, else why not (asv: null = failed, NaN = skipped)."""
    if value is None:
        return "failed"
    if isinstance(value, float) and math.isnan(value):
        return "skipped"
    return None


def _table(path: Path, rows: Mapping[str, _Row], bench: str) -> dict[_Combo, _Row]:
    """Per point of one benchmark: result, samples; empty if the benchmark is absent."""
    row = rows.get(bench)
    if row is None:
        if bench in REQUIRED:
            raise BadInput(f"{path}: benchmark {bench} is missing")
        return {}
    params = _param_values(path, bench, row.get("params"))
    combos = [(v, d, s) for v, d, s in itertools.product(*params)]
    result = row.get("result")
    samples = row.get("samples")
    n = len(combos)
    result = [None] * n if result is None else result
    samples = [None] * n if samples is None else samples
    if not isinstance(result, list) or not isinstance(samples, list):
        raise BadInput(f"{path}: {bench}: result/samples are not lists")
    if len(result) != n or len(samples) != n:
        raise BadInput(f"{path}: {bench}: {len(result)} results for {n} parameter combinations")
    return {c: {"result": r, "samples": s} for c, r, s in zip(combos, result, samples, strict=True)}


def _scalar(where: str, entry: _Row | None) -> float | None:
    if entry is None or _status(entry["result"]) is not None:
        return None
    value = entry["result"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadInput(f"{where}: value {value!r:.80} is not a finite number")
    if value < 0:
        raise BadInput(f"{where}: value {value!r} is negative")
    return float(value)


def _paired(where: str, ratio: tuple[float, ...], kernel_entries: Sequence[_Row | None]) -> None:
    """Ratio sample i and kernel sample i must come from the same round (docs/DATA.md)."""
    for entry in kernel_entries:
        if entry is None or _status(entry["result"]) is not None:
            continue
        n = len(entry["samples"]) if isinstance(entry["samples"], list) else 0
        if n != len(ratio):
            raise BadInput(
                f"{where}: {len(ratio)} ratio samples but {n} kernel-time samples: "
                "rounds are not paired"
            )


def parse_points(path: Path, data: Mapping[str, Any], min_samples: int) -> dict[PointKey, Point]:
    """Every (variant, dtype, shape) of the results file; see the module docstring for no-data."""
    rows = _rows(path, data)
    ratio, kernel = _table(path, rows, BENCH_RATIO), _table(path, rows, BENCH_KERNEL)
    host, bandwidth, count, compile_ = (
        _table(path, rows, b) for b in (BENCH_HOST, BENCH_BANDWIDTH, BENCH_COUNT, BENCH_COMPILE)
    )
    points: dict[PointKey, Point] = {}
    for combo in sorted(set(ratio) | set(kernel)):
        key = PointKey(*combo)
        k_entry, h_entry = kernel.get(combo), host.get(combo)
        k_status = "missing" if k_entry is None else _status(k_entry["result"])
        kernel_s = None
        if k_entry is not None and k_status is None:
            kernel_s = _samples(_where(path, BENCH_KERNEL, combo), k_entry["samples"], min_samples)
        host_s = None
        if h_entry is not None and _status(h_entry["result"]) is None:
            host_s = _samples(_where(path, BENCH_HOST, combo), h_entry["samples"], 1)
        ratio_s, no_data = None, k_status
        if key.variant != REFERENCE:
            r_entry = ratio.get(combo)
            no_data = "missing" if r_entry is None else _status(r_entry["result"])
            if r_entry is not None and no_data is None:
                where = _where(path, BENCH_RATIO, combo)
                ratio_s = _samples(where, r_entry["samples"], min_samples)
                _paired(where, ratio_s, (k_entry, kernel.get((REFERENCE, key.dtype, key.shape))))
        points[key] = Point(
            key=key,
            ratio=ratio_s,
            kernel_s=kernel_s,
            host_s=host_s,
            bandwidth_pct=_scalar(_where(path, BENCH_BANDWIDTH, combo), bandwidth.get(combo)),
            kernel_count=_scalar(_where(path, BENCH_COUNT, combo), count.get(combo)),
            compile_s=_scalar(_where(path, BENCH_COMPILE, combo), compile_.get(combo)),
            no_data=no_data,
        )
    return points


def load_commit(
    results_dir: Path,
    sha: str,
    machine: str | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> CommitResults:
    """Results of one commit on one machine (the only machine that has it, or ``machine``)."""
    found = find_commit_files(results_dir, sha)
    if machine is not None:
        found = {m: f for m, f in found.items() if m == machine}
        if not found:
            raise BadInput(f"{results_dir}: no results for commit {sha} on machine {machine}")
    if len(found) > 1:
        raise BadInput(
            f"{results_dir}: commit {sha} has results on several machines "
            f"({', '.join(sorted(found))}): choose one with --machine"
        )
    ((mach, (full, path)),) = found.items()
    return _load(path, mach, full, min_samples)


def _load(path: Path, machine: str, full: str, min_samples: int) -> CommitResults:
    data = read_json(path)
    if data.get("commit_hash") != full:
        raise BadInput(f"{path}: holds commit {data.get('commit_hash')!r}, expected {full}")
    date = data.get("date")
    return CommitResults(
        machine=machine,
        commit=full,
        path=path,
        points=parse_points(path, data, min_samples),
        provenance=load_provenance(path.parent / f"{full}.provenance.jsonl", full),
        date=date if isinstance(date, int) else None,
    )


def load_pair(
    results_dir: Path,
    base: str,
    head: str,
    machine: str | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> tuple[CommitResults, CommitResults]:
    """Base and head on one machine that has both."""
    b_found, h_found = find_commit_files(results_dir, base), find_commit_files(results_dir, head)
    common = sorted(set(b_found) & set(h_found))
    if machine is not None:
        common = [m for m in common if m == machine]
    if not common:
        where = "" if machine is None else f" on machine {machine}"
        raise BadInput(
            f"{results_dir}: no machine has results for both base {base} "
            f"({', '.join(sorted(b_found))}) and head {head} ({', '.join(sorted(h_found))}){where}"
        )
    if len(common) > 1:
        raise BadInput(
            f"{results_dir}: base and head both have results on machines "
            f"{', '.join(common)}: choose one with --machine"
        )
    mach = common[0]
    return (
        _load(b_found[mach][1], mach, b_found[mach][0], min_samples),
        _load(h_found[mach][1], mach, h_found[mach][0], min_samples),
    )


@dataclass(frozen=True)
class CommitInfo:
    machine: str
    commit: str
    date: int
    thunder_variant: str | None


def list_commits(results_dir: Path) -> list[CommitInfo]:
    """Every (machine, commit) with results, oldest commit date first."""
    if not results_dir.is_dir():
        raise BadInput(f"{results_dir}: results directory does not exist")
    out = []
    for mdir in _machine_dirs(results_dir):
        for path in sorted(mdir.glob("*.json")):
            if path.name == "machine.json":
                continue
            data = read_json(path)
            full, date = data.get("commit_hash"), data.get("date")
            if not isinstance(full, str):
                raise BadInput(f"{path}: no commit_hash")
            prov = load_provenance(mdir / f"{full}.provenance.jsonl", full)
            variant = prov.text("thunder_variant") if prov else None
            out.append(CommitInfo(mdir.name, full, date if isinstance(date, int) else 0, variant))
    return sorted(out, key=lambda c: (c.date, c.machine, c.commit))


def compared_keys(base: CommitResults, head: CommitResults) -> Sequence[PointKey]:
    """Contender points present on either side (a point on one side only is "no data")."""
    return sorted(set(base.contenders()) | set(head.contenders()))
