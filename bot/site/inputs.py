"""What the site is built from: the results folders, each checked by the bot's own reader, then
merged into one staging folder (bot/site/merge.py), and each commit's provenance record.

Each folder is checked before it is merged, so that a message names the folder the user gave,
not the staging copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.results.locate import list_commits, load_commit
from bot.results.provenance import load_provenance
from bot.results.types import REQUIRED, BadInput, CommitInfo
from bot.site.merge import merge_results


@dataclass(frozen=True)
class Inputs:
    results: Path  # the merged folder asv publishes
    infos: tuple[CommitInfo, ...]
    records: Mapping[str, Mapping[str, Any]]  # commit -> its provenance record (where one is)
    warnings: tuple[str, ...]


def check_results(results_dir: Path) -> list[CommitInfo]:
    """Every results file parsed by the bot's reader; the ratio must be among the benchmarks."""
    infos = list_commits(results_dir)
    if not infos:
        raise BadInput(f"{results_dir}: no asv results files")
    for info in infos:
        load_commit(results_dir, info.commit, info.machine, min_samples=1)
        if info.date <= 0:
            raise BadInput(f"{results_dir}/{info.machine}: commit {info.commit} has no date")
    bench_file = results_dir / "benchmarks.json"
    try:
        benchmarks = json.loads(bench_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{bench_file}: asv's benchmark list is missing or corrupt: {exc}") from None
    missing = [b for b in REQUIRED if b not in benchmarks]
    if missing:
        raise BadInput(f"{bench_file}: lacks {', '.join(missing)}")
    return infos


def _records(results: Path, infos: Sequence[CommitInfo]) -> dict[str, Mapping[str, Any]]:
    """The first machine's record of each commit (what ran is the same on every machine),
    without its per-round lists: the site describes a commit by its versions and what was
    under test, and a nightly record's lists are megabytes."""
    out: dict[str, Mapping[str, Any]] = {}
    for info in infos:
        if info.commit in out:
            continue
        path = results / info.machine / f"{info.commit}.provenance.jsonl"
        prov = load_provenance(path, info.commit, per_round=False)
        if prov is not None:
            out[info.commit] = prov.record
    return out


def gather(results_dirs: Sequence[Path], staging: Path) -> Inputs:
    """Check every folder, refuse a folder given twice, and merge them into ``staging``."""
    if not results_dirs:
        raise BadInput("no results folder given")
    seen: dict[Path, Path] = {}
    for d in results_dirs:
        if d.resolve() in seen:
            raise BadInput(f"{d}: given twice (as {seen[d.resolve()]})")
        seen[d.resolve()] = d
        check_results(d)
    merged = merge_results(results_dirs, staging)
    infos = tuple(check_results(merged.results))
    return Inputs(merged.results, infos, _records(merged.results, infos), merged.warnings)
