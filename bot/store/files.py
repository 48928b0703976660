"""One run's files as the store sees them: checked with the bot's readers, fingerprinted, stripped.

A run enters the store only when the bot itself can read it (bot/results: the asv file, its
provenance record, its runner checks), so that the history never holds what a later verdict or
the website would refuse. Its fingerprint is the measurement (asv's values and per-round
samples, the provenance record without per-call samples), not the bytes: asv writes its own
timings into the results file, so storing one merge twice gives two files that mean the same.
Stripping removes only ``kernel_us_calls`` from the provenance record (docs/DATA.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.results.asv_file import read_json
from bot.results.folders import commit_files
from bot.results.limits import MAX_PROVENANCE_BYTES, read_capped
from bot.results.locate import load_run
from bot.results.strict_json import decode
from bot.results.types import BadInput

#: asv's columns that hold the measurement; the others are asv's own bookkeeping (when it
#: stored, how long it took) and differ between two stores of the same record.
MEASURED_COLUMNS = ("params", "result", "samples")
PER_CALL = "kernel_us_calls"


@dataclass(frozen=True)
class Run:
    """A run that passed the readers, with what the store copies and records."""

    machine: str
    commit: str
    date_ms: int
    results_file: Path
    provenance: Path
    hygiene: Path | None
    machine_json: Path
    benchmarks_json: Path
    fingerprint: str


def strip_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record without per-call samples; every other field as it was."""
    out = dict(record)
    points = record.get("points")
    if isinstance(points, Mapping):
        new_points = {}
        for key, point in points.items():
            if isinstance(point, Mapping) and isinstance(point.get("variants"), Mapping):
                variants = {
                    name: {k: v for k, v in entry.items() if k != PER_CALL}
                    if isinstance(entry, Mapping)
                    else entry
                    for name, entry in point["variants"].items()
                }
                point = {**point, "variants": variants}
            new_points[key] = point
        out["points"] = new_points
    return out


def _records(path: Path) -> list[dict[str, Any]]:
    text = read_capped(path, MAX_PROVENANCE_BYTES, "provenance record").decode("utf-8")
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            record = decode(path, line, number)
            if not isinstance(record, dict):
                raise BadInput(f"{path} line {number}: not a JSON object")
            records.append(record)
    if not records:
        raise BadInput(f"{path}: empty provenance file")
    return records


def stripped_text(path: Path) -> str:
    """The provenance file as it is once stripped (one JSON object a line, as before)."""
    return "".join(json.dumps(strip_record(r), sort_keys=True) + "\n" for r in _records(path))


def fingerprint(results_file: Path, provenance: Path) -> str:
    data = read_json(results_file)
    columns = data.get("result_columns", [])
    benches = {
        name: {c: v for c, v in zip(columns, row, strict=False) if c in MEASURED_COLUMNS}
        for name, row in sorted(data.get("results", {}).items())
    }
    doc = {
        "commit": data.get("commit_hash"),
        "asv": benches,
        "provenance": [strip_record(r) for r in _records(provenance)],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def _point_names(record: Mapping[str, Any]) -> set[str]:
    points = record.get("points")
    if not isinstance(points, Mapping):
        return set()
    return {str(k) for k in points}


def read_run(results: Path, commit: str, machine: str, min_samples: int) -> Run:
    """The run of `commit` on `machine` in the asv results folder `results`, or BadInput.

    Corrupt, truncated or partial: a file the readers refuse, no provenance record, a record
    for another commit or machine, or a record and an asv file that hold different points.
    """
    found = commit_files(results, commit)
    if machine not in found:
        where = ", ".join(sorted(found)) or "no machine"
        raise BadInput(f"{results}: no results for commit {commit} on machine {machine} ({where})")
    full, path = found[machine]
    run = load_run(path, machine, full, min_samples)
    if run.provenance is None:
        raise BadInput(f"{path.parent}/{full}.provenance.jsonl: missing (the store keeps both)")
    record = run.provenance.record
    if record.get("machine") not in (None, machine):
        raise BadInput(f"{run.provenance.path}: record is for machine {record.get('machine')!r}")
    in_asv = {f"{k.dtype}/{k.shape}" for k in run.points}
    in_record = _point_names(record)
    if in_asv != in_record:
        only_asv, only_record = sorted(in_asv - in_record), sorted(in_record - in_asv)
        raise BadInput(
            f"{path}: partial run: the asv file and the provenance record hold different "
            f"points (only in asv: {', '.join(only_asv[:5]) or 'none'}; only in the record: "
            f"{', '.join(only_record[:5]) or 'none'})"
        )
    if run.date is None or run.date <= 0:
        raise BadInput(f"{path}: no commit date (asv's 'date')")
    benchmarks = results / "benchmarks.json"
    if not benchmarks.is_file():
        raise BadInput(f"{benchmarks}: missing (asv's benchmark list; the website needs it)")
    listed = decode(
        benchmarks,
        read_capped(benchmarks, MAX_PROVENANCE_BYTES, "benchmark list").decode(
            "utf-8", errors="replace"
        ),
    )
    if not isinstance(listed, dict):
        raise BadInput(f"{benchmarks}: not asv's benchmark list (not a JSON object)")
    hygiene = path.parent / f"{full}.hygiene.jsonl"
    return Run(
        machine=machine,
        commit=full,
        date_ms=run.date,
        results_file=path,
        provenance=run.provenance.path,
        hygiene=hygiene if hygiene.is_file() else None,
        machine_json=path.parent / "machine.json",
        benchmarks_json=benchmarks,
        fingerprint=fingerprint(path, run.provenance.path),
    )
