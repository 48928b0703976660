"""The run cache (bot/results/run_cache.py): a hit is exactly the run the reader makes from
the files, a file changed since is never answered from the cache, an entry that cannot be read
or holds a sample that is not a finite positive float is a miss, an entry of another commit
is never used, and an unwritable cache folder is skipped."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from paths import DATA

from bot.results.locate import load_run
from bot.results.run_cache import entry_path, join_entry, split_entry
from bot.results.types import CommitResults

SOURCE = DATA / "h200" / "results" / "nvidia-h200"
FULL = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe"
MACHINE = "nvidia-h200"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "store" / MACHINE
    folder.mkdir(parents=True)
    for name in (f"{FULL[:8]}-existing-py_opt_torch_.venv_bin_python3.json",
                 f"{FULL}.provenance.jsonl"):  # fmt: skip
        shutil.copyfile(SOURCE / name, folder / name)
    return folder / f"{FULL[:8]}-existing-py_opt_torch_.venv_bin_python3.json"


def read(path: Path, cache: Path | None, min_samples: int = 5) -> CommitResults:
    return load_run(path, MACHINE, FULL, min_samples, per_round=False, cache=cache)


def entry(cache: Path, path: Path, min_samples: int = 5) -> Path:
    files = (path, path.parent / f"{FULL}.provenance.jsonl")
    found = entry_path(cache, files, FULL, MACHINE, min_samples)
    assert found is not None
    return found


def same(a: CommitResults, b: CommitResults) -> bool:
    fields = ("date", "checks", "tiled", "path", "provenance")
    return a == b and all(getattr(a, f) == getattr(b, f) for f in fields)


def test_a_hit_is_the_run_the_reader_makes(results: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain = read(results, None)
    first = read(results, cache)
    assert entry(cache, results).is_file()
    again = read(results, cache)
    assert same(plain, first) and same(plain, again)
    # The hit came from the entry: change a number there and it shows.
    found = split_entry(entry(cache, results).read_bytes())
    assert found is not None
    data, samples = found
    data["provenance"]["record"]["versions"]["thunder"] = "from-the-cache"
    entry(cache, results).write_bytes(join_entry(data, samples.tobytes()))
    hit = read(results, cache)
    assert (
        hit.provenance is not None
        and hit.provenance.text("versions", "thunder") == "from-the-cache"
    )
    # Another sample minimum is another entry.
    assert not entry(cache, results, 3).exists()


def test_a_changed_file_is_read_again(results: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    read(results, cache)
    record = results.parent / f"{FULL}.provenance.jsonl"
    record.write_text(record.read_text().replace('"thunder": "0.2.6"', '"thunder": "0.2.9"'))
    st = record.stat()
    os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000))
    now = read(results, cache)
    assert now.provenance is not None and now.provenance.text("versions", "thunder") == "0.2.9"


FORGERIES = (
    "not json", "another format", "a NaN sample", "a sample short", "a row too few",
    "another commit",
)  # fmt: skip


def _forge(path: Path, change: str) -> None:
    found = split_entry(path.read_bytes())
    assert found is not None
    data, samples = found
    if change == "not json":
        path.write_text("{not json")
        return
    if change == "another format":
        data["format"] = "perfbot-run-cache/0"
    elif change == "a NaN sample":
        samples[0] = float("nan")
    elif change == "a sample short":
        samples = samples[:-1]
    elif change == "a row too few":
        data["keys"] = [k[:-1] for k in data["keys"]]
    elif change == "another commit":
        data["commit"] = "cd" * 20
    path.write_bytes(join_entry(data, samples.tobytes()))


@pytest.mark.parametrize("change", [*FORGERIES])
def test_an_entry_it_cannot_trust_is_a_miss(results: Path, tmp_path: Path, change: str) -> None:
    cache = tmp_path / "cache"
    plain = read(results, cache)
    _forge(entry(cache, results), change)
    assert same(read(results, cache), plain)


def test_an_unwritable_cache_is_skipped(results: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    assert same(read(results, blocked / "cache"), read(results, None))
