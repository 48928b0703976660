"""Thinning the store by its policy (bot/store/policy.py): the I/O around the pure plan.

The sizes the policy weighs are the files' real sizes on disk, and a row's stripped size is
that of its provenance record actually stripped, so the cap holds for what git will store.
"Now" defaults to the newest run's date, not the wall clock: a store whose nightly stopped
for a month keeps its last month dense instead of thinning it while nothing new arrives.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from bot.commands.steps import write_text_atomically
from bot.store.files import stripped_text
from bot.store.index import RESULTS, Entry, Index, read_index, write_index
from bot.store.policy import Action, Policy, Row, Thinning, plan


@dataclass(frozen=True)
class Thinned:
    thinning: Thinning
    now: datetime
    size_before: int
    stripped: tuple[Entry, ...]
    retired: tuple[Entry, ...]
    kept: int

    def lines(self, policy: Policy) -> list[str]:
        out = [
            f"store: {self.kept} run(s) kept, {len(self.stripped)} stripped, "
            f"{len(self.retired)} retired (now = {self.now:%Y-%m-%d})",
            f"store: size {self.size_before / 1e6:.1f} MB -> {self.thinning.size_after / 1e6:.1f}"
            f" MB (cap {policy.cap_bytes / 1e6:.0f} MB)",
        ]
        out += [f"store: stripped {e.machine} {e.commit}" for e in self.stripped]
        out += [f"store: retired {e.machine} {e.commit} ({e.retired})" for e in self.retired]
        if self.thinning.over_cap:
            out.append(
                f"store: warning: {self.thinning.over_cap / 1e6:.1f} MB over the cap, held by "
                "pinned commits and each machine's newest run"
            )
        return out


def _size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else 0


def stored_bytes(store: Path, e: Entry) -> int:
    """What a stored run's files take on disk now."""
    mdir = store / RESULTS / e.machine
    return sum(_size(mdir / name) for name in e.files())


def rows_of(store: Path, index: Index) -> list[Row]:
    """Each stored run with its size now and stripped (the latter re-encodes the provenance
    of a run not yet stripped: what thinning would make of it)."""
    rows = []
    for e in index.rows:
        size = stored_bytes(store, e)
        prov = store / RESULTS / e.machine / f"{e.commit}.provenance.jsonl"
        stripped = size if e.stripped else size - _size(prov) + len(stripped_text(prov).encode())
        rows.append(Row(e.machine, e.commit, e.date, size, stripped, e.stripped))
    return rows


def thin(
    store: Path,
    policy: Policy,
    pins: Mapping[str, str],
    now: datetime | None = None,
    dry_run: bool = False,
) -> Thinned:
    index = read_index(store)
    rows = rows_of(store, index)
    if now is None:
        now = max((r.date for r in rows), default=datetime.now().astimezone())
    history = [Row(e.machine, e.commit, e.date, 0, 0, e.stripped) for e in index.retired]
    thinning = plan(rows, now, policy, frozenset(pins), history)
    stripped, retired, kept, gone = [], [], [], []
    for e in index.rows:
        action = thinning.actions[e.key]
        mdir = store / RESULTS / e.machine
        if action is Action.STRIP:
            e = replace(e, stripped=True)
            stripped.append(e)
            if not dry_run:
                prov = mdir / f"{e.commit}.provenance.jsonl"
                write_text_atomically(prov, stripped_text(prov))
        if action is Action.RETIRE:
            why = "over the cap" if e.key in thinning.capped else "by age"
            retired.append(replace(e, retired=f"{why}, {now:%Y-%m-%d}"))
            gone += [mdir / name for name in e.files()]
        else:
            kept.append(e)
    if not dry_run:
        # The index first: a failure while removing leaves files it does not list, never
        # an index that lists removed files.
        write_index(store, replace(index, rows=()).with_rows(kept, retired))
        for path in gone:
            path.unlink(missing_ok=True)
    size_before = sum(r.size for r in rows)
    return Thinned(thinning, now, size_before, tuple(stripped), tuple(retired), len(kept))
