"""The store never thins away a change point's evidence: the real watch (``history --json``)
on a real store names the commits, and thinning pins them for good."""

from __future__ import annotations

import json
from pathlib import Path

from paths import DATA
from paths import run_bot as bot
from store_runs import MACHINE, commit_added, git

from bot.results.locate import list_commits
from bot.store import add as adding
from bot.store.create import init_store
from bot.store.index import read_index, read_pins

#: A real step in commit order: four stock (A/A) runs, then Thunder really slower by 2% and 5%
#: (data/h200-states slow-thunder-2, slow-thunder-5), each run as the lab recorded it.
ORDER = [
    "06f650c87bcca99fe961d28d3bec88c38e1bfdbe",
    "da17d548f3e6eff323c8348d60147c060c057143",
    "6c840f30a96a282fe29eba9d44e3204846fd363b",
    "022fefdd9cd02c63018e51f6b7c62cd8ba6172b3",
    "63e9dde7503b46d0e18fb3173d688d039ae3f0ad",
    "8681cae2f21be262200d44af39021564a14f7a8e",
]
SOURCES = [DATA / "h200" / "results", DATA / "h200-states" / "results"]
LAST_GOOD, FIRST_BAD = ORDER[3], ORDER[4]


def test_the_watchs_change_points_are_pinned_and_survive_thinning(tmp_path: Path) -> None:
    store = tmp_path / "store"
    init_store(store)
    for source in SOURCES:
        for info in list_commits(source):
            if info.commit in ORDER:
                adding.add(store, source, info.commit, MACHINE)
                commit_added(store, f"store: added {info.commit}")
    order = tmp_path / "order.txt"
    order.write_text("\n".join(ORDER) + "\n")
    history = tmp_path / "history.json"
    proc = bot(
        "history",
        "--results",
        str(store / "results"),
        "--order",
        str(order),
        "--json",
        str(history),
    )
    assert proc.returncode == 1, proc.stderr  # the step still stands
    changes = json.loads(history.read_text())["machines"][0]["changes"]
    assert {(c["last_good"], c["first_bad"]) for c in changes} == {(LAST_GOOD, FIRST_BAD)}
    # A year and a half later, only the first run of each month's first week would stay: the
    # 6 runs are of one ISO week (Monday 2026-11-30 and Tuesday 12-01), so one run, stripped.
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
