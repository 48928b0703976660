"""A history's commits and their order: asv's commit date (ties by hash), an order file, the
package-under-test keys' build dates, and which runs are comparable."""

from __future__ import annotations

import json

import pytest
from history_data import MACHINE, STOCK, pool, real
from paths import DATA

from benchmarks.under_test.keys import build_date
from bot.history.load import load_histories, read_order
from bot.history.series import by_commit, comparable, history, parse_order, signature
from bot.results.types import BadInput


def test_commits_follow_asv_dates_and_ties_go_by_hash() -> None:
    (h,) = load_histories([DATA / "h200-repeats" / "call-1" / "results"])
    # base and head of a pair were committed in the same second: the hash decides
    assert [c.sha[:8] for c in h.commits] == ["223f991a", "ae560ef0"]
    assert h.commits[0].date == h.commits[1].date
    (nightlies,) = load_histories([DATA / "h200-thunder-nightlies" / "results"])
    versions = [c.runs[0].provenance.text("versions", "thunder") for c in nightlies.commits]  # type: ignore[union-attr]
    assert versions == sorted(versions) and len(versions) == 6


@pytest.mark.parametrize("pair", ["thunder-pair", "thunder-broken-pair", "thunder-pair-call1"])
def test_package_under_test_keys_are_in_build_date_order(pair: str) -> None:
    """A key made from a wheel or version is dated by its devYYYYMMDD (a release: 2000-01-01),
    and that is the order the history reads them in."""
    (h,) = load_histories([DATA / "h200-under-test" / pair / "results"])
    versions = [c.runs[0].provenance.text("under_test", "version") for c in h.commits]  # type: ignore[union-attr]
    days = [build_date(v or "") for v in versions]
    assert days == sorted(days)
    for c in h.commits:  # the date asv stored is the key's build date
        (run_day,) = {build_date(r.provenance.text("under_test", "version") or "") for r in c.runs}  # type: ignore[union-attr]
        assert c.date // 1000 == _epoch(run_day)
    if pair == "thunder-pair":
        assert versions == ["0.2.6", "0.2.7.dev20260201"]


def _epoch(iso: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(iso).timestamp())


def test_an_order_file_overrides_the_dates(tmp_path) -> None:  # type: ignore[no-untyped-def]
    order = ["cee6d116", "69d61fb1", "5ac5d5f2"]
    (tmp_path / "o.txt").write_text("\n".join(["# newest first, on purpose", *order, ""]))
    (h,) = load_histories([DATA / "h200-thunder-nightlies" / "results"], order=tmp_path / "o.txt")
    assert [c.sha[:8] for c in h.commits] == order
    assert any("3 commit(s) with results are not in the order" in n for n in h.notes)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "lists no commit"),
        ("69d61fb1\nnot-a-hash\n", "line 2: 'not-a-hash' is not a commit hash"),
        ("69d61fb1\n69d61fb1\n", "line 2: commit 69d61fb1 is listed twice"),
    ],
)
def test_a_bad_order_file_is_bad_input(text: str, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        parse_order(text, "order.txt")


def test_an_order_file_that_is_not_text_is_bad_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "o.txt").write_bytes(b"\xff\xfe69d61fb1\n")
    with pytest.raises(BadInput, match="not UTF-8"):
        read_order(tmp_path / "o.txt")


def test_an_ambiguous_prefix_in_the_order_is_bad_input() -> None:
    with pytest.raises(BadInput, match="ambiguous"):
        history(MACHINE, pool(), ["0"])  # 06f650c8, 016e16b1, 022fefdd, 0e8c6c35


def test_only_runs_of_one_sampling_and_set_of_variants_are_compared() -> None:
    """Repeat 2 of a pair ran without the context baselines (its small kernels 5-7% slower):
    its runs are left out and named, the commit keeps its repeat-1 run."""
    h = real(STOCK)
    assert [c.sha[:8] for c in h.commits] == list(STOCK)
    assert all(len(c.runs) == 1 for c in h.commits)
    assert {signature(r) for r in h.runs} == {
        ("8", "nvfuser,thunder-prims,thunder-func,eager,torch-compile")
    }
    note = h.notes[-1]
    assert "10 commit(s) with results are not in the order" in h.notes[0]
    assert note.startswith("6 run(s) of another sampling or set of variants left out")
    assert "223f991a (rep-2)" in note


def test_the_most_common_signature_wins_and_a_tie_goes_to_the_newest() -> None:
    runs = [r for r in pool() if r.commit[:8] in ("223f991a", "ae560ef0")]
    kept, _ = comparable(runs)  # two of each: the newest run decides (same date: the hash)
    newest = max(runs, key=lambda r: (r.date or 0, r.commit))
    assert {signature(r) for r in kept} == {signature(newest)}


def test_a_run_without_a_date_needs_an_order() -> None:
    from dataclasses import replace

    run = replace(pool()[0], date=None)
    with pytest.raises(BadInput, match="no commit date"):
        by_commit([run])
    assert by_commit([run], dated=False)[0].date == 0


def test_the_nightlies_record_which_thunder_ran() -> None:
    path = next((DATA / "h200-thunder-nightlies" / "results" / MACHINE).glob("*.provenance.jsonl"))
    assert json.loads(path.read_text().splitlines()[-1])["variants"] == [
        "nvfuser", "thunder-prims", "thunder-func",
    ]  # fmt: skip
