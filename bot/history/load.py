"""Reading a history from disk: every run of every commit in the results folders, through the
bot's own readers (bot/results), and the order file. The only I/O of bot/history.

A folder may be a store holding many commits, a job's repeats (``rep-N``), or several folders
given at once; the same run copied into two folders counts once (same machine, commit and
start time), while two processes of one commit (repeats) are two runs of it.

Why the files are read by several processes: a nightly history is ~100 results files and
their provenance records (several MB each: the record's per-round lists are dropped while it
is decoded, but it is decoded), ~10 s of one CPU; the readers are pure functions of a file, so
each file is read where a CPU is free and the runs come back in the same order.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bot.history.series import History, fusion_histories, parse_order
from bot.results.folders import machine_dirs, results_files
from bot.results.limits import MAX_PROVENANCE_BYTES, read_capped
from bot.results.locate import DEFAULT_MIN_SAMPLES, cache_entry, expand_repeats, load_run
from bot.results.types import BadInput, CommitResults

#: Fewer files than this are read in this process (a worker costs more than it saves).
PARALLEL_FROM = 16
#: results file, machine, full hash if known, samples, the run cache's folder (or None)
Task = tuple[Path, str, str | None, int, Path | None]


def _known_hash(path: Path, files: Sequence[Path]) -> str | None:
    """The full hash from the provenance record beside the file, when exactly one record and
    one results file share its 8-digit prefix (the reader checks the file against it)."""
    prefix = path.name.split("-", 1)[0]
    if sum(f.name.startswith(prefix) for f in files) != 1:
        return None
    records = [p for p in path.parent.glob(f"{prefix}*.provenance.jsonl")]
    name = records[0].name.split(".", 1)[0] if len(records) == 1 else ""
    return name if len(name) == 40 and name.startswith(prefix) else None


def read_one(task: Task) -> CommitResults:
    """One results file (its provenance record without the per-round lists)."""
    path, machine, full, min_samples, cache = task
    return load_run(path, machine, full, min_samples, per_round=False, cache=cache)


def _cached(task: Task) -> bool:
    """Whether the cache has an entry for the task's files as they are now."""
    path, machine, full, min_samples, cache = task
    entry = cache_entry(cache, path, machine, full, min_samples)
    return entry is not None and entry.is_file()


def _workers(files: int) -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return 1 if files < PARALLEL_FROM else max(1, min(cpus or 1, files // PARALLEL_FROM + 1))


def read_runs(
    dirs: Sequence[Path],
    machine: str | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    cache: Path | None = None,
) -> dict[str, list[CommitResults]]:
    """Every run in the folders, per machine (only ``machine`` when given); ``cache``: the
    run cache's folder (bot/results/run_cache.py)."""
    expanded = expand_repeats(dirs)
    folders = list({d.resolve(): d for d in expanded}.values())  # a folder given twice: once
    if not folders:
        raise BadInput("no results directory given")
    tasks: list[Task] = []
    for folder in folders:
        for mdir in machine_dirs(folder):
            if machine is None or mdir.name == machine:
                files = results_files(mdir)
                tasks += [(p, mdir.name, _known_hash(p, files), min_samples, cache) for p in files]
    # A run the cache holds is read here (its entry decodes in ~15 ms, less than sending the
    # run back from a worker would cost); the others, where a CPU is free.
    cached = [_cached(t) for t in tasks]
    misses = [t for t, hit in zip(tasks, cached, strict=True) if not hit]
    jobs = _workers(len(misses))
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            fresh = iter(list(pool.map(read_one, misses, chunksize=4)))
    else:
        fresh = iter([read_one(t) for t in misses])
    runs = [read_one(t) if hit else next(fresh) for t, hit in zip(tasks, cached, strict=True)]
    out: dict[str, list[CommitResults]] = {}
    seen: set[tuple[str, str, str | None]] = set()
    where: dict[tuple[Path, str], Path] = {}
    for (path, *_), run in zip(tasks, runs, strict=True):
        twin = where.setdefault((path.parent, run.commit), path)
        if twin != path:
            raise BadInput(
                f"{path.parent}: several results files for commit {run.commit}: "
                f"{twin.name}, {path.name}"
            )
        identity = (run.machine, run.commit, run.started_at)
        if identity not in seen:
            seen.add(identity)
            out.setdefault(run.machine, []).append(run)
    if machine is not None and machine not in out:
        raise BadInput(f"no results on machine {machine} in the results folders")
    if not out:
        raise BadInput("the results folders hold no results files")
    return out


def read_order(path: Path) -> list[str]:
    """The order file (size-capped as a provenance record is: it is a list of hashes)."""
    raw = read_capped(path, MAX_PROVENANCE_BYTES, "order file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput(f"{path}: order file is not UTF-8 text") from None
    return parse_order(text, str(path))


#: The manifest benchmarks.under_test.builds writes beside a results folder (one per call).
BUILDS_SCHEMA = "perfbot-under-test-builds/1"


def unmeasured_builds(dirs: Sequence[Path]) -> tuple[str, ...]:
    """The builds the manifests beside ``dirs`` (``DIR.builds.json``) name as not measured, or
    measured with an error, in words: a nightly that did not install or run has no results
    file, and would otherwise vanish from the history it is a point of (issue 41)."""
    said: list[str] = []
    for folder in dict.fromkeys(d.resolve() for d in dirs):
        manifest = folder.parent / f"{folder.name}.builds.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(read_capped(manifest, MAX_PROVENANCE_BYTES, "builds manifest"))
            builds = data["builds"] if data.get("schema") == BUILDS_SCHEMA else None
        except (BadInput, ValueError, KeyError, AttributeError, TypeError) as exc:
            said.append(f"{manifest.name}: not read ({exc}): builds it names may be missing")
            continue
        if not isinstance(builds, list):
            said.append(f"{manifest.name}: not a builds manifest ({BUILDS_SCHEMA})")
            continue
        for b in builds:
            if not isinstance(b, dict):
                continue
            spec = str(b.get("spec", "?"))
            if "install_error" in b:
                said.append(f"{spec}: not measured, it did not install ({b['install_error']})")
            elif b.get("measure_status") not in (0, None):
                said.append(
                    f"{spec} (key {str(b.get('key', '?'))[:8]}): its measurement exited "
                    f"{b['measure_status']}: its results, if any, may be partial"
                )
    return tuple(said)


def load_histories(
    dirs: Sequence[Path],
    machine: str | None = None,
    order: Path | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    cache: Path | None = None,
) -> tuple[History, ...]:
    """One history a machine and fusion, in commit order (``order``: that file's): machines by
    name, each machine's fusions RMSNorm backward first (bot/history/series.py says why)."""
    listed = read_order(order) if order is not None else None
    runs = read_runs(dirs, machine, min_samples, cache)
    return tuple(h for m in sorted(runs) for h in fusion_histories(m, runs[m], listed))
