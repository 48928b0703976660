"""The store never thins away a change point's evidence: the real watch (``history --json``)
on a real store names the commits, and thinning pins them for good."""

from __future__ import annotations

import json
from pathlib import Path

from paths import DATA
from store_runs import MACHINE, bot, git

from bot.results.locate import list_commits
from bot.store import add as adding
from bot.store.create import init_store
from bot.store.git import commit_all
from bot.store.index import read_index, read_pins

#: The pr-set runs of the first two days: stock runs, slowdowns, the unfused-backward state.
SOURCES = [DATA / "h200" / "results", DATA / "h200-states" / "results"]
LAST_GOOD, FIRST_BAD = (
    "da17d548f3e6eff323c8348d60147c060c057143",
    ("9dc516960ffdea53271e079984bda56109317307"),
)


def test_the_watchs_change_points_are_pinned_and_survive_thinning(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_store(store)
    for source in SOURCES:
        for info in list_commits(source):
            adding.add(store, source, info.commit, MACHINE)
            commit_all(store, f"store: added {info.commit}")
    history = tmp_path / "history.json"
    proc = bot("history", "--results", str(store / "results"), "--json", str(history))
    assert proc.returncode in (0, 1), proc.stderr  # 1: the regressed state still stands
    changes = json.loads(history.read_text())["machines"][0]["changes"]
    assert {(c["last_good"], c["first_bad"]) for c in changes} == {(LAST_GOOD, FIRST_BAD)}
    # A year and a half later, only the first run of each month's first week would stay: the
    # 12 runs are of one ISO week (Monday 2026-11-30 and Tuesday 12-01), so one run, stripped.
    proc = bot(
        "store",
        "thin",
        "--store",
        str(store),
        "--history-json",
        str(history),
        "--now",
        "2028-06-01",
    )
    assert proc.returncode == 0, proc.stderr
    assert "pinned 2 commit(s) named by the history" in proc.stdout
    kept = {e.commit: e for e in read_index(store).rows}
    for commit in (LAST_GOOD, FIRST_BAD):
        assert commit in kept and not kept[commit].stripped
    first = "06f650c87bcca99fe961d28d3bec88c38e1bfdbe"
    assert set(kept) == {LAST_GOOD, FIRST_BAD, first} and kept[first].stripped
    pins = read_pins(store / "pins.txt")
    assert set(pins) == {LAST_GOOD, FIRST_BAD}
    assert "last good" in pins[LAST_GOOD] and "first bad" in pins[FIRST_BAD]
    assert git(store, "status", "--porcelain") == ""
    assert bot("store", "check", "--store", str(store)).returncode == 0


def test_a_history_file_that_is_not_one_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_store(store)
    bad = tmp_path / "history.json"
    for text, why in (
        ("{", "truncated JSON"),
        ('{"schema": "other/1"}', "not a perfbot-history/1"),
        (
            '{"schema": "perfbot-history/1", "machines": [{"changes": [{"last_good": "x"}]}]}',
            "not a 40-hex commit",
        ),
    ):
        bad.write_text(text)
        proc = bot("store", "thin", "--store", str(store), "--history-json", str(bad))
        assert proc.returncode == 3 and why in proc.stderr, proc.stderr
    assert read_pins(store / "pins.txt") == {}
