"""What a measuring process keeps past its points' timed rounds for the capture that follows
its record (issue 39 part 2), and the steps it notes in run_gpu.sh's steps file.

Why keep instead of rebuild: a capture process of its own rebuilt every variant (23-78 s a side
on the H200); the measuring process has them built, and captures in about a second. Why after
the record: nvFuser's own profiler exits the process where torch.profiler ran
(data/h100-issue39), and a capture is a diagnostic, never worth a measurement.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import capture, variants
from .config import Shape
from .session import progress


@dataclass
class Kept:
    """A point's built variants, kept past its rounds for the capture (capture.py) that runs
    after every point's timed rounds; ``errors`` says why a variant is missing."""

    fusion: str
    dtype: str
    shape: Shape
    variants: dict[str, variants.Variant] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


def capture_kept(kept: list[Kept], folder: Path) -> None:
    """Capture what ran inside each kept point's variants (capture.py) into ``folder`` (the
    run's ``<commit>.captures``), freeing each point as it is done. A diagnostic: a failed
    step is recorded in the variant's errors.json, never raised."""
    import torch

    while kept:
        point = kept.pop(0)
        base = capture.side_folder(folder.parent, folder.name, point.fusion)
        for name in [*point.variants, *point.errors]:
            label = f"{point.fusion} {point.dtype} {point.shape.label} {name}"
            progress(f"=== capture {folder.name} {label}")
            failed = capture.capture_variant(
                base / f"{point.dtype}_{point.shape.label}" / name,
                point.variants.get(name),
                point.errors.get(name),
            )
            progress(f"=== done {name}: failed steps {failed}")
        del point
        torch.cuda.empty_cache()


def note_step(name: str, start: float, end: float) -> None:
    """Append a step of this process to run_gpu.sh's steps file (``RMSNORM_BENCH_STEPS``),
    where benchmarks/engine/phases.py reads a job's seconds; nothing without one."""
    path = os.environ.get("RMSNORM_BENCH_STEPS")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            row = {"step": name, "start": start, "end": end, "status": 0}
            fh.write(json.dumps(row) + "\n")
