"""The whole ``pr`` flow on the recorded H200 data (data/README.md), real PyGithub against the
local fake: what a Thunder PR would get from a real regression, a re-run, a fix, and from two
runs of unchanged code. The shipped perfbot.toml is used, as in CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.github.fake.state import Issue
from bot.tell.comment import MARKER

ROOT = REPO_ROOT
EIGHT_CALL = ROOT / "data" / "h200" / "results"
SINGLE_CALL = ROOT / "data" / "h200-single-call" / "results"
BASELINE, BASELINE_AGAIN, REGRESSED = "06f650c8", "da17d548", "9dc51696"
FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github


def _pr(fake: LocalGitHub, base: str, head: str, results: Path = EIGHT_CALL) -> list[str]:
    number = fake.state.add_pull_request(
        THUNDER, "Rework the nvFuser executor", author=HUMAN_LOGIN, head_ref="rework"
    ).number
    return _argv(number, base, head, results)


def _argv(number: int, base: str, head: str, results: Path = EIGHT_CALL) -> list[str]:
    return [
        "pr",
        "--repo",
        THUNDER,
        "--pr",
        str(number),
        "--results",
        str(results),
        "--base",
        base,
        "--head",
        head,
        "--config",
        str(ROOT / "perfbot.toml"),
    ]


def _env(fake: LocalGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}


def _issues(fake: LocalGitHub) -> dict[str, list[Issue]]:
    return {
        repo: [i for i in fake.state.issues(repo) if i.pull is None and i.author == BOT_LOGIN]
        for repo in (FUSER, THUNDER)
    }


def _snapshot(fake: LocalGitHub, number: int) -> list[object]:
    """Copies of what a re-run could change (the fake hands out its live objects)."""
    issues = [i for found in _issues(fake).values() for i in found]
    return [
        [(i.repo, i.number, i.state, i.body, i.updated_at) for i in issues],
        [(c.id, c.body) for i in issues for c in fake.state.comments_on(i.repo, i.number)],
        [(c.id, c.body) for c in fake.state.comments_on(THUNDER, number)],
    ]


def _url(fake: LocalGitHub, issue: Issue) -> str:
    return f"{fake.web_url}/{issue.repo}/issues/{issue.number}"


def test_regression_rerun_and_recovery(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, env = _pr(fake_github, BASELINE, REGRESSED), _env(fake_github)
    number = int(argv[4])

    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    (comment,) = fake_github.state.comments_on(THUNDER, number)
    assert comment.body.startswith(MARKER) and "**Regressed**" in comment.body
    assert "thunder-prims bfloat16 2048x8192 | 1.023" in comment.body  # the baseline ratio
    issues = _issues(fake_github)
    (fuser,), (thunder,) = issues[FUSER], issues[THUNDER]
    assert fuser.state == thunder.state == "open"
    assert f"[{THUNDER}#{thunder.number}]({_url(fake_github, thunder)})" in (fuser.body or "")
    assert f"[{FUSER}#{fuser.number}]({_url(fake_github, fuser)})" in (thunder.body or "")
    assert f"Tracked in: [{FUSER}#{fuser.number}]" in comment.body
    capsys.readouterr()

    # The same run again: no write reaches GitHub at all.
    before, writes = _snapshot(fake_github, number), len(fake_github.requests())
    writes -= len(fake_github.requests("GET"))
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    assert "comment unchanged" in capsys.readouterr().out
    assert len(fake_github.requests()) - len(fake_github.requests("GET")) == writes
    assert _snapshot(fake_github, number) == before

    # A push that brings Thunder back: the comment is updated in place, both issues close.
    recovered = _argv(number, BASELINE, BASELINE_AGAIN)
    assert cli.main(recovered, env=env) == ExitCode.OK_NO_REGRESSION
    (updated,) = fake_github.state.comments_on(THUNDER, number)
    assert updated.id == before[2][0][0] and "**No change**" in updated.body
    for found in _issues(fake_github).values():
        assert [i.state for i in found] == ["closed"]


@pytest.mark.parametrize(
    ("results", "base", "head"),
    [(EIGHT_CALL, BASELINE, BASELINE_AGAIN), (SINGLE_CALL, "7decf673", "44674d6c")],
    ids=["8-call A/A", "single-call A/A"],
)
def test_two_runs_of_the_same_code_give_a_clean_comment_and_no_issue(
    fake_github: LocalGitHub, results: Path, base: str, head: str
) -> None:
    """The single-call pair differs by +4.4% at fp32 512x4096 (run-to-run noise); the shipped
    per-point thresholds (tests/test_noise.py) are what keep it from reading as a regression."""
    argv = _pr(fake_github, base, head, results)
    assert cli.main(argv, env=_env(fake_github)) == ExitCode.OK_NO_REGRESSION
    (comment,) = fake_github.state.comments_on(THUNDER, int(argv[4]))
    assert "**No change**" in comment.body
    assert _issues(fake_github) == {FUSER: [], THUNDER: []}
