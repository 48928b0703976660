"""Where a measuring process's seconds went, read from its provenance records.

    python3 -m benchmarks.engine.phases RECORD [RECORD ...]
    python3 -m benchmarks.engine.phases --by-fusion RECORD [RECORD ...]

One row a record (a process of a job): its start-up before the run opened (the interpreter and
the imports; records from issue 39 on), its wall time from the run's opening to its end, and in
it the opening (the GPU probe, the sleep fit), the building and checking of the variants (of
which each variant's compile), the timed rounds, the host-time rounds, and the rest. A last
row adds them up. What a record cannot know is said, not guessed ("-" for a record made before
it said it).

``--by-fusion`` adds the records' points up by fusion instead, the costliest to build first:
which fusions' compiles a cut would have to reach.

Then the job as run_gpu.sh timed its steps (``<commit>.steps.jsonl`` beside each record, issue
39 on; before, its log did: data/h200-catalog/logs/timing-call3.txt): the runner checks, the
measuring processes, asv's stores, how long the GPU was held (from the first step on the GPU to
the last) and how long the job ran after it let go (the final store). The capture that the
measuring process makes after writing its record (issue 39) is a step of its own, inside
``measure``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..fusions.spec import DEFAULT_FUSION
from .config import VARIANTS

#: Point phases of a record (docs/DATA.md, ``phases_s``), in the order a point runs them.
POINT_PHASES = ("build_and_check_s", "rounds_s", "host_s")
#: The process's own phases, beside its points' (records from issue 39 on).
RUN_PHASES = ("startup_s", "open_s")
#: run_gpu.sh's steps (``<commit>.steps.jsonl``): those that need the GPU, and the store.
GPU_STEPS = ("check_before", "measure", "check_after")
#: Steps inside the measuring process (measure.py): the capture after its record is written;
#: in one of a job's turns, building every point and waiting for its turn.
INNER_STEPS = ("build", "wait_turn", "capture")
STORE_STEP = "store"


@dataclass
class Split:
    """The seconds of one process (or of several, added)."""

    label: str
    wall_s: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)
    compile_s: dict[str, float] = field(default_factory=dict)
    points: int = 0
    #: The run's own phases (:data:`RUN_PHASES`), and those a process of this row did not
    #: record (absent from records before issue 39).
    run: dict[str, float] = field(default_factory=dict)
    unrecorded: set[str] = field(default_factory=set)

    @property
    def rest_s(self) -> float:
        waited = self.run.get("wait_turn_s", 0.0)  # one of a job's turns, at the barrier
        return self.wall_s - sum(self.phases.values()) - self.run.get("open_s", 0.0) - waited

    def run_cell(self, key: str) -> str:
        """A run phase's seconds, or "-" when a process of this row did not record it."""
        if key in self.unrecorded or key not in self.run:
            return "-"
        return f"{self.run[key]:.1f}"

    def add(self, other: Split) -> None:
        self.wall_s += other.wall_s
        self.points += other.points
        self.unrecorded |= other.unrecorded
        for mine, theirs in (
            (self.run, other.run),
            (self.phases, other.phases),
            (self.compile_s, other.compile_s),
        ):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0.0) + value


def _seconds(start: str, end: str) -> float:
    return (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds()


def split_of(record: dict[str, Any], label: str) -> Split:
    """One record's split (pure)."""
    out = Split(label, _seconds(record["started_at"], record["finished_at"]))
    own = record.get("phases_s") or {}
    for key in RUN_PHASES:
        if isinstance(own.get(key), (int, float)):
            out.run[key] = float(own[key])
        else:
            out.unrecorded.add(key)
    if isinstance(own.get("wait_turn_s"), (int, float)):
        out.run["wait_turn_s"] = float(own["wait_turn_s"])
    for point in record.get("points", {}).values():
        _add_point(out, point)
    return out


def _add_point(out: Split, point: dict[str, Any]) -> None:
    """One point's phases and variants' compile seconds added to ``out``."""
    out.points += 1
    for key in POINT_PHASES:
        out.phases[key] = out.phases.get(key, 0.0) + float(point.get("phases_s", {}).get(key, 0.0))
    for name, entry in point.get("variants", {}).items():
        if isinstance(entry.get("compile_s"), (int, float)):
            out.compile_s[name] = out.compile_s.get(name, 0.0) + float(entry["compile_s"])


def render(splits: Iterable[Split]) -> list[str]:
    rows = list(splits)
    total = Split("all")
    for row in rows:
        total.add(row)
    names = [v for v in VARIANTS if any(v in r.compile_s for r in rows)]
    head = ["process", "points", "start-up s", "wall s", "open s", "build+check s",
            *(f"{n} compile s" for n in names), "rounds s", "host s", "rest s"]  # fmt: skip
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for row in [*rows, total]:
        cells = [row.label, str(row.points), row.run_cell("startup_s"), f"{row.wall_s:.1f}",
                 row.run_cell("open_s"), f"{row.phases.get('build_and_check_s', 0.0):.1f}",
                 *(f"{row.compile_s.get(n, 0.0):.1f}" for n in names),
                 f"{row.phases.get('rounds_s', 0.0):.1f}", f"{row.phases.get('host_s', 0.0):.1f}",
                 f"{row.rest_s:.1f}"]  # fmt: skip
        lines.append(" | ".join(cells))
    lines.append(
        "(-: a record made before it said it; not in a record: a capture process of its own, "
        "asv's store: the steps below, or run_gpu.sh's log before issue 39, time those)"
    )
    return lines


def fusion_splits(records: Iterable[dict[str, Any]]) -> list[Split]:
    """Every point of every record added up under its fusion (pure), the costliest build and
    check first (a process's start-up and opening belong to no fusion: not in these rows)."""
    by: dict[str, Split] = {}
    for record in records:
        for point in record.get("points", {}).values():
            fusion = str(point.get("fusion") or DEFAULT_FUSION)
            _add_point(by.setdefault(fusion, Split(fusion)), point)
    return sorted(by.values(), key=lambda r: -r.phases.get("build_and_check_s", 0.0))


def render_fusions(rows: list[Split]) -> list[str]:
    total = sum(r.phases.get("build_and_check_s", 0.0) for r in rows) or 1.0
    names = [v for v in VARIANTS if any(v in r.compile_s for r in rows)]
    head = ["fusion", "points", "build+check s", "share", *(f"{n} compile s" for n in names),
            "rounds s"]  # fmt: skip
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for row in rows:
        build = row.phases.get("build_and_check_s", 0.0)
        cells = [row.label, str(row.points), f"{build:.1f}", f"{100 * build / total:.0f}%",
                 *(f"{row.compile_s.get(n, 0.0):.1f}" for n in names),
                 f"{row.phases.get('rounds_s', 0.0):.1f}"]  # fmt: skip
        lines.append(" | ".join(cells))
    return lines


@dataclass(frozen=True)
class Step:
    """One of run_gpu.sh's steps: what, from when to when (epoch seconds), its exit status."""

    name: str
    start: float
    end: float
    status: int


def steps_of(path: Path) -> list[Step]:
    """A steps file's steps (none where the file is absent: a record made before them)."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Step(row["step"], float(row["start"]), float(row["end"]), row["status"]))
    return out


def job_lines(steps: list[Step]) -> list[str]:
    """The job's steps added up, the GPU's span and what ran after it (pure)."""
    if not steps:
        return ["(no steps file beside these records: made before issue 39's run_gpu.sh)"]
    on_gpu = [s for s in steps if s.name in GPU_STEPS]
    lines = ["step | runs | s", "--- | --- | ---"]
    for name in (*GPU_STEPS, *INNER_STEPS, STORE_STEP):
        mine = [s for s in steps if s.name == name]
        if mine:
            lines.append(f"{name} | {len(mine)} | {sum(s.end - s.start for s in mine):.1f}")
    failed = sorted({f"{s.name} (exit {s.status})" for s in steps if s.status != 0})
    first = min(s.start for s in steps)
    last = max(s.end for s in steps)
    if on_gpu:
        held_to = max(s.end for s in on_gpu)
        held = held_to - min(s.start for s in on_gpu)
        lines.append(
            f"GPU held {held:.1f} s, from the first step on it to the last; the job went on "
            f"{max(last - held_to, 0.0):.1f} s after it (the final store); {last - first:.1f} s "
            "in all"
        )
    if failed:
        lines.append("failed steps: " + ", ".join(failed))
    return lines


def main(argv: list[str]) -> int:
    by_fusion = argv[:1] == ["--by-fusion"]
    argv = argv[1:] if by_fusion else argv
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if by_fusion:
        texts = [Path(name).read_text(encoding="utf-8") for name in argv]
        records = [json.loads(line) for text in texts for line in text.splitlines() if line.strip()]
        print("\n".join(render_fusions(fusion_splits(records))))
        return 0
    splits, steps = [], []
    for name in argv:
        path = Path(name)
        steps += steps_of(path.with_name(path.name.replace(".provenance.jsonl", ".steps.jsonl")))
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for n, line in enumerate(lines, 1):
            record = json.loads(line)
            commit = str(record.get("commit") or path.name.split(".")[0])[:8]
            label = f"{path.parent.parent.name}/{commit}"
            splits.append(split_of(record, label + (f"#{n}" if len(lines) > 1 else "")))
    print("\n".join([*render(splits), "", *job_lines(steps)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
