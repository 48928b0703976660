"""Thinning a real store of 45 nights: stripped runs still read, retired ones gone for good,
pinned ones whole, the cap held, the branch's history bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paths import run_bot as bot
from store_runs import MACHINE, commit_added, day, filed_as, git, sha, store_add, tree_state

from bot.results.locate import load_commit
from bot.store import add as adding
from bot.store.create import init_store
from bot.store.git import history_length
from bot.store.index import read_index

NIGHTS = 45


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store with one recorded run a night for 45 nights (one commit each), and the source."""
    root = tmp_path_factory.mktemp("nights")
    results, store = root / "results", root / "store"
    init_store(store)
    for n in range(NIGHTS):
        filed_as(results, sha(n), day(n))
        adding.add(store, results, sha(n), MACHINE)
        commit_added(store, f"store: added {sha(n)}")
    return results, store


def copy(store: Path, tmp_path: Path) -> Path:
    """A clone of the module's store, so that each test thins its own."""
    target = tmp_path / "store"
    git(tmp_path, "clone", "-q", "--branch", "perf-results", str(store), str(target))
    return target


def thin(store: Path, *more: str) -> tuple[int, str]:
    proc = bot("store", "thin", "--store", str(store), *more)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.slow  # two years of nights, seconds (docs/BOT.md: pytest -m slow)
def test_old_runs_are_stripped_or_retired_and_still_read(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    results, source = nights
    store = copy(source, tmp_path)
    code, out = thin(store)
    assert code == 0, out
    index = read_index(store)
    kept = {e.commit: e for e in index.rows}
    ages = {sha(n): NIGHTS - 1 - n for n in range(NIGHTS)}
    # Whole for 7 days, every night for 30, then each ISO week's first night: 2026-01-01 (a
    # Thursday: its week's first in this history), 01-05 and 01-12 (Mondays).
    weekly = {sha(0), sha(4), sha(11)}
    assert set(kept) == {c for c, a in ages.items() if a <= 30} | weekly
    assert {c for c, e in kept.items() if not e.stripped} == {c for c, a in ages.items() if a <= 7}
    assert {e.commit for e in index.retired} == set(ages) - set(kept)
    for e in index.retired:
        assert not list((store / "results" / MACHINE).glob(f"{e.commit[:8]}*"))
        assert e.retired == "by age, 2026-02-14"
    for commit, entry in kept.items():
        prov = (store / "results" / MACHINE / f"{commit}.provenance.jsonl").read_text()
        assert ("kernel_us_calls" in prov) is not entry.stripped
        # asv's per-round samples are what the bot reads: the same before and after.
        assert load_commit(store / "results", commit).points == load_commit(results, commit).points
    assert bot("store", "check", "--store", str(store)).returncode == 0
    assert git(store, "log", "-1", "--format=%s") == "store: thinned (26 stripped, 11 retired)"
    # Thinning again changes nothing; adding a retired run again brings nothing back.
    before = tree_state(store)
    assert thin(store)[0] == 0 and tree_state(store) == before
    proc = store_add(store, results, sha(1))
    assert proc.returncode == 0 and "retired earlier" in proc.stdout
    assert tree_state(store) == before


def test_pinned_commits_survive_whole(nights: tuple[Path, Path], tmp_path: Path) -> None:
    _, source = nights
    store = copy(source, tmp_path)
    proc = bot(
        "store",
        "pin",
        "--store",
        str(store),
        "--commit",
        sha(2),
        "--reason",
        "change point in thunder-prims bfloat16/2048x8192",
    )
    assert proc.returncode == 0, proc.stderr
    pins = tmp_path / "pins.txt"
    pins.write_text(f"# from the watch\n{sha(3)}  # open issue\n")
    code, out = thin(store, "--pins", str(pins))
    assert code == 0, out
    kept = {e.commit: e for e in read_index(store).rows}
    assert not kept[sha(2)].stripped and not kept[sha(3)].stripped
    assert sha(1) not in kept
    pins.write_text("not-a-commit\n")
    code, out = thin(store, "--pins", str(pins))
    assert code == 3 and "not a 40-hex commit" in out


def test_the_cap_retires_the_oldest_and_keeps_the_newest(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    _, source = nights
    store = copy(source, tmp_path)
    code, out = thin(store, "--cap-mb", "1")
    assert code == 0, out
    index = read_index(store)
    sizes = [json.loads(bot("store", "list", "--store", str(store), "--json", "-").stdout)]
    assert sizes[0]["bytes"] <= 1_000_000
    assert sha(NIGHTS - 1) in {e.commit for e in index.rows}
    capped = [e for e in index.retired if e.retired.startswith("over the cap")]
    assert capped and max(e.date for e in capped) < min(e.date for e in index.rows)


def test_the_branch_keeps_a_bounded_history(nights: tuple[Path, Path], tmp_path: Path) -> None:
    """A retired run's bytes must leave the branch, not only its tree: they stay reachable
    from the kept commits that still hold it, and from no commit once those are gone."""
    _, source = nights
    store = copy(source, tmp_path)
    old = git(store, "rev-parse", f"HEAD:results/{MACHINE}/{sha(1)}.provenance.jsonl")
    assert history_length(store) == NIGHTS + 1
    code, out = thin(store, "--keep-history", "5")
    assert code == 0 and "history squashed: 42 older commit(s) dropped" in out, out
    assert history_length(store) == 5
    assert git(store, "status", "--porcelain") == ""
    messages = git(store, "log", "--format=%s").splitlines()
    assert messages[0].startswith("store: thinned") and messages[1] == f"store: added {sha(44)}"
    assert old in git(store, "rev-list", "--objects", "HEAD")  # the 4 adds before the thinning
    tip_tree = git(store, "rev-parse", "HEAD^{tree}")
    code, out = thin(store, "--keep-history", "1")
    assert code == 0 and "history squashed: 4 older commit(s) dropped" in out, out
    assert git(store, "rev-parse", "HEAD^{tree}") == tip_tree
    assert old not in git(store, "rev-list", "--objects", "HEAD")


def test_a_bad_keep_history_is_refused_before_anything_changes(
    nights: tuple[Path, Path], tmp_path: Path
) -> None:
    store = copy(nights[1], tmp_path)
    before = tree_state(store)
    for bad in ("0", "-3"):
        code, out = thin(store, "--keep-history", bad)
        assert code == 2, out
        assert tree_state(store) == before  # not thinned and committed first, then refused
