"""Histories longer than the recorded runs allow: each commit a recorded run, tiled under a
made-up commit by tests/perf/tile.py over the ``pr`` size set (the recorded run's own points,
each with its own recorded samples; the files say that they are tiled test input). A level a
history returns to is a recorded run used again, so a history can regress, recover and
regress again, which the twelve stock and three slower Thunder runs alone cannot."""

from __future__ import annotations

import hashlib
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

from paths import DATA

from tests.perf.tile import tile

_STATES = DATA / "h200-states" / "results"
_REPEATS = DATA / "h200-repeats"
#: Recorded runs by level: stock (A/A), slow-thunder-2 (+2.5-2.8%), slow-thunder-5.
RUNS: dict[str, tuple[tuple[Path, str], ...]] = {
    "S": (
        *((_STATES, c) for c in ("6c840f30", "022fefdd", "324c493b", "016e16b1")),
        (_REPEATS / "call-1" / "results" / "rep-1", "223f991a"),
        (_REPEATS / "call-1" / "results" / "rep-1", "ae560ef0"),
        (_REPEATS / "call-2" / "results" / "rep-1", "983be29d"),
        (_REPEATS / "call-4" / "results" / "rep-1", "6033818a"),
    ),
    "T": ((_STATES, "63e9dde7"), (_REPEATS / "call-3" / "results" / "rep-1", "8b5a6516")),
    "F": ((_STATES, "8681cae2"),),
}


def made_up(case: str, i: int) -> str:
    return hashlib.sha1(f"history-tiled {case} {i}".encode()).hexdigest()


def tiled_history(out: Path, case: str, levels: str) -> Path:
    """A results folder of ``len(levels)`` commits, one a day, commit ``i`` a recorded run of
    level ``levels[i]`` (S stock, T slow-thunder-2, F slow-thunder-5; each level's runs in
    turn); the commits are ``made_up(case, i)``. Commits already in ``out`` are kept, so a
    longer history of the same case is the shorter one with commits added."""
    start = datetime(2027, 1, 1, tzinfo=timezone.utc)
    parts = out.parent / f"{out.name}-parts"
    used = {level: 0 for level in RUNS}
    for i, level in enumerate(levels):
        results, commit = RUNS[level][used[level] % len(RUNS[level])]
        used[level] += 1
        part = parts / results.relative_to(DATA).as_posix().replace("/", "_")
        day = (start + timedelta(days=i)).isoformat()
        source = f"{results} {commit} {day}\n"
        done = out.parent / f"{out.name}-tiled" / made_up(case, i)
        if done.is_file() and done.read_text() == source:
            continue  # an earlier night of this case tiled the same run here: the same bytes
        tile(results, commit, part, size_set="pr", as_commit=made_up(case, i), date=day)
        done.parent.mkdir(parents=True, exist_ok=True)
        done.write_text(source)
    for n, part in enumerate(sorted(parts.iterdir())):
        for path in part.rglob("*"):
            if path.is_file() and (n == 0 or path.name not in ("machine.json", "benchmarks.json")):
                target = out / path.relative_to(part)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return out
