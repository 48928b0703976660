"""Runs read from the run cache keep their points as columns (bot/results/packed.py) and
are, to every reader, the runs the file reader makes: the same Points, the same sample
matrices, counts and bandwidths, the same table (every array bit for bit) and the same
report; and the watch builds no Point of them but those of points that failed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from history_data import MACHINE, shipped
from paths import DATA

from bot.history.load import read_runs
from bot.history.method import Method
from bot.history.render import to_json
from bot.history.series import history
from bot.history.watch import analyse
from bot.results.packed import SAMPLES, PackedPoints, bandwidths, sample_count, sample_groups
from bot.results.types import CommitResults

FOLDER = DATA / "h200-states" / "results"  # stock, slower and broken (Thunder 0.2.5) runs
#: Commit orders: a/a, a +2% Thunder step, a break (its points fail: Points are built for it).
ORDERS = {
    "a/a": ("6c840f30", "022fefdd", "324c493b", "016e16b1"),
    "step": ("6c840f30", "022fefdd", "324c493b", "016e16b1", "63e9dde7", "8681cae2"),
    "break": ("6c840f30", "022fefdd", "324c493b", "016e16b1", "f888795e"),
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cache")
    read_runs([FOLDER], cache=folder)  # fills it
    return folder


@pytest.fixture(scope="module")
def plain_runs() -> list[CommitResults]:
    runs = read_runs([FOLDER])[MACHINE]
    assert not any(isinstance(r.points, PackedPoints) for r in runs)
    return runs


@pytest.fixture
def both(cache: Path, plain_runs: list[CommitResults]) -> tuple[list[CommitResults], ...]:
    """The runs as read, and as the cache gives them back (new ones each test: none built)."""
    packed = read_runs([FOLDER], cache=cache)[MACHINE]
    assert all(isinstance(r.points, PackedPoints) for r in packed)
    return plain_runs, packed


def test_a_packed_run_answers_as_the_read_one(both: tuple[list[CommitResults], ...]) -> None:
    for plain, packed in zip(*both, strict=True):
        keys = sorted(plain.points)
        assert list(packed.points) == list(plain.points) and len(packed.points) == len(keys)
        for which in SAMPLES:
            mine, theirs = (
                sample_groups(packed.points, keys, which),
                sample_groups(plain.points, keys, which),
            )
            assert mine.keys() == theirs.keys()
            for size, (rows, samples) in mine.items():
                assert rows == theirs[size][0] and np.array_equal(samples, theirs[size][1])
            assert [sample_count(packed.points, k, which) for k in keys] == [
                sample_count(plain.points, k, which) for k in keys
            ]
        assert np.array_equal(
            bandwidths(packed.points, keys), bandwidths(plain.points, keys), equal_nan=True
        )
        assert isinstance(packed.points, PackedPoints) and packed.points.built == 0
        assert packed.points == plain.points  # every Point, built now
        assert packed.points.built == len(keys) and packed == plain


@pytest.mark.parametrize("name", sorted(ORDERS))
def test_the_watch_of_packed_runs_is_the_same_and_builds_no_point(
    both: tuple[list[CommitResults], ...], name: str
) -> None:
    s, model = shipped()
    plain_runs, packed_runs = both
    watches = [
        analyse(history(MACHINE, runs, list(ORDERS[name])), s, model, Method())
        for runs in (plain_runs, packed_runs)
    ]
    plain, packed = watches
    for f, ft in plain.table.families.items():
        other = packed.table.families[f]
        for arr in ("y", "w", "n", "bandwidth"):
            assert np.array_equal(getattr(ft, arr), getattr(other, arr), equal_nan=True), arr
    assert to_json([packed]) == to_json([plain])
    failed = {b.last_good for b in packed.breaks}
    built = sum(r.points.built for r in packed.history.runs if isinstance(r.points, PackedPoints))
    assert (built > 0) == (name == "break") == bool(failed)


def test_one_fusion_of_a_packed_catalog_run_stays_packed(tmp_path: Path) -> None:
    """The watch splits a catalog run by fusion (bot/history/series.py): from the cache each
    fusion's part stays columns, no Point built, and answers as the file reader's part does."""
    folder = DATA / "h200-catalog" / "aa2"
    (plain,) = [r for r in read_runs([folder])[MACHINE] if r.commit.startswith("c4af5b47")]
    read_runs([folder], cache=tmp_path)  # fills the cache
    (packed,) = [
        r for r in read_runs([folder], cache=tmp_path)[MACHINE] if r.commit.startswith("c4af5b47")
    ]
    assert isinstance(packed.points, PackedPoints)
    for fusion in ("rmsnorm_bwd", "softmax_bwd", "gelu_fwd"):
        mine, theirs = packed.of_fusion(fusion).points, plain.of_fusion(fusion).points
        assert isinstance(mine, PackedPoints) and mine.built == 0
        keys = list(theirs)
        assert list(mine) == keys and {k.fusion for k in keys} == {fusion}
        for which in SAMPLES:
            a, b = sample_groups(mine, keys, which), sample_groups(theirs, keys, which)
            assert a.keys() == b.keys()
            for size in a:
                assert a[size][0] == b[size][0]
                assert np.array_equal(a[size][1], b[size][1])
        assert np.array_equal(bandwidths(mine, keys), bandwidths(theirs, keys), equal_nan=True)
        assert dict(mine) == dict(theirs)  # every Point, built on demand, the same
