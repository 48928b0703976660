"""history-calibrate on the committed runs, with few histories a scenario (the full count is
what docs/HISTORY.md quotes, held under `pytest -m docs` in tests/test_docs_figures.py)."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from functools import partial

import pytest
from history_data import FOLDERS, shipped
from paths import DATA

import bot.history.calibrate_trials as trials
from bot.commands import cli
from bot.commands.history_calibrate import pool_of, state_of
from bot.history.calibrate import calibrate
from bot.history.calibrate_text import report_text
from bot.history.method import Method

RESULTS = [f for f in FOLDERS if "under-test" not in str(f)]
STATES = [DATA / "h200-under-test" / "thunder-broken-pair" / "results"]
NIGHTLIES = DATA / "h200-thunder-nightlies" / "results"


@pytest.fixture
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trials, "HISTORIES", 8)


def test_the_pool_is_read_from_the_provenance_records() -> None:
    s, _ = shipped()
    pool = pool_of(RESULTS, STATES, NIGHTLIES, None, s)
    assert len(pool.stock) == 12 and len(pool.nightlies) == 6
    names = {k: sorted(r.commit[:8] for r in v) for k, v in pool.states.items()}
    assert names == {
        "broken": ["0e8c6c35", "f888795e"],
        "slow-nvfuser-2": ["3f0f630d", "c57e54a6"],
        "slow-nvfuser-5": ["93486aaf"],
        "slow-nvfuser-any": ["3f0f630d", "93486aaf", "c57e54a6"],
        "slow-thunder-2": ["63e9dde7", "8b5a6516"],
        "slow-thunder-5": ["8681cae2"],
        "slow-thunder-any": ["63e9dde7", "8681cae2", "8b5a6516"],
    }
    assert [r.commit[:8] for r in pool.unfused] == ["9dc51696"]
    assert all(state_of(r, s) is None for r in pool.stock)


@pytest.mark.slow  # seconds; docs' full count is in the slow run too
@pytest.mark.usefixtures("few")
def test_quiet_on_real_aa_orders_and_finds_every_real_step() -> None:
    s, model = shipped()
    result = calibrate(pool_of(RESULTS, STATES, None, None, s), s, model, Method())
    assert [q.confirmed.hits for q in result.quiet] == [0] * len(result.quiet)
    assert [q.name for q in result.quiet][-1] == "one unfused commit amid A/A"
    steps = {(st.name, st.guard): st for st in result.steps}
    assert set(steps) == {
        ("broken", "broken"),
        ("slow-nvfuser-2", "nvfuser"),
        ("slow-nvfuser-any", "nvfuser"),
        ("slow-thunder-2", "thunder"),
        ("slow-thunder-2", "ratio"),
        ("slow-thunder-any", "thunder"),
        ("slow-thunder-any", "ratio"),
    }  # the +5% states have one run: not enough for min_after
    for st in steps.values():
        assert st.found.hits == st.found.trials == 8 and st.elsewhere.hits == 0
    low, high = steps["slow-thunder-2", "ratio"].sizes
    assert 1.02 < low <= high < 1.035
    assert "slow-thunder-2 (63e9dde7, 8b5a6516)" in report_text(result)


@pytest.mark.slow  # process pools of 1 to 3 workers, seconds (docs/BOT.md: pytest -m slow)
@pytest.mark.usefixtures("few")
def test_any_number_of_workers_gives_the_same_figures() -> None:
    s, model = shipped()
    pool = pool_of(RESULTS[:2], [], None, None, s)  # h200 and h200-states: 6 stock runs
    with pytest.raises(Exception, match="at least 10 A/A runs"):
        calibrate(pool, s, model, Method())
    pool = pool_of(RESULTS, [], None, None, s)
    pool = replace(pool, states={"slow-thunder-2": pool.states["slow-thunder-2"]})
    alone = report_text(calibrate(pool, s, model, Method()))
    with ProcessPoolExecutor(2) as workers:
        spread = report_text(calibrate(pool, s, model, Method(), partial(workers.map, chunksize=1)))
    assert alone == spread


def test_the_command_writes_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(trials, "HISTORIES", 4)
    argv = ["history-calibrate", *(f"--results={f}" for f in RESULTS), "--jobs", "1"]
    assert cli.main([*argv, "--json", "-"], env={}) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "perfbot-history-calibration/1" and len(data["stock"]) == 12
    assert {q["confirmed"]["hits"] for q in data["quiet"]} == {0}
    assert cli.main([*argv, "--jobs", "0"], env={}) == 2  # a usage error
