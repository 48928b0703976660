"""A pending change far beyond noise is confirmed by re-measuring its commit, not by waiting
for the next one (bot/history/remeasure.py, docs/HISTORY.md): on the recorded 11x step (the
unfused backward of data/h200) the watch asks for a re-measurement of that commit; with a
second run of it in the history the change is confirmed and filed the same night; a
re-measurement that does not agree confirms nothing; a +2% step (data/h200-states) keeps the
rule of 2 commits exactly. Every run is a recorded process: a second run is a recorded run
copied under a run of its own (tests/history/remeasured.py), never a number made here."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from history_data import STOCK, THUNDER_2, THUNDER_5, UNFUSED, folder_args, order_file
from history_github import CONFIG, github_env, writes
from paths import REPO_ROOT
from remeasured import H200, STATES, second_run

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.history import remeasure

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
UNFUSED_SHA = "9dc516960ffdea53271e079984bda56109317307"
THUNDER_5_SHA = "8681cae2f21be262200d44af39021564a14f7a8e"  # slow-thunder-5
KEY = "rmsnorm-bwd|nvidia-h200|da17d548f3e6..9dc516960ffd"  # spelled out, docs/HISTORY.md
ASKED = (
    "pending: far beyond noise (thunder-prims geometric mean over 9 point(s): lower bound "
    "11.3x > +8.0%, 4x the 2% threshold): re-measure commit 9dc51696 to confirm"
)


def _run(
    tmp: Path, *folders: Path, env: dict[str, str] | None = None, more: tuple[str, ...] = ()
) -> tuple[int, dict[str, Any]]:
    out = tmp / f"history-{len(list(tmp.glob('history-*.json')))}.json"
    args = ["history", *(f"--results={f}" for f in folders), *CONFIG, *more, "--json", str(out)]
    code = cli.main(args, env=env or {})
    return code, json.loads(out.read_text(encoding="utf-8"))


def _changes(data: dict[str, Any]) -> list[dict[str, Any]]:
    (machine,) = data["machines"]
    return list(machine["changes"])


def _bot_issues(fake: LocalGitHub) -> list[Any]:
    return [i for r in (FUSER, THUNDER) for i in fake.state.issues(r) if i.author == BOT_LOGIN]


def test_the_11x_step_asks_for_a_remeasurement_and_files_nothing(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = _run(tmp_path, H200, env=github_env(fake_github))
    out = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION  # pending: nothing confirmed, nothing filed
    assert out.count(ASKED) == 2  # the ratio and Thunder's kernel time
    assert "needs 1 more commit(s)" not in out
    assert data["machines"][0]["remeasure"] == [UNFUSED_SHA]
    changes = _changes(data)
    assert {c["guard"] for c in changes} == {"ratio", "thunder"}
    for c in changes:
        assert c["status"] == "pending" and c["confirmed_by"] is None
        r = c["remeasure"]
        assert r["commit"] == UNFUSED_SHA and r["runs"] == 1 and r["agreed"] is None
        assert r["threshold"] == 0.02 and r["bar"] == pytest.approx(1.08)
        assert r["low"] > r["bar"] and r["low"] == c["size"]["low"]  # the size's near end
    assert _bot_issues(fake_github) == [] and writes(fake_github) == 0


def test_a_second_run_of_the_commit_confirms_it_and_files_the_same_night(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    again = second_run(tmp_path / "remeasured", H200, UNFUSED)
    env = github_env(fake_github)
    code, data = _run(tmp_path, H200, again, env=env)
    out = capsys.readouterr().out
    assert code == ExitCode.REGRESSION
    assert "9dc51696  2026-11-30  thunder 0.2.6, unfused-backward, 2 runs" in out
    assert "Confirmed changes: 2" in out and "Pending" not in out
    assert out.count("confirmed by re-measuring 9dc51696: each of its 2 runs, alone, far") == 2
    assert data["machines"][0]["remeasure"] == []  # measured again: not asked again
    for c in _changes(data):
        assert c["status"] == "confirmed" and c["confirmed_by"] == "remeasure"
        assert c["remeasure"]["runs"] == 2 and c["remeasure"]["agreed"] is True
        assert c["issue"] == "regressed" and c["runs"] == [2, 2]
    # Filed as any confirmed change: one alert, its primary issue in Thunder's repository.
    marker = f"<!-- fusion-perfbot-key: {KEY} -->"
    (primary,) = [i for i in fake_github.state.issues(THUNDER) if i.author == BOT_LOGIN]
    assert primary.state == "open" and marker in (primary.body or "")
    assert "since 9dc516960ffd" in (primary.title or "")
    assert "Confirmed by re-measuring `9dc516960ffd`" in (primary.body or "")
    assert all(marker in (i.body or "") for i in _bot_issues(fake_github))
    # The same night again: nothing changes.
    before = writes(fake_github)
    assert _run(tmp_path, H200, again, env=env)[0] == ExitCode.REGRESSION
    assert writes(fake_github) == before


def test_the_same_run_copied_is_no_remeasurement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of the run (same started_at) is that run again, not a second measurement."""
    copy = second_run(tmp_path / "copy", H200, UNFUSED, later=timedelta(0))
    code, data = _run(tmp_path, H200, copy)
    assert code == ExitCode.OK_NO_REGRESSION
    assert capsys.readouterr().out.count(ASKED) == 2
    assert data["machines"][0]["remeasure"] == [UNFUSED_SHA]


def test_a_remeasurement_that_shows_no_step_confirms_nothing(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second run of 9dc51696 is a stock run (h200-states 016e16b1, relabelled): the two
    runs disagree, nothing is confirmed or filed; decided on both runs under the rule of 2
    commits, the windows do not even show a change now, and nothing is asked again."""
    stock = second_run(tmp_path / "stock", STATES, STOCK[5], as_commit=(H200, UNFUSED))
    code, data = _run(tmp_path, H200, stock, env=github_env(fake_github))
    out = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION
    assert "unfused-backward, 2 runs" in out and "Confirmed changes: 0" in out
    assert "confirmed by re-measuring" not in out and "re-measure commit" not in out
    assert data["machines"][0]["remeasure"] == []
    assert all(c["status"] == "pending" for c in _changes(data))
    assert _bot_issues(fake_github) == [] and writes(fake_github) == 0


def _config(tmp: Path, effect: str) -> str:
    """perfbot.toml with another threshold (the copy names its noise model by full path)."""
    path = tmp / "perfbot.toml"
    text = Path(CONFIG[1]).read_text(encoding="utf-8")
    changes = {
        "\neffect = 0.02": f"\neffect = {effect}",
        "kernel_effect = 0.02": f"kernel_effect = {effect}",
        'noise_model = "noise/': f'noise_model = "{Path(CONFIG[1]).parent}/noise/',
    }
    for old, new in changes.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return str(path)


def _thunder_5(tmp: Path, effect: str, *more: str) -> tuple[int, dict[str, Any]]:
    """Four stock commits, then the +5% Thunder state (h200-states 8681cae2), at another
    threshold; ``more``: more ``--results``."""
    order = order_file(tmp, [*STOCK[:4], THUNDER_5])
    out = tmp / f"history-{len(list(tmp.glob('history-*.json')))}.json"
    args = ["history", *folder_args(), *more, "--order", str(order), *CONFIG]
    args += ["--config", _config(tmp, effect), "--json", str(out)]
    code = cli.main(args, env={})
    return code, json.loads(out.read_text(encoding="utf-8"))


def _less(tmp: Path) -> str:
    """A re-measurement of 8681cae2 that shows less: the +2% state's run (63e9dde7), relabelled."""
    less = second_run(tmp / "less", STATES, THUNDER_2[0], as_commit=(STATES, THUNDER_5))
    return f"--results={less}"


def test_a_remeasurement_that_shows_less_is_left_to_the_next_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At a 1% threshold (bar +4%) the +5% state's ratio is far beyond noise (+5.0% [+4.7%,
    +5.4%]): a re-measurement is asked. Re-measured by a run of the +2% state, both runs
    together are +3.9% [+2.7%, +5.0%]: no longer far, pending under the rule of 2 commits, not
    asked again."""
    code, data = _thunder_5(tmp_path, "0.01")
    first = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION
    assert "re-measure commit 8681cae2 to confirm" in first and "4x the 1% threshold" in first
    assert data["machines"][0]["remeasure"] == [THUNDER_5_SHA]
    code, data = _thunder_5(tmp_path, "0.01", _less(tmp_path))
    out = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION
    assert "8681cae2  2026-12-01  thunder 0.2.6, thunder slower by 0.05, 2 runs" in out
    assert "Confirmed changes: 0" in out and "far beyond noise" not in out
    assert out.count("needs 1 more commit(s) to be confirmed or dropped") == 2
    assert data["machines"][0]["remeasure"] == []


def test_each_guard_is_confirmed_on_every_run_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """At a 0.5% threshold (bar +2%), the same two runs: the ratio of each, alone, is past +2%
    (confirmed, exit 1); Thunder's kernel time of the +2% run alone is not (pending under the
    rule of 2 commits, and it says why)."""
    code, data = _thunder_5(tmp_path, "0.005", _less(tmp_path))
    out = capsys.readouterr().out
    assert code == ExitCode.REGRESSION
    by_guard = {c["guard"]: c for c in _changes(data)}
    ratio, thunder = by_guard["ratio"], by_guard["thunder"]
    assert (ratio["status"], ratio["confirmed_by"], ratio["remeasure"]["agreed"]) == (
        "confirmed",
        "remeasure",
        True,
    )
    assert (thunder["status"], thunder["confirmed_by"], thunder["remeasure"]["agreed"]) == (
        "pending",
        None,
        False,
    )
    assert "confirmed by re-measuring 8681cae2: each of its 2 runs, alone, far beyond" in out
    assert (
        "but the re-measurement did not agree (not every one of the 2 runs of 8681cae2, alone, "
        "is): needs 1 more commit(s) to be confirmed or dropped"
    ) in out
    assert data["machines"][0]["remeasure"] == []


def _without_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """No change is far beyond noise: the rule of 2 commits alone, as before this rule."""
    monkeypatch.setattr(remeasure, "FACTOR", math.inf)


def test_the_11x_step_waited_for_a_commit_without_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the watch said before (the issue's report): "needs 1 more commit(s)", even with a
    second run of the commit."""
    _without_the_rule(monkeypatch)
    again = second_run(tmp_path / "remeasured", H200, UNFUSED)
    for folders in ((H200,), (H200, again)):
        assert _run(tmp_path, *folders)[0] == ExitCode.OK_NO_REGRESSION
        out = capsys.readouterr().out
        assert out.count("needs 1 more commit(s) to be confirmed or dropped") == 2
        assert "far beyond noise" not in out


@pytest.mark.parametrize("remeasured", [False, True], ids=["one run", "a second run"])
def test_a_two_percent_step_keeps_the_rule_of_two_commits_exactly(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    remeasured: bool,
) -> None:
    """slow-thunder-2 (63e9dde7, +2.7% [+2.5%, +2.9%]) at the newest commit: pending, "needs 1
    more commit(s)", no re-measurement asked; with a second run of it, still pending. The
    report and the JSON are those of the watch without the rule, byte for byte."""
    order = order_file(tmp_path, [*STOCK[:6], THUNDER_2[0]])
    more = ("--order", str(order))
    folders = [Path(a.split("=", 1)[1]) for a in folder_args()]
    if remeasured:
        folders.append(second_run(tmp_path / "again", STATES, THUNDER_2[0]))
    code, data = _run(tmp_path, *folders, more=more)
    out = capsys.readouterr().out
    assert code == ExitCode.OK_NO_REGRESSION
    assert out.count("needs 1 more commit(s) to be confirmed or dropped") == 2
    assert "far beyond noise" not in out and "Confirmed changes: 0" in out
    assert data["machines"][0]["remeasure"] == []
    assert [c["remeasure"] for c in _changes(data)] == [None, None]
    _without_the_rule(monkeypatch)
    code_off, data_off = _run(tmp_path, *folders, more=more)
    assert (code_off, capsys.readouterr().out, data_off) == (code, out, data)


def test_the_docs_example_is_what_history_prints(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/HISTORY.md quotes the pending section of `python -m bot history --results
    data/h200/results`: those lines, in that order, are what the command prints."""
    doc = (REPO_ROOT / "docs" / "HISTORY.md").read_text(encoding="utf-8")
    command = "(`python -m bot history --results data/h200/results`), prints:\n\n```\n"
    assert doc.count(command) == 1
    quoted = doc.split(command, 1)[1].split("```", 1)[0]
    assert ASKED in quoted
    assert cli.main(["history", "--results", str(H200), *CONFIG], env={}) == 0
    assert quoted in capsys.readouterr().out
