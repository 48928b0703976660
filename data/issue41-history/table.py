"""Issue 41's table: each measured build of the history, in build order, and per fusion the
Thunder/nvFuser ratio level of each Thunder variant (the geometric mean over the points both
ran, each point's median of rounds) and the points that failed.

    python3 data/issue41-history/table.py RESULTS_DIR... [--markdown]

Read through the bot's own readers (bot/history/load.py), so a run counts as it counts for
`history`; a build measured twice (the watch's re-measurement, a change point's check) shows
each run's level. A failed point is one whose variant has no ratio (the record's error).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.history.load import read_runs  # noqa: E402
from bot.results.types import REFERENCE, CommitResults, fusions_of  # noqa: E402

VARIANTS = ("thunder-prims", "thunder-func")


def _build(run: CommitResults) -> tuple[str, str, str]:
    """The Thunder build (the package under test's version, else the stack's), key, date."""
    prov = run.provenance
    version = (
        prov.text("under_test", "version") or prov.text("versions", "thunder") if prov else None
    )
    day = (
        datetime.fromtimestamp(run.date / 1000, timezone.utc).date().isoformat() if run.date else ""
    )
    return version or "?", run.commit[:8], day


def level(run: CommitResults, fusion: str, variant: str) -> float | None:
    """The geometric mean over the fusion's points of the variant's median ratio."""
    logs = [
        math.log(statistics.median(p.ratio))
        for k, p in run.points.items()
        if k.fusion == fusion and k.variant == variant and p.ratio
    ]
    return math.exp(statistics.fmean(logs)) if logs else None


def failures(run: CommitResults, fusion: str) -> int:
    """Points of a Thunder variant or nvFuser that failed (asv's failed value: an error)."""
    wanted = (*VARIANTS, REFERENCE)
    return sum(
        1
        for k, p in run.points.items()
        if k.fusion == fusion and k.variant in wanted and p.no_data == "failed"
    )


def read(dirs: Sequence[Path]) -> list[CommitResults]:
    """Every run of the folders, in build order (the key's date, then key and start)."""
    runs = [r for machine_runs in read_runs(dirs).values() for r in machine_runs]
    return sorted(runs, key=lambda r: (r.date or 0, r.commit, r.started_at or ""))


def rows(runs: Sequence[CommitResults]) -> tuple[list[str], list[list[str]]]:
    fusions = fusions_of(runs)
    head = ["build", "key", "date"] + [f"{f} prims/func (failed)" for f in fusions]
    out = []
    for run in runs:
        cells = list(_build(run))
        for fusion in fusions:
            prims, func = (level(run, fusion, v) for v in VARIANTS)
            failed = failures(run, fusion)
            shown = "/".join("-" if x is None else f"{x:.3f}" for x in (prims, func))
            cells.append(shown + (f" ({failed})" if failed else ""))
        out.append(cells)
    return head, out


def spread(runs: Sequence[CommitResults]) -> str:
    """The largest spread of one fusion's variant level across the builds where it ran."""
    found = []
    for fusion in fusions_of(runs):
        for variant in VARIANTS:
            levels = [x for r in runs if (x := level(r, fusion, variant)) is not None]
            if len(levels) > 1:
                found.append((max(levels) / min(levels) - 1, fusion, variant, len(levels)))
    if not found:
        return "no level measured at two builds"
    size, fusion, variant, n = max(found)
    return f"largest spread of a level: {100 * size:.2f}% ({fusion} {variant}, over {n} runs)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, metavar="RESULTS_DIR")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    runs = read(args.dirs)
    head, body = rows(runs)
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for cells in body:
            print("| " + " | ".join(cells) + " |")
    else:
        for cells in [head, *body]:
            print("  ".join(cells))
    print(spread(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
