"""Find and read both sides' fusion captures for a machine, and build each fusion's hints.

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

from bot.alert.measured import Measured
from bot.fusion.hints import build_hints
from bot.fusion.read import has_fusion, read_side
from bot.results.types import BadInput, CommitResults


def _beside(runs: tuple[CommitResults, ...]) -> Path | None:
    for run in runs:
        folder = run.path.parent / f"{run.commit}.captures"
        if folder.is_dir():
            return folder
    return None


def with_hints(
    reports: list[Measured], given: tuple[Path | None, Path | None]
) -> list[Measured]:
    """Each compared fusion of each machine with its hints, where both sides captured it
    (a fusion's points in its own folder of the side's, RMSNorm backward's in the side's)."""
    compared = [m for m in reports if m.verdict is not None]
    if any(given) and not all(given):
        raise BadInput("give both --captures-base and --captures-head, or neither")
    machines = sorted({m.machine for m in compared})
    if all(given) and len(machines) != 1:
        raise BadInput(
            f"--captures-base/--captures-head name one machine's captures; {len(machines)} "
            "machines were compared: put each machine's beside its results instead"
        )
    if all(given):
        for folder in given:
            if folder is not None and not folder.is_dir():
                raise BadInput(f"{folder}: no such captures folder")
    return [_with_hints(m, given) for m in reports]


def _with_hints(m: Measured, given: tuple[Path | None, Path | None]) -> Measured:
    if m.verdict is None:
        return m
    base_dir, head_dir = given if all(given) else (_beside(m.base_runs), _beside(m.head_runs))
    if base_dir is None or head_dir is None:
        return m
    try:
        if not (has_fusion(base_dir, m.fusion) and has_fusion(head_dir, m.fusion)):
            return m  # this fusion was not captured at both sides: nothing to compare
        sides = read_side(base_dir, m.fusion), read_side(head_dir, m.fusion)
    except BadInput as exc:
        # The captures are a diagnostic: a bad one is said, and never costs the verdict.
        note = f"fusion captures not read: {exc}"
        print(f"fusion-perfbot: warning: {note}", file=sys.stderr)
        return replace(m, verdict=replace(m.verdict, notes=(*m.verdict.notes, note)))
    return replace(m, hints=build_hints(m.verdict, *sides, m.base, m.head, m.fusion))
