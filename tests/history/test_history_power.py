"""``history --power``: the smallest step a real history could have caught, Thunder made slower
from each split on over the recorded runs (issue 41: a watch that found nothing has said
something only if it would have found a change of a size someone cares about)."""

from __future__ import annotations

import json

import pytest
from history_data import shipped
from history_github import CONFIG
from paths import DATA, REPO_ROOT

from bot.commands import cli
from bot.history.load import load_histories
from bot.history.method import Method
from bot.history.power import STEPS, caught_at, power

NIGHTLIES = DATA / "h200-thunder-nightlies" / "results"


def test_the_six_real_nightlies_would_have_caught_a_one_percent_step_at_every_split() -> None:
    s, model = shipped()
    (h,) = load_histories([NIGHTLIES])
    found = power(h, s, model)
    assert found.splits == (2, 3, 4)  # 2 commits before a split, 2 after it
    assert found.tried == ((0.01, 3),) and found.smallest == 0.01
    # Below the geometric mean's threshold (1%) nothing is confirmed: the made step is what
    # was caught, not the history's own noise.
    assert not any(caught_at(h, i, 0.0075, s, model, Method()) for i in found.splits)
    said = " ".join((REPO_ROOT / "docs" / "HISTORY.md").read_text(encoding="utf-8").split())
    assert "a +1% step (the geometric mean's threshold) is caught at each of the 3 splits" in said
    assert "and +0.75% at none" in said
    steps = ", ".join(f"+{100 * x:g}%" for x in STEPS[:-1]) + f", +{100 * STEPS[-1]:g}%"
    assert f"the smallest step of {steps} that" in said


def test_the_cli_reports_the_search_as_made_not_measured(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["history", "--results", str(NIGHTLIES), "--dry-run", "--power", *CONFIG]
    assert cli.main(argv, env={}) == 0
    text = capsys.readouterr().out
    assert "(a made step, not a measurement)" in text
    assert "  rmsnorm_bwd         6       3       +1%  +1%: 3/3" in text
    assert cli.main([*argv, "--json", "-"], env={}) == 0
    (row,) = json.loads(capsys.readouterr().out)["power"]
    assert (row["fusion"], row["smallest"], row["splits"]) == ("rmsnorm_bwd", 0.01, [2, 3, 4])


def test_a_history_too_short_once_its_broken_start_is_left_out_tries_nothing() -> None:
    """The H100's four builds: the first ran no Thunder point (no executor), so three commits
    time Thunder, and no split has 2 of them before it and 2 after: nothing is tried."""
    s, model = shipped()
    folder = DATA / "h100-thunder-history" / "call1" / "group-01"
    found = [power(h, s, model) for h in load_histories([folder])]
    assert len(found) == 14
    assert all(p.splits == () and p.tried == () and p.smallest is None for p in found)
