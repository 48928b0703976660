"""Find a commit's asv results on disk and load them, with its provenance, as one record.

The public entry points (:func:`load_pair`, :func:`load_commit`, :func:`list_commits`) live
here because choosing *which* file is a question of its own: asv names files by an 8-digit
prefix and per machine, so an abbreviated hash can be ambiguous and a commit can sit on several
machines; each such case is a :class:`~bot.results.types.BadInput` that says how to choose,
never a guess. Parsing the file is bot/results/asv_file.py; the sidecar is
bot/results/provenance.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from bot.results import run_cache
from bot.results.asv_file import parse_points, read_json
from bot.results.folders import commit_files, machine_dirs, results_files
from bot.results.hygiene import hygiene_path, load_checks
from bot.results.limits import full_sha
from bot.results.provenance import load_provenance
from bot.results.tiled import TILED_LABEL, tiled_marker
from bot.results.types import BadInput, CommitInfo, CommitResults

__all__ = [
    "commit_files",
    "find_commit_files",
    "list_commits",
    "load_commit",
    "load_pair",
    "load_run",
]

DEFAULT_MIN_SAMPLES = 10


def find_commit_files(results_dir: Path, sha: str) -> dict[str, tuple[str, Path]]:
    """Per machine, the full hash and results file of the one commit ``sha`` abbreviates.

    asv names files ``<sha8>-<env>.json``; the full hash is inside (and must be 40 hex digits
    before it is used at all), so a prefix longer than 8 is checked against the file. A
    machine is a subdirectory with a ``machine.json``.
    """
    found = commit_files(results_dir, sha)
    if not found:
        raise BadInput(f"{results_dir}: no results for commit {sha}; {_listing(results_dir)}")
    return found


#: How many commits a "no results for commit" message lists before it says "and N more".
LISTED_COMMITS = 12


def _listing(results_dir: Path) -> str:
    """The commits that are there, newest first, for a message about one that is not."""
    try:
        commits = list_commits(results_dir)
    except BadInput as exc:
        return f"and its other files cannot be listed ({exc})"
    if not commits:
        return "it holds no results files"
    newest = sorted(commits, key=lambda c: (-c.date, c.commit))
    shown = [
        f"{c.commit[:8]} ({c.machine}" + (f", {c.thunder_variant})" if c.thunder_variant else ")")
        for c in newest[:LISTED_COMMITS]
    ]
    more = len(newest) - len(shown)
    return "commits there: " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")


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


def _load(
    path: Path,
    machine: str,
    full: str | None,
    min_samples: int,
    *,
    per_round: bool = True,
    cache: Path | None = None,
) -> CommitResults:
    """``full``: the commit the file must hold (None: whichever it holds, read from it);
    ``per_round=False``: the provenance record without its per-round lists, which no verdict
    reads (bot/results/provenance.py); ``cache``: a folder of runs so read
    (bot/results/run_cache.py), for ``per_round=False`` only."""
    entry = cache_entry(cache, path, machine, full, min_samples) if not per_round else None
    if entry is not None and full is not None:
        hit = run_cache.read_entry(entry, path, path.parent / f"{full}.provenance.jsonl")
        if hit is not None and hit.commit == full and hit.machine == machine:
            return replace(hit, checks=load_checks(hygiene_path(path, full), full))
    run = _read(path, machine, full, min_samples, per_round)
    if entry is not None:
        run_cache.write_entry(entry, run)
    return run


def cache_entry(
    cache: Path | None, path: Path, machine: str, full: str | None, min_samples: int
) -> Path | None:
    """Where the run cache keeps this run as its files are now: the results file and its
    provenance record (bot/results/run_cache.py); None without a cache or a known commit."""
    if cache is None or full is None:
        return None
    files = (path, path.parent / f"{full}.provenance.jsonl")
    return run_cache.entry_path(cache, files, full, machine, min_samples)


def _read(
    path: Path, machine: str, full: str | None, min_samples: int, per_round: bool
) -> CommitResults:
    data = read_json(path)
    held = full_sha(data.get("commit_hash"), str(path))
    if full is None:
        full = held
    elif held != full:
        raise BadInput(f"{path}: holds commit {data.get('commit_hash')!r}, expected {full}")
    date = data.get("date")
    prov = load_provenance(path.parent / f"{full}.provenance.jsonl", full, per_round=per_round)
    return CommitResults(
        machine=machine,
        commit=full,
        path=path,
        points=parse_points(path, data, min_samples),
        provenance=prov,
        date=date if isinstance(date, int) else None,
        checks=load_checks(hygiene_path(path, full), full),
        tiled=tiled_marker(data) or (tiled_marker(prov.record) if prov else None),
    )


#: One run of a commit on a machine, from a file :func:`commit_files` found.
load_run = _load


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


def list_commits(results_dir: Path) -> list[CommitInfo]:
    """Every (machine, commit) with results, oldest commit date first."""
    out = []
    for mdir in machine_dirs(results_dir):
        for path in results_files(mdir):
            data = read_json(path)
            full, date = full_sha(data.get("commit_hash"), str(path)), data.get("date")
            prov = load_provenance(mdir / f"{full}.provenance.jsonl", full, per_round=False)
            variant = prov.text("thunder_variant") if prov else None
            side = prov.text("slowdown", "side") if prov else None
            if variant is not None and side is not None:  # benchmarks/engine/slowdown.py
                fraction = prov.text("slowdown", "fraction") if prov else None
                variant = f"{variant}+slower-{side}:{fraction}"
            if tiled_marker(data) or (prov and tiled_marker(prov.record)):
                variant = f"{variant or 'unknown'} ({TILED_LABEL})"
            out.append(CommitInfo(mdir.name, full, date if isinstance(date, int) else 0, variant))
    return sorted(out, key=lambda c: (c.date, c.machine, c.commit))


_REPEAT = re.compile(r"rep-([0-9]{1,4})")


def expand_repeats(results_dirs: Sequence[Path]) -> list[Path]:
    """Each folder as given, except a folder of a job's repeats (only ``rep-N`` folders, no
    asv machine folder of its own), which stands for its ``rep-N`` folders in N's order: what
    bench-pr.yml uploads and data/record.sh --pair writes."""
    out: list[Path] = []
    for d in results_dirs:
        if not d.is_dir() or any((c / "machine.json").is_file() for c in d.iterdir()):
            out.append(d)
            continue
        reps = [(int(m.group(1)), c) for c in d.iterdir() if (m := _REPEAT.fullmatch(c.name))]
        if not reps or any(c.is_symlink() or not c.is_dir() for _, c in reps):
            out.append(d)  # not a repeats folder: let the reader say what is wrong with it
            continue
        out += [c for _, c in sorted(reps)]
    return out


def load_sides(
    results_dirs: Sequence[Path],
    base: str,
    head: str,
    machine: str | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
) -> tuple[tuple[CommitResults, ...], tuple[CommitResults, ...]]:
    """Base and head runs from one or more results folders, each folder holding one process
    of each (a job's repeats: ``results/rep-1``, ``results/rep-2``, ..., or ``results`` for
    all of them). Every folder must have both commits on the same machine; the runs of one
    side are replicates."""
    expanded = expand_repeats(results_dirs)
    dirs = list({d.resolve(): d for d in expanded}.values())  # a folder given twice: once
    if not dirs:
        raise BadInput("no results directory given")
    pairs = [load_pair(d, base, head, machine, min_samples) for d in dirs]
    machines = sorted({b.machine for b, _ in pairs})
    if len(machines) > 1:
        raise BadInput(
            f"the results folders hold base and head on different machines "
            f"({', '.join(machines)}): choose one with --machine"
        )
    for (b, h), d in zip(pairs, dirs, strict=True):
        if (b.commit, h.commit) != (pairs[0][0].commit, pairs[0][1].commit):
            raise BadInput(f"{d}: base or head resolves to another commit than in {dirs[0]}")
    return tuple(b for b, _ in pairs), tuple(h for _, h in pairs)
