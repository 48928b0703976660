"""``python3 -m tests.perf.bench_history``: seconds and peak memory of ``python -m bot
history`` over 100 commits of a nightly-sized run (the ``nightly`` size set: 180 dtype x shape
points), tiled from the recorded ``pr`` runs (tests/perf/tile.py).

    python3 -m tests.perf.bench_history [--runs 3] [--commits 100]

Two histories, each commit a recorded run tiled over the nightly points under a commit and
date of its own (in turn): the twelve stock runs (A/A), and the same with the two recorded
slow-thunder-2 runs from the middle on (a real step, confirmed, its issues built, dry); and
the A/A history with records thinned as the history store thins old ones (no per-round lists).
Each case runs the real command in its own process: once with an empty run cache
(PERFBOT_CACHE_DIR, bot/results/run_cache.py: the first night, or without a cache), then
``--runs`` times with the cache that run left (every later night), and prints the machine,
then per case the commits, the exit code, the wall seconds (fastest, median), the CPU seconds
and the peak resident memory of the process (its rusage). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.perf.host import TIMING_HEADER, Timing, machine_lines, run_bot_measured, timing_cells
from tests.perf.tile import tile

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA = REPO_ROOT / "data"
REPEATS = DATA / "h200-repeats"
#: The recorded stock (A/A) runs: (results folder, commit), those the noise model pools.
STATES = DATA / "h200-states" / "results"
STOCK = [
    (DATA / "h200" / "results", "06f650c8"),
    (DATA / "h200" / "results", "da17d548"),
    *((STATES, c) for c in ("6c840f30", "022fefdd", "324c493b", "016e16b1")),
    *((REPEATS / f"call-{n}" / "results" / "rep-1", c) for n, c in (
        (1, "223f991a"), (1, "ae560ef0"), (2, "983be29d"), (3, "240f289b"), (4, "6033818a"),
        (4, "70e55a95"),
    )),
]  # fmt: skip
SLOW_THUNDER_2 = [
    (DATA / "h200-states" / "results", "63e9dde7"),
    (REPEATS / "call-3" / "results" / "rep-1", "8b5a6516"),
]


def fake_commit(case: str, i: int) -> str:
    return hashlib.sha1(f"bench-history {case} {i}".encode()).hexdigest()


def build(out: Path, case: str, commits: int, step_at: int | None, slim: bool = False) -> Path:
    """``commits`` tiled runs in ``out``, one a day; the slower runs from ``step_at`` on.

    Each lab session wrote its own machine.json (tile.py keeps a folder to one), so each
    source is tiled into a folder of its own and the runs are then put in one machine folder,
    as a history store holds them."""
    start = datetime(2027, 1, 1, tzinfo=timezone.utc)
    parts = out.parent / "parts"
    sources: dict[Path, Path] = {}
    for i in range(commits):
        pool = SLOW_THUNDER_2 if step_at is not None and i >= step_at else STOCK
        results, commit = pool[i % len(pool)]
        part = sources.setdefault(results, parts / str(len(sources)))
        day = (start + timedelta(days=i)).isoformat()
        tile(
            results,
            commit,
            part,
            size_set="nightly",
            as_commit=fake_commit(case, i),
            date=day,
            slim_provenance=slim,
        )
    for n, part in enumerate(sources.values()):
        for path in part.rglob("*"):
            if path.is_file() and (n == 0 or path.name not in ("machine.json", "benchmarks.json")):
                target = out / path.relative_to(part)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    return out


def run_once(results: Path, cache: Path) -> Timing:
    """One ``python -m bot history`` process (dry: no token), with the cache folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "PERFBOT_ISSUES_TOKEN")}
    env["PERFBOT_CACHE_DIR"] = str(cache)
    return run_bot_measured(["history", "--results", str(results), "--dry-run"], env)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m tests.perf.bench_history",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--runs", type=int, default=3, help="processes a case (default 3)")
    ap.add_argument("--commits", type=int, default=100, help="commits a history (default 100)")
    args = ap.parse_args(argv)
    print("\n".join(machine_lines()))
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        cases = [
            ("A/A", None, False),
            (f"+2% Thunder from commit {args.commits // 2 + 1}", args.commits // 2, False),
            ("A/A, records without per-round lists", None, True),
        ]
        print(f"{'case':<36}{'commits':>8}{TIMING_HEADER}")
        for n, (name, step_at, slim) in enumerate(cases):
            folder = Path(tmp) / f"case-{n}" / "results"
            results = build(folder, name, args.commits, step_at, slim)
            cache = Path(tmp) / f"case-{n}" / "cache"
            cold = [run_once(results, cache)]  # an empty cache: it fills it
            print(f"{name + ', empty cache':<36}{args.commits:>8}{timing_cells(cold)}")
            runs = [run_once(results, cache) for _ in range(args.runs)]
            print(f"{name:<36}{args.commits:>8}{timing_cells(runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
