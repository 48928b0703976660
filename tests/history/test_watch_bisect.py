"""The watch's break followed up by a bisect, end to end on recorded H200 runs and the fake
GitHub (real PyGithub over HTTP): ``history`` files the alert, ``bisect-plan`` reads
``history --json`` and lists Thunder's upstream commits between the two builds from GitHub,
``bisect --plan`` measures them (recorded runs standing for the builds, as the GPU job would)
and writes the first bad commit, its link and author, into the alert's issue.

The nightlies and commits here are invented (tests/bisect/recorded/README.md); the runs are
real: the history's stock and slow-thunder-2 runs, and the same states standing for the
commits (stock up to commit 4, slow-thunder-2 from commit 5 on).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from history_data import STOCK, THUNDER_2, folder_args, order_file
from history_github import CONFIG, github_env
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.fake.commits import GitCommit

RECORDED = REPO_ROOT / "tests" / "bisect" / "recorded"
THUNDER = "Lightning-AI/lightning-thunder"
KEY = "rmsnorm-bwd|nvidia-h200|016e16b1cc86..63e9dde7503b"  # the history's alert
LAST_GOOD, FIRST_BAD = (
    "016e16b1cc860ac190ab3de1ff0efe7cbcf543b4",
    "63e9dde7503b46d0e18fb3173d688d039ae3f0ad",
)
GOOD, BAD = "lightning-thunder==0.2.7.dev20270104", "lightning-thunder==0.2.7.dev20270111"
#: The history's two ends measured Thunder 0.2.6, stock and slowed: they stand for two nightlies.
STAND_INS = [f"--build-of={LAST_GOOD}={GOOD}", f"--build-of={FIRST_BAD}={BAD}"]


def _commits() -> list[dict[str, str]]:
    data = json.loads((RECORDED / "thunder-watch-commits.json").read_text())
    return list(data["commits"])


def _seed(fake: LocalGitHub, *, early: int = 0) -> None:
    """Thunder's main line: ``early`` invented commits before the range, then the seven."""
    line = [
        GitCommit(
            c["sha"],
            c["message"],
            c["author_name"],
            datetime.fromisoformat(c["date"].replace("Z", "+00:00")),
            c["author_login"],
        )
        for c in _commits()
    ]
    before = [
        GitCommit(f"{n:040x}", f"Before the range {n}", "Ea Rlier", datetime(2027, 1, 1, 12))
        for n in range(1, early + 1)
    ]
    fake.state.commits.add(THUNDER, [*before, *line])


def _history(tmp: Path, env: dict[str, str], *more: str) -> int:
    order = order_file(tmp, [*STOCK[:6], *THUNDER_2])
    args = ["history", *folder_args(), "--order", str(order), *CONFIG, *more]
    return cli.main(args, env=env)


def _plan(tmp: Path, env: dict[str, str]) -> Path:
    assert _history(tmp, env, "--dry-run", "--json", str(tmp / "h.json")) == ExitCode.REGRESSION
    plan = tmp / "plan.json"
    args = ["bisect-plan", "--history-json", str(tmp / "h.json"), "--out", str(plan), *CONFIG]
    assert cli.main([*args, *STAND_INS], env=env) == ExitCode.OK_NO_REGRESSION
    return plan


def _bisect(plan: Path, tmp: Path, env: dict[str, str], *more: str) -> int:
    args = ["bisect", "--plan", str(plan), "--state", str(tmp / "bisect" / "state.json")]
    recorded = ["--recorded", str(RECORDED / "thunder-watch.json")]
    return cli.main([*args, *recorded, *CONFIG, *more], env=env)


def test_a_confirmed_break_is_bisected_to_its_commit_and_answered_on_its_issue(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = github_env(fake_github)
    _seed(fake_github, early=3)
    assert _history(tmp_path, env) == ExitCode.REGRESSION  # the night files the alert
    (issue,) = [i for i in fake_github.state.issues(THUNDER) if i.author == BOT_LOGIN]
    plan_path = _plan(tmp_path, env)
    plan = json.loads(plan_path.read_text())
    shas = [c["sha"] for c in _commits()]
    assert plan["alert"] == KEY and plan["repo"] == THUNDER and plan["package"] == "thunder"
    assert (plan["good"], plan["bad"]) == (GOOD, BAD)
    # GitHub listed main from the good build's day to the bad one's: the seven, not the three
    # before, each installed from its commit.
    assert plan["builds"] == [f"git+https://github.com/{THUNDER}@{s}" for s in shas]
    assert [c["author_login"] for c in plan["commits"]][:2] == ["ada-example", "bo-sample"]
    assert plan["points"] and all(p.count("/") == 1 for p in plan["points"])
    capsys.readouterr()

    # The GPU job: measures, with no token and no issue; stopped by its per-call budget
    # after two measurements, resumed by the next job from the state file.
    gpu = {k: v for k, v in env.items() if k != "GITHUB_TOKEN"}
    assert _bisect(plan_path, tmp_path, gpu, "--max-measurements", "2") == ExitCode.UNFINISHED
    assert _bisect(plan_path, tmp_path, gpu) == ExitCode.OK_NO_REGRESSION
    text = capsys.readouterr().out
    culprit = shas[4]
    assert f"first bad commit: {culprit[:12]} Reorder the backward's saved tensors" in text
    assert (
        f"by Dee Standin (dee-standin), 2027-01-08: https://github.com/{THUNDER}/commit/{culprit}"
        in text
    )
    assert "5 measurement(s) for 9 builds" in text
    assert not fake_github.state.comments_on(THUNDER, issue.number)  # the GPU job posts nothing

    # The poster: the same plan and state, measuring nothing, writes the answer on the issue.
    writes = len(fake_github.requests()) - len(fake_github.requests("GET"))
    assert _bisect(plan_path, tmp_path, env, "--post-only", "--post") == ExitCode.OK_NO_REGRESSION
    (comment,) = fake_github.state.comments_on(THUNDER, issue.number)
    body = comment.body or ""
    assert "<!-- fusion-perfbot-bisect:thunder -->" in body
    assert (
        f"- **First bad commit:** [`{culprit[:12]}`](https://github.com/{THUNDER}/commit/{culprit})"
        in body
    )
    assert r"by Dee Standin \(dee-standin\), 2027-01-08" in body and "@dee" not in body
    assert (
        f"| 5 | [`{culprit[:12]}`](https://github.com/{THUNDER}/commit/{culprit}) Reorder" in body
    )
    assert body.index("First bad commit") < body.index("| # | build |")  # the answer first
    assert len(fake_github.requests()) - len(fake_github.requests("GET")) == writes + 1
    # Again: nothing new to say, nothing written.
    assert _bisect(plan_path, tmp_path, env, "--post-only", "--post") == ExitCode.OK_NO_REGRESSION
    assert len(fake_github.requests()) - len(fake_github.requests("GET")) == writes + 1


def test_a_break_without_a_package_step_is_named_not_planned(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without stand-ins, the two ends are Thunder 0.2.6 and its slowed state: no build
    between them to install, and the plan says so instead of guessing."""
    env = github_env(fake_github)
    assert _history(tmp_path, env, "--dry-run", "--json", str(tmp_path / "h.json")) == 1
    plan = tmp_path / "plan.json"
    args = ["bisect-plan", "--history-json", str(tmp_path / "h.json"), "--out", str(plan)]
    assert cli.main([*args, *CONFIG], env=env) == ExitCode.OK_NO_REGRESSION
    said = json.loads(plan.read_text())
    assert said["alert"] is None
    assert said["skipped"] == [
        f"{KEY}: 63e9dde7503b measured a thunder side made slower by 0.02, not a build a "
        "bisect can install"
    ]
    assert "not followed:" in capsys.readouterr().out
    assert (
        cli.main(["bisect", "--plan", str(plan), "--state", str(tmp_path / "s.json")], env=env) == 0
    )
    assert not fake_github.requests("GET", "/commits")


def test_the_budget_over_every_call_stops_it_with_the_bracket(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = github_env(fake_github)
    _seed(fake_github)
    plan_path = _plan(tmp_path, env)
    plan = json.loads(plan_path.read_text())
    plan["budget_s"] = 150.0  # about three recorded measurements
    plan_path.write_text(json.dumps(plan))
    capsys.readouterr()
    assert _bisect(plan_path, tmp_path, env, "--dry-run", "--post") == ExitCode.INCONCLUSIVE
    out = capsys.readouterr().out
    assert "its budget of 150 s of measuring is spent" in out
    assert "no first bad build named; last build measured good:" in out
    assert "DRY RUN (--dry-run)" in out and f"(key {KEY})" in out
