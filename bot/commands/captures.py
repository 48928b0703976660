"""Find and read both sides' fusion captures for a machine, and build its root-cause hints.

The suite writes a run's captures beside its results, ``<results>/<machine>/<commit>.captures/``
(benchmarks/rmsnorm_bwd/capture.py); ``--captures-base``/``--captures-head`` name them
elsewhere (the committed data keeps them apart from the results). With one side only there
is nothing to compare, so there are no hints. A capture that cannot be read is a note on the
verdict and a warning, never a lost comment: the captures come from the machine the PR's code
ran on, and are a diagnostic, not the measurement. Wrong options (one side only, a folder that
does not exist) are bad input.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from bot.fusion.hints import build_hints
from bot.fusion.read import read_side
from bot.results.types import DEFAULT_FUSION, BadInput, CommitResults
from bot.tell.machines import MachineReport


def _beside(runs: tuple[CommitResults, ...]) -> Path | None:
    for run in runs:
        folder = run.path.parent / f"{run.commit}.captures"
        if folder.is_dir():
            return folder
    return None


def with_hints(
    reports: list[MachineReport], given: tuple[Path | None, Path | None]
) -> list[MachineReport]:
    # The captures are RMSNorm backward's (benchmarks/rmsnorm_bwd/capture.py).
    compared = [m for m in reports if m.verdict is not None and m.fusion == DEFAULT_FUSION]
    if any(given) and not all(given):
        raise BadInput("give both --captures-base and --captures-head, or neither")
    if all(given) and len(compared) != 1:
        raise BadInput(
            f"--captures-base/--captures-head name one machine's captures; {len(compared)} "
            "machines were compared: put each machine's beside its results instead"
        )
    out = []
    for m in reports:
        if m.verdict is None or m.fusion != DEFAULT_FUSION:
            out.append(m)
            continue
        base_dir, head_dir = given if all(given) else (_beside(m.base_runs), _beside(m.head_runs))
        if base_dir is None or head_dir is None:
            out.append(m)
            continue
        for folder in (base_dir, head_dir):
            if not folder.is_dir():
                raise BadInput(f"{folder}: no such captures folder")
        try:
            sides = read_side(base_dir), read_side(head_dir)
        except BadInput as exc:
            # The captures are a diagnostic: a bad one is said, and never costs the verdict.
            note = f"fusion captures not read: {exc}"
            print(f"fusion-perfbot: warning: {note}", file=sys.stderr)
            verdict = replace(m.verdict, notes=(*m.verdict.notes, note))
            out.append(replace(m, verdict=verdict))
            continue
        hints = build_hints(m.verdict, *sides, m.base, m.head)
        out.append(replace(m, hints=hints))
    return out
