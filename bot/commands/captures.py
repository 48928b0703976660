"""Find and read both sides' fusion captures and kernel lists, and build each fusion's hints.

The kernels each timed call launched are in every run's record (a list the verdict reads
without, beside the per-round ones: each record is read again here, once, however many fusions
it holds, keeping that list alone). A fusion whose head launches other kernels has hints even
with no capture.

The suite writes a run's captures beside its results, ``<results>/<machine>/<commit>.captures/``
(benchmarks/engine/capture.py); ``--captures-base``/``--captures-head`` name them
elsewhere (the committed data keeps them apart from the results). With one side only there
is nothing to compare, so there are no hints. A capture that cannot be read is a note on the
verdict and a warning, never a lost comment: the captures come from the machine the PR's code
ran on, and are a diagnostic, not the measurement. Wrong options (one side only, a folder that
does not exist) are bad input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from bot.alert.measured import Measured
from bot.fusion.hints import build_hints
from bot.fusion.launches import KERNELS_FIELD, Lists, kernel_lists
from bot.fusion.read import has_fusion, read_side
from bot.fusion.types import PointCapture
from bot.results.provenance import load_provenance
from bot.results.types import BadInput, CommitResults

Record = Callable[[CommitResults], "Mapping[str, Any] | None"]


def captures_beside(runs: tuple[CommitResults, ...]) -> Path | None:
    """The first captures folder beside one of the runs' results (a PR side's, a history
    commit's: bot/commands/history_inside.py)."""
    for run in runs:
        folder = run.path.parent / f"{run.commit}.captures"
        if folder.is_dir():
            return folder
    return None


def with_hints(reports: list[Measured], given: tuple[Path | None, Path | None]) -> list[Measured]:
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
    record = _records()
    return [_with_hints(m, given, record) for m in reports]


def _records() -> Record:
    """Each run's whole record, read once (None: the run has none)."""

    @cache
    def whole(path: Path, commit: str) -> Mapping[str, Any] | None:
        try:
            prov = load_provenance(path, commit, per_round=False, keep=(KERNELS_FIELD,))
        except BadInput as exc:  # read a moment ago: a diagnostic is never worth the verdict
            print(f"fusion-perfbot: warning: kernel lists not read: {exc}", file=sys.stderr)
            return None
        return prov.record if prov is not None else None

    def record(run: CommitResults) -> Mapping[str, Any] | None:
        return whole(run.provenance.path, run.commit) if run.provenance is not None else None

    return record


def _kernels(m: Measured, record: Record) -> tuple[list[Lists], list[Lists]]:
    """The kernels of every timed call of this fusion, each base run's and each head run's."""
    base, head = (
        [kernel_lists(r, m.fusion) for run in runs if (r := record(run)) is not None]
        for runs in (m.base_runs, m.head_runs)
    )
    return base, head


def _with_hints(m: Measured, given: tuple[Path | None, Path | None], record: Record) -> Measured:
    verdict = m.verdict
    if verdict is None:
        return m
    base_dir, head_dir = (
        given if all(given) else (captures_beside(m.base_runs), captures_beside(m.head_runs))
    )
    sides: tuple[dict[str, PointCapture], dict[str, PointCapture]] = ({}, {})
    try:
        captured = [d is not None and has_fusion(d, m.fusion) for d in (base_dir, head_dir)]
        if base_dir is not None and head_dir is not None and all(captured):
            sides = read_side(base_dir, m.fusion), read_side(head_dir, m.fusion)
    except BadInput as exc:
        # The captures are a diagnostic: a bad one is said, and never costs the verdict.
        note = f"fusion captures not read: {exc}"
        print(f"fusion-perfbot: warning: {note}", file=sys.stderr)
        verdict = replace(verdict, notes=(*verdict.notes, note))
        m = replace(m, verdict=verdict)
    # The kernel lists cost a second read of each record (0.2 s for a nightly pair): read
    # where a guard alarms, whose hints are about a change.
    moved = any(g.alarming for g in verdict.guards)
    kernels = _kernels(m, record) if moved else ([], [])
    hints = build_hints(verdict, *sides, m.base, m.head, m.fusion, kernels)
    if not hints.points_compared and not hints.changed:
        return m  # nothing captured at both sides, nothing launched otherwise: no hints
    return replace(m, hints=hints)
