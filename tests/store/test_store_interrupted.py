"""A store command that fails part-way (a full disk, a killed job) never leaves an index that
lists a file which is not there: the files go in first and the index after them, and files
go out only once the index no longer lists them (docs/STORE.md, "Adding a run")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from store_runs import MACHINE, RUN_B, day, filed_as, sha

from bot.store import add as adding
from bot.store import thin as thinning
from bot.store.create import init_store
from bot.store.git import commit_all
from bot.store.index import RESULTS, read_index
from bot.store.policy import Policy


def missing_listed(store: Path) -> list[str]:
    """Files the index lists for its runs that are not on disk."""
    index = read_index(store)
    return [
        f"{e.commit} {name}"
        for e in index.rows
        for name in (e.results_file, f"{e.commit}.provenance.jsonl")
        if not (store / RESULTS / e.machine / name).is_file()
    ]


def test_a_replace_that_fails_part_way_keeps_the_stored_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, results, other = tmp_path / "store", tmp_path / "a", tmp_path / "b"
    init_store(store)
    filed_as(results, sha(1), day(1))
    adding.add(store, results, sha(1), MACHINE)
    commit_all(store, "store: added")
    filed_as(other, sha(1), day(1), source=RUN_B)  # another measurement of the same commit
    real = shutil.copyfile

    def full_disk(src: object, dst: object) -> object:
        if str(dst).endswith(".provenance.jsonl.incoming"):
            raise OSError(28, "No space left on device")
        return real(src, dst)  # type: ignore[type-var]

    monkeypatch.setattr(adding.shutil, "copyfile", full_disk)
    with pytest.raises(OSError):
        adding.add(store, other, sha(1), MACHINE, replace=True)
    assert missing_listed(store) == []
    assert read_index(store).find((MACHINE, sha(1))) is not None


def test_a_thinning_that_fails_part_way_lists_no_removed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, results = tmp_path / "store", tmp_path / "results"
    init_store(store)
    for n in range(12):
        filed_as(results, sha(n), day(7 * n))
        adding.add(store, results, sha(n), MACHINE)
    commit_all(store, "store: added")
    real, removed = Path.unlink, []

    def killed(path: Path, missing_ok: bool = False) -> None:
        if path.name.endswith(".provenance.jsonl") and removed:
            raise OSError(5, "Input/output error")
        real(path, missing_ok=missing_ok)
        removed.append(path)

    monkeypatch.setattr(Path, "unlink", killed)
    with pytest.raises(OSError):
        thinning.thin(store, Policy(7, 30, 35, 10**9), {})
    monkeypatch.undo()
    assert removed  # it got as far as removing a retired run's files
    assert missing_listed(store) == []
