"""The shards folder of one commit: a file a point, a file a shard run, and their merge.

``<results>/<machine>/<commit>.shards/`` holds

- ``point-<dtype>-<MxN>.json``: one measured point, written (atomically) the moment it is
  measured;
- ``run-<id>.json``: one shard process's header (suite settings, GPU, versions, which points
  it measures, when, on which host), written with ``finished`` false before its first point
  and again when the process ends: a shard killed half-way keeps the points it finished and a
  re-run measures only the rest; a point with no header at all (a process of an older
  worker, killed) is measured again, and merge never sees a point whose settings no header
  states;
- ``hygiene-<id>.jsonl``: that process's runner checks (benchmarks/runner_check.py).

``merge`` turns the folder into the one provenance record per commit that asv stores
(docs/DATA.md), after checking that every point is there and that every run measured the
same thing the same way: a merged record must mean what an unsharded run would.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.engine.session import SCHEMA

POINT_SCHEMA = "rmsnorm-bwd-shard-point/1"
RUN_SCHEMA = "rmsnorm-bwd-shard-run/1"
#: What every run of one commit must share for their points to be one measurement.
SETTINGS = (
    "size_set",
    "rounds",
    "calls_per_sample",
    "context_calls_per_sample",
    "thunder_variant",
    "variants",
    "versions",
    "under_test",
    "suite_digest",
)
#: The GPU facts that must agree (a shard may run on another runner, of the same kind).
GPU_KIND = ("name", "capability", "memory_bytes", "sm_count", "cuda", "driver")


class MissingPoints(Exception):
    """The merge lacks points: it must not pass for the whole set."""


class Disagree(Exception):
    """Runs of one commit measured differently: their points are not one measurement."""


def shards_dir(results: Path, machine: str, commit: str) -> Path:
    return results / machine / f"{commit}.shards"


def point_file(folder: Path, key: str) -> Path:
    dtype, _, shape = key.partition("/")
    return folder / f"point-{dtype}-{shape}.json"


def write_text_atomic(path: Path, text: str) -> None:
    """Whole or not at all: a killed process leaves the old file or none, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, doc: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(doc, sort_keys=True) + "\n")


def write_point(folder: Path, key: str, point: dict[str, Any], run_id: str) -> None:
    write_json_atomic(
        point_file(folder, key),
        {
            "schema": POINT_SCHEMA,
            "key": key,
            "run": run_id,
            "point": point,
        },
    )


def read_points(folder: Path) -> dict[str, dict[str, Any]]:
    """Every point file of the folder, as ``key -> file doc``."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("point-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("schema") != POINT_SCHEMA or point_file(folder, doc["key"]) != path:
            raise ValueError(f"{path}: not a {POINT_SCHEMA} file for its name")
        found[doc["key"]] = doc
    return found


def measured(points: dict[str, dict[str, Any]]) -> set[str]:
    """Points that need no re-measuring: a point-level error (an exception) is retried."""
    return {k for k, doc in points.items() if "error" not in doc["point"]}


def done(folder: Path) -> set[str]:
    """The points of ``folder`` a shard run skips: measured without an error by a process
    whose header states its settings (finished or killed after its first point). Points
    with no header are measured again, since merge refuses them."""
    if not folder.is_dir():
        return set()
    headed = {r["id"] for r in read_runs(folder)}
    points = read_points(folder)
    return {k for k in measured(points) if points[k]["run"] in headed}


def read_runs(folder: Path) -> list[dict[str, Any]]:
    runs = []
    for path in sorted(folder.glob("run-*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("schema") != RUN_SCHEMA:
            raise ValueError(f"{path}: not a {RUN_SCHEMA} file")
        runs.append(doc)
    return sorted(runs, key=lambda r: r["header"]["started_at"])


def disagreement(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """How two run headers differ in what makes their points comparable, or None."""
    for key in SETTINGS:
        if a.get(key) != b.get(key):
            return f"{key}: {a.get(key)!r} vs {b.get(key)!r}"
    for key in GPU_KIND:
        if a["gpu"].get(key) != b["gpu"].get(key):
            return f"gpu {key}: {a['gpu'].get(key)!r} vs {b['gpu'].get(key)!r}"
    return None


def merge(folder: Path, expected: list[str]) -> dict[str, Any]:
    """The one provenance record of the commit, from its shard runs and point files."""
    runs = read_runs(folder)
    if not runs:
        raise MissingPoints(f"{folder}: no finished shard run (run-*.json)")
    first = runs[0]["header"]
    for run in runs[1:]:
        why = disagreement(first, run["header"])
        if why:
            raise Disagree(f"run {run['id']} differs from run {runs[0]['id']}: {why}")
    points = read_points(folder)
    by_run = {r["id"] for r in runs}
    orphans = sorted(k for k, doc in points.items() if doc["run"] not in by_run)
    if orphans:  # measured by a process that never wrote its header: settings unknown
        raise Disagree(f"points from a run with no header (re-run its shard): {', '.join(orphans)}")
    missing = [k for k in expected if k not in measured(points)]
    if missing:
        raise MissingPoints(
            f"{len(missing)} of {len(expected)} points missing: {', '.join(missing)}"
        )
    return {
        **first,
        "schema": SCHEMA,
        "started_at": min(r["header"]["started_at"] for r in runs),
        "finished_at": max(r["header"]["finished_at"] for r in runs),
        "points": {k: points[k]["point"] for k in expected},
        "shards": [
            {
                "id": r["id"],
                "shard": r["shard"],
                "host": r["host"],
                "started_at": r["header"]["started_at"],
                "finished_at": r["header"]["finished_at"],
                "process_wall_s": r.get("process_wall_s"),
                # Only a killed run says so (runs of the first workers have no such field).
                **({"finished": False} if r.get("finished") is False else {}),
                "gpu": r["header"]["gpu"],
                "points": [k for k in expected if points[k]["run"] == r["id"]],
            }
            for r in runs
        ],
    }


def merged_hygiene(folder: Path) -> str:
    """Every run's runner checks, in time order: the bot reads them as the commit's."""
    lines: list[str] = []
    for path in sorted(folder.glob("hygiene-*.jsonl")):
        lines += [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return "".join(ln + "\n" for ln in sorted(lines, key=lambda ln: json.loads(ln)["checked_at"]))
