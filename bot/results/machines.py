"""Base and head runs of every machine: a PR benchmarked on several GPU runners at once.

Each runner writes asv results under its own machine name (``rep-N/<machine>/...``) and the
poster passes every ``rep-N`` folder of every runner's artifact, so the machines are found
across all folders, and a machine's runs are the folders that hold it, repeat k's base paired
with repeat k's head as for one machine (bot/results/locate.py: :func:`load_sides`).

What is bad input and what is news: a commit found on no machine at all is a typo or the
wrong folder (:class:`BadInput`, listing what is there); a machine that has one side only (its
head job failed, say) is reported as not compared; a folder that holds one side only on a
machine that is compared elsewhere is left out of that machine's repeats, with a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.results.folders import commit_files
from bot.results.locate import DEFAULT_MIN_SAMPLES, expand_repeats, find_commit_files, load_run
from bot.results.types import BadInput, CommitResults

__all__ = ["MachineSides", "load_machines"]

Hit = tuple[str, Path]  # full hash, results file


@dataclass(frozen=True)
class MachineSides:
    """One machine's runs of each side; ``missing`` says why it cannot be compared."""

    machine: str
    base_runs: tuple[CommitResults, ...] = ()
    head_runs: tuple[CommitResults, ...] = ()
    missing: str | None = None
    notes: tuple[str, ...] = ()  # repeats left out, in words

    @property
    def compared(self) -> bool:
        return self.missing is None


def _one_commit(side: str, sha: str, hits: Sequence[Hit]) -> None:
    fulls = sorted({full for full, _ in hits})
    if len(fulls) > 1:
        raise BadInput(
            f"{side} {sha} resolves to several commits across folders: {', '.join(fulls)}"
        )


def _machine(
    name: str,
    rows: Sequence[tuple[Path, Hit | None, Hit | None]],
    min_samples: int,
    per_round: bool,
) -> MachineSides:
    paired = [(d, b, h) for d, b, h in rows if b is not None and h is not None]
    if not paired:
        has = "base" if any(b for _, b, _ in rows) else "head"
        lacks = "head" if has == "base" else "base"
        return MachineSides(
            name,
            missing=f"no {lacks} results on this machine, only {has} results in {len(rows)} folder"
            + ("s" if len(rows) > 1 else ""),
        )
    notes = tuple(
        f"{d.name}: only {'base' if b else 'head'} on {name}; that repeat is left out"
        for d, b, h in rows
        if b is None or h is None
    )
    return MachineSides(
        name,
        tuple(load_run(b[1], name, b[0], min_samples, per_round=per_round) for _, b, _ in paired),
        tuple(load_run(h[1], name, h[0], min_samples, per_round=per_round) for _, _, h in paired),
        notes=notes,
    )


def load_machines(
    results_dirs: Sequence[Path],
    base: str,
    head: str,
    machine: str | None = None,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    *,
    per_round: bool = True,
) -> tuple[MachineSides, ...]:
    """Every machine found in the folders (only ``machine`` when given), by name; at least one
    of them compared, else :class:`BadInput` saying what each lacks. ``per_round=False``: the
    provenance records without their per-round lists (what a verdict needs, a fifth of the
    memory: bot/results/provenance.py)."""
    expanded = expand_repeats(results_dirs)
    dirs = list({d.resolve(): d for d in expanded}.values())  # a folder given twice: once
    if not dirs:
        raise BadInput("no results directory given")
    rows: dict[str, list[tuple[Path, Hit | None, Hit | None]]] = {}
    for d in dirs:
        b_found, h_found = commit_files(d, base), commit_files(d, head)
        names = sorted(set(b_found) | set(h_found))
        if machine is not None:
            names = [m for m in names if m == machine]
        for m in names:
            rows.setdefault(m, []).append((d, b_found.get(m), h_found.get(m)))
    b_hits = [b for found in rows.values() for _, b, _ in found if b is not None]
    h_hits = [h for found in rows.values() for _, _, h in found if h is not None]
    for side, sha, hits in (("base", base, b_hits), ("head", head, h_hits)):
        if not hits and machine is None:
            find_commit_files(dirs[0], sha)  # raises: the commit is nowhere, here is what is
            raise BadInput(f"no results for {side} commit {sha} in any results folder")
        if not hits:
            raise BadInput(f"no results for {side} commit {sha} on machine {machine}")
        _one_commit(side, sha, hits)
    out = tuple(_machine(m, f, min_samples, per_round) for m, f in sorted(rows.items()))
    if not any(m.compared for m in out):
        said = "; ".join(f"{m.machine}: {m.missing}" for m in out)
        raise BadInput(f"no machine has results for both base {base} and head {head} ({said})")
    return out
