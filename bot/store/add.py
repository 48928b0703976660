"""Adding one run to the store: idempotent, and never over another result for the same commit.

The decision is pure (:func:`decide`: the index and the run's fingerprint in, what to do out);
only :func:`add` touches the disk. The files are copied under temporary names and renamed into
place, then the index is written, and a replaced run's old files are removed last: a failure
part-way leaves files the index does not list (``store check`` names them, git shows them),
never an index that lists files that are not there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from bot.store.files import Run, read_run
from bot.store.index import RESULTS, Conflict, Entry, Index, read_index, write_index


class Outcome(str, Enum):
    ADDED = "added"
    SAME = "already stored (same measurement): nothing changed"
    RETIRED = "retired earlier by the store's policy (same measurement): not added again"
    REPLACED = "replaced"


@dataclass(frozen=True)
class Added:
    outcome: Outcome
    entry: Entry

    def line(self) -> str:
        e = self.entry
        return f"store: {e.machine} {e.commit}: {self.outcome.value}"


def decide(index: Index, run: Run, replace: bool) -> Outcome:
    """What adding `run` does to a store with `index`; Conflict when it must not."""
    key = (run.machine, run.commit)
    stored, retired = index.find(key), index.find_retired(key)
    before = stored or retired
    if before is None:
        return Outcome.ADDED
    if before.fingerprint == run.fingerprint:
        return Outcome.SAME if stored else Outcome.RETIRED
    if replace:
        return Outcome.REPLACED
    state = "stores" if stored else f"retired ({before.retired})"
    raise Conflict(
        f"{run.machine} {run.commit}: the store {state} a different measurement of this commit "
        f"(fingerprint {before.fingerprint[:12]}, this run {run.fingerprint[:12]}); "
        "pass --replace to replace it"
    )


def _copy(pairs: list[tuple[Path, Path]]) -> None:
    """Every copy under a temporary name first, then the renames: no half-written file."""
    staged = []
    try:
        for src, dst in pairs:
            tmp = dst.with_name(f".{dst.name}.incoming")
            shutil.copyfile(src, tmp)
            staged.append((tmp, dst))
        for tmp, dst in staged:
            tmp.replace(dst)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)


def add(
    store: Path,
    results: Path,
    commit: str,
    machine: str,
    *,
    replace: bool = False,
    min_samples: int = 10,
) -> Added:
    index = read_index(store)
    run = read_run(results, commit, machine, min_samples)
    outcome = decide(index, run, replace)
    entry = Entry(run.machine, run.commit, run.date_ms, run.results_file.name, run.fingerprint)
    if outcome in (Outcome.SAME, Outcome.RETIRED):
        return Added(outcome, index.find(entry.key) or entry)
    mdir = store / RESULTS / run.machine
    mdir.mkdir(parents=True, exist_ok=True)
    pairs = [
        (run.results_file, mdir / run.results_file.name),
        (run.provenance, mdir / run.provenance.name),
    ]
    if run.hygiene is not None:
        pairs.append((run.hygiene, mdir / run.hygiene.name))
    # asv's own files: the newest run's machine description and benchmark list win.
    pairs += [
        (run.machine_json, mdir / "machine.json"),
        (run.benchmarks_json, store / RESULTS / "benchmarks.json"),
    ]
    _copy(pairs)
    rest = index.without(entry.key)
    write_index(store, rest.with_rows([*rest.rows, entry]))
    # A replaced run's files go only now, and only those the new run did not overwrite.
    old = index.find(entry.key)
    if old is not None:
        for name in set(old.files()) - {dst.name for _, dst in pairs}:
            (mdir / name).unlink(missing_ok=True)
    return Added(outcome, entry)
