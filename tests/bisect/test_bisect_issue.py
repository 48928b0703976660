"""The bisect section on the linked issue, over real PyGithub against the local fake GitHub:
the issue is the one the `pr` flow filed on the recorded regression, found by its key; the
section is one comment, created once, left unchanged by a re-run, never a human's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bisect_helpers import BROKEN, NIGHTLIES, SLOW5, UNFUSED, bisect
from bisect_helpers import THUNDER as THUNDER_RECORDED
from paths import DATA, REPO_ROOT

from bot.bisect.words import marker
from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.tell.markdown import escape_md

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
TIMELINE = [*NIGHTLIES, SLOW5, UNFUSED]


def _env(fake: LocalGitHub) -> dict[str, str]:
    return {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake.base_url}


def _filed_by_the_pr_flow(fake: LocalGitHub) -> tuple[str, int]:
    """Run `pr` on the recorded regression (stock Thunder 0.2.6 against its unfused backward),
    the PR merged: it files the alert whose primary issue, in Thunder, the bisect then finds
    by its key."""
    pr = fake.state.add_pull_request(FUSER, "a change", author=HUMAN_LOGIN, head_ref="x").number
    fake.state.pulls.finish(FUSER, pr, merged=True, by=HUMAN_LOGIN)
    argv = ["pr", "--results", str(DATA / "h200" / "results"), "--base", "06f650c8",
            "--head", "9dc51696", "--repo", FUSER, "--pr", str(pr),
            "--config", str(REPO_ROOT / "perfbot.toml")]  # fmt: skip
    assert cli.main(argv, env=_env(fake)) == ExitCode.REGRESSION
    key = f"rmsnorm-bwd|pr|{FUSER}#{pr}"
    (issue,) = [i for i in fake.state.issues(THUNDER)
                if f"<!-- fusion-perfbot-key: {key} -->" in (i.body or "")]  # fmt: skip
    return key, issue.number


def _sections(fake: LocalGitHub, number: int) -> list[str]:
    return [c.body for c in fake.state.comments_on(THUNDER, number) if marker("thunder") in c.body]


def test_the_section_lands_on_the_key_s_issue_once_and_a_rerun_changes_nothing(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    key, number = _filed_by_the_pr_flow(fake_github)
    capsys.readouterr()
    where = ("--repo", THUNDER, "--issue-key", key)
    code, data = bisect(tmp_path, TIMELINE, *where, env=_env(fake_github))
    assert code == 0 and data["first_bad"] == SLOW5
    (body,) = _sections(fake_github, number)
    assert body.startswith(
        marker("thunder") + "\n### Bisect of Thunder builds: first bad build found"
    )
    assert f"**First bad build:** {escape_md(SLOW5)}\n" in body
    assert f"**Last good build:** {escape_md(NIGHTLIES[-1])}\n" in body
    assert "5 measurement(s) for 8 builds" in body
    assert f"| 7 | {escape_md(UNFUSED)} | bad | 1 | ratio: thunder-prims \\+1374.1%" in body
    assert f"| 1 | {escape_md(NIGHTLIES[1])} |" not in body  # not measured: not listed
    err = capsys.readouterr().err
    assert f"bisect section created on {THUNDER}#{number}" in err  # --json: words on stderr
    writes = len(fake_github.requests("POST")) + len(fake_github.requests("PATCH"))

    code, again = bisect(tmp_path, TIMELINE, *where, env=_env(fake_github))
    assert code == 0 and again["measured_now"] == 0
    assert f"bisect section unchanged on {THUNDER}#{number}" in capsys.readouterr().err
    assert len(fake_github.requests("POST")) + len(fake_github.requests("PATCH")) == writes
    assert len(_sections(fake_github, number)) == 1


def test_a_human_s_copy_of_the_marker_is_never_edited(
    tmp_path: Path, fake_github: LocalGitHub
) -> None:
    _, number = _filed_by_the_pr_flow(fake_github)
    fake_github.state.add_comment(THUNDER, number, f"{marker('thunder')}\nmine", author=HUMAN_LOGIN)
    code, _ = bisect(tmp_path, TIMELINE, "--repo", THUNDER, "--issue", str(number),
                     env=_env(fake_github))  # fmt: skip
    assert code == 0
    comments = fake_github.state.comments_on(THUNDER, number)
    assert [c.body for c in comments if c.author == HUMAN_LOGIN][-1].endswith("mine")
    assert len([c for c in comments if c.author == BOT_LOGIN and marker("thunder") in c.body]) == 1


def test_an_issue_that_quotes_the_key_but_is_a_human_s_is_not_the_key_s_issue(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    key = f"rmsnorm-bwd|pr|{FUSER}#7"
    fake_github.state.add_issue(
        THUNDER,
        "copy",
        author=HUMAN_LOGIN,
        body=f"<!-- fusion-perfbot-key: {key} -->",
        labels=["perf-regression-bot"],
    )
    code, _ = bisect(tmp_path, TIMELINE, "--repo", THUNDER, "--issue-key", key,
                     env=_env(fake_github))  # fmt: skip
    assert code == ExitCode.GITHUB_FAILURE
    assert "no issue of fusion-perfbot[bot]" in capsys.readouterr().err
    assert fake_github.state.comments_on(THUNDER, 1) == []
    assert (tmp_path / "state.json").is_file()  # the measurements are kept


def test_a_github_failure_loses_no_measurement_and_the_next_run_posts(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    key, number = _filed_by_the_pr_flow(fake_github)
    fake_github.inject("POST", rf"/repos/{THUNDER}/issues/{number}/comments$", 502)
    where = ("--repo", THUNDER, "--issue-key", key)
    code, data = bisect(tmp_path, TIMELINE, *where, env=_env(fake_github))
    assert code == ExitCode.GITHUB_FAILURE and data["first_bad"] == SLOW5
    err = capsys.readouterr().err
    assert "step 'post the bisect section on" in err and "HTTP 502" in err
    assert _sections(fake_github, number) == []
    code, again = bisect(tmp_path, TIMELINE, *where, env=_env(fake_github))
    assert code == 0 and again["measured_now"] == 0 and len(_sections(fake_github, number)) == 1


def test_without_a_token_the_section_is_printed_not_posted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    builds = tmp_path / "b.txt"
    builds.write_text("\n".join(TIMELINE[1:-1]))
    argv = ["bisect", "--package", "thunder", "--good", TIMELINE[0], "--bad", TIMELINE[-1],
            "--builds", str(builds), "--points", "float32/16384x8192",
            "--state", str(tmp_path / "s.json"),
            "--recorded", str(THUNDER_RECORDED), "--config", str(REPO_ROOT / "perfbot.toml"),
            "--repo", THUNDER, "--issue", "3"]  # fmt: skip
    assert cli.main(argv, env={}) == 0
    out = capsys.readouterr().out
    assert "DRY RUN (no PERFBOT_ISSUES_TOKEN or GITHUB_TOKEN): would create or update" in out
    assert f"{marker('thunder')}\n### Bisect of Thunder builds" in out
    assert "; intervals: between-run noise from 12 A/A runs on nvidia-h200\n" in out


def test_a_history_break_gives_the_points_and_the_issue_by_its_key(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """`history` finds Thunder 0.2.5's break after six stock runs and files its alert; its
    JSON names the broken points and the alert's key, and the key the primary issue (in
    Thunder, whose points broke): the bisect over the nightlies before 0.2.5 takes both and
    lands its section there."""
    order = tmp_path / "order.txt"
    order.write_text("\n".join(["06f650c8", "da17d548", "6c840f30", "022fefdd", "324c493b",
                                "016e16b1", "f888795e", "0e8c6c35"]) + "\n")  # fmt: skip
    history = tmp_path / "history.json"
    folders = [DATA / "h200" / "results", DATA / "h200-states" / "results",
               DATA / "h200-under-test" / "thunder-broken-pair" / "results"]  # fmt: skip
    argv = ["history", *(f"--results={f}" for f in folders), "--order", str(order),
            "--config", str(REPO_ROOT / "perfbot.toml"), "--json", str(history)]  # fmt: skip
    assert cli.main(argv, env=_env(fake_github)) == ExitCode.BROKEN
    (alert,) = json.loads(history.read_text())["alerts"]
    key = "rmsnorm-bwd|nvidia-h200|016e16b1cc86..f888795e1358"  # the break's alert: its range
    assert (alert["key"], alert["primary"]) == (key, THUNDER)
    code, data = bisect(
        tmp_path, [*NIGHTLIES, BROKEN], "--from-report", str(history), "--repo", THUNDER,
        "--issue-key", key, points="", env=_env(fake_github),
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert (data["first_bad"], data["last_good"]) == (BROKEN, NIGHTLIES[-1])
    assert len(data["points"]) == 9  # every Thunder point broke
    (issue,) = [i for i in fake_github.state.issues(THUNDER) if i.author == BOT_LOGIN]
    assert len(_sections(fake_github, issue.number)) == 1
