"""Recorded runs as measurements: the only stand-in for the GPU.

A file of recorded builds maps each build to the real runs that stand for it (an asv results
folder and a commit there, in the order its measurements would come), and measuring a build
copies its next recorded run (asv's results file, ``machine.json``, ``benchmarks.json`` and
the provenance and runner-check records beside it) into the measurement's own folder, exactly
where the GPU would have written it. Nothing is made up: a build with no recorded run left
cannot be measured, and says so.

    {"schema": "perfbot-bisect-recorded/1", "package": "thunder",
     "builds": {"lightning-thunder==0.2.7.dev20251102": [
        {"results": "../../data/h200-thunder-nightlies/results", "commit": "69d61fb1",
         "note": "why this run stands for this build"}]}}

Paths are relative to the file.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.bisect.measure import Measured, MeasureError
from bot.bisect.timeline import Build
from bot.results.folders import commit_files
from bot.results.provenance import load_provenance
from bot.results.strict_json import read_document
from bot.results.types import BadInput

SCHEMA = "perfbot-bisect-recorded/1"


@dataclass(frozen=True)
class RecordedRun:
    results: Path
    commit: str
    note: str = ""


@dataclass(frozen=True)
class RecordedMeasurer:
    package: str
    builds: Mapping[str, tuple[RecordedRun, ...]]

    def measure(self, build: Build, attempt: int, dest: Path) -> Measured:
        runs = self.builds.get(build.name, ())
        if attempt > len(runs):
            raise MeasureError(
                f"{build.name}: no recorded run {attempt} (the recorded builds hold "
                f"{len(runs)} run(s) of it)"
            )
        run = runs[attempt - 1]
        found = commit_files(run.results, run.commit)
        if len(found) != 1:
            raise BadInput(f"{run.results}: commit {run.commit} is on {len(found)} machines, not 1")
        ((machine, (full, path)),) = found.items()
        target = dest / machine
        target.mkdir(parents=True)
        for name in ("benchmarks.json",):
            if (run.results / name).is_file():
                shutil.copy2(run.results / name, dest / name)
        shutil.copy2(path.parent / "machine.json", target / "machine.json")
        shutil.copy2(path, target / path.name)
        for suffix in (".provenance.jsonl", ".hygiene.jsonl"):
            side = path.parent / f"{full}{suffix}"
            if side.is_file():
                shutil.copy2(side, target / side.name)
        wall = _recorded_wall(target / f"{full}.provenance.jsonl", full)
        return Measured(dest, full, machine, wall)


def _recorded_wall(record: Path, full: str) -> float | None:
    """How long the recorded measurement took, by its provenance record (start to end)."""
    prov = load_provenance(record, full, per_round=False)
    start, end = (prov.text("started_at"), prov.text("finished_at")) if prov else (None, None)
    if start is None or end is None:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def read_recorded(path: Path) -> RecordedMeasurer:
    data: Any = read_document(path, 1024 * 1024, "recorded builds file")
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        raise BadInput(f"{path}: not a recorded-builds file (schema is not {SCHEMA})")
    builds = data.get("builds")
    if not isinstance(builds, Mapping) or not isinstance(data.get("package"), str):
        raise BadInput(f"{path}: needs a package and a builds object")
    out: dict[str, tuple[RecordedRun, ...]] = {}
    for name, runs in builds.items():
        if not isinstance(runs, list) or not runs:
            raise BadInput(f"{path}: build {str(name)[:80]!r} needs a list of recorded runs")
        parsed = []
        for run in runs:
            if not isinstance(run, Mapping) or not all(
                isinstance(run.get(k), str) for k in ("results", "commit")
            ):
                raise BadInput(f"{path}: a run of {str(name)[:80]!r} needs results and commit")
            parsed.append(
                RecordedRun(path.parent / run["results"], run["commit"], str(run.get("note", "")))
            )
        out[str(name)] = tuple(parsed)
    return RecordedMeasurer(str(data["package"]), out)
