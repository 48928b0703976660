"""``python3 -m tests.perf.bench_report``: seconds and peak memory of ``python -m bot report``
at the nightly sweep's size, on pairs tiled from the recorded ``pr`` data (tests/perf/tile.py).

    python3 -m tests.perf.bench_report [--runs 5] [--thousands]
        [--results DIR --base SHA --head SHA]   # a real pair too (data/h200-nightly/, say)

Each case runs the real command in its own process, ``--runs`` times; it prints the machine
(CPU count and model), then per case the points, the comment's characters, the exit code, the
wall seconds (the fastest run, and the median), the CPU seconds of the fastest run and the
peak resident memory (the largest run's high-water mark, which the process reports itself). The
fastest wall time is the one least disturbed by whatever else the machine runs. Timings are
printed, never asserted (docs/PERFORMANCE.md quotes them with the machine they ran on).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.results.locate import list_commits
from tests.perf.host import TIMING_HEADER, Timing, machine_lines, run_bot_measured, timing_cells
from tests.perf.tile import tile

REPO_ROOT = Path(__file__).resolve().parents[2]
RECORDED = REPO_ROOT / "data" / "h200" / "results"
#: The nightly set measured on the H200 (data/README.md): one run, compared with itself.
REAL = REPO_ROOT / "data" / "h200-nightly" / "results"
BASE, REGRESSED, SAME = "06f650c8", "9dc51696", "da17d548"
#: A sweep of thousands of points: 10 x 100 shapes x 3 dtypes, nvFuser and the two Thunder
#: variants (asv's 10,000 combinations a benchmark allow no more), records without per-round lists.
THOUSANDS = [
    f"{m}x{n}"
    for m in (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    for n in range(1024, 1024 + 128 * 100, 128)
]
THOUSANDS_VARIANTS = ("nvfuser", "thunder-prims", "thunder-func")


@dataclass(frozen=True)
class Case:
    name: str
    results: Path
    base: str
    head: str


def cases(work: Path, thousands: bool) -> list[Case]:
    """The tiled pairs: nightly-sized base against a regressed and an A/A head."""
    nightly = work / "nightly"
    for commit in (BASE, REGRESSED, SAME):
        tile(RECORDED, commit, nightly, size_set="nightly")
    out = [
        Case("nightly 180 points, regressed", nightly, BASE, REGRESSED),
        Case("nightly 180 points, A/A", nightly, BASE, SAME),
    ]
    if thousands:
        big = work / "thousands"
        for commit in (BASE, REGRESSED, SAME):
            tile(
                RECORDED,
                commit,
                big,
                shapes=THOUSANDS,
                variants=THOUSANDS_VARIANTS,
                slim_provenance=True,
            )
        points = 3 * len(THOUSANDS)
        out += [
            Case(f"{points} points, regressed", big, BASE, REGRESSED),
            Case(f"{points} points, A/A", big, BASE, SAME),
        ]
    for commit in sorted({c.commit for c in list_commits(REAL)}) if REAL.is_dir() else ():
        twin = twin_copy(REAL, commit, work / "real")
        out.append(Case(f"real nightly {commit[:8]} (vs a copy)", work / "real", commit, twin))
    return out


#: The copy's commit: ``report`` refuses a base equal to its head, so the real run is compared
#: with a byte-for-byte copy of itself under another hash (nothing to find, its real sizes).
TWIN = "f" * 40


def twin_copy(results: Path, commit: str, out: Path) -> str:
    """``results`` copied into ``out`` with every file of ``commit`` also written under
    :data:`TWIN` (its hash replaced in the name and the text); returns TWIN."""
    import shutil

    shutil.copytree(results, out)
    for path in list(out.rglob("*")):
        if path.is_file() and path.name.startswith(commit[:8]):
            name = path.name.replace(commit, TWIN).replace(commit[:8], TWIN[:8])
            text = path.read_text(encoding="utf-8").replace(commit, TWIN)
            (path.parent / name).write_text(text, encoding="utf-8")
        elif path.is_dir() and path.name.startswith(commit):
            shutil.copytree(path, path.parent / path.name.replace(commit, TWIN))
    return TWIN


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python3 -m tests.perf.bench_report",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--runs", type=int, default=5, help="processes a case (default 5)")
    ap.add_argument("--thousands", action="store_true", help="also a pair of 3,000 points")
    ap.add_argument("--results", type=Path, help="also a real pair: its results folder")
    ap.add_argument("--base", help="the real pair's base")
    ap.add_argument("--head", help="the real pair's head")
    args = ap.parse_args(argv)
    print("\n".join(machine_lines()))
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        todo = cases(Path(tmp), args.thousands)
        if args.results:
            todo.append(Case(f"real {args.results}", args.results, args.base, args.head))
        print(f"{'case':<34}{'chars':>7}{TIMING_HEADER}")
        for case in todo:
            cmd = [
                "report",
                "--results",
                str(case.results),
                "--base",
                case.base,
                "--head",
                case.head,
            ]
            runs: list[Timing] = [run_bot_measured(cmd) for _ in range(args.runs)]
            chars = min(runs, key=lambda t: t.wall_s).chars
            print(f"{case.name:<34}{chars:>7}{timing_cells(runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
