"""Stranded history issues over the fake GitHub: the bot's open issue for a change the history
no longer shows (a change confirmed on a shorter history whose split moved by a commit, or
that a smaller alpha no longer confirms: filed here as the earlier run filed it) gets one
note, with what the history shows near that range, and is closed as not planned only once
the series there is back within the threshold; a rerun changes nothing; a human's copy of the
marker is never touched; a dry run touches nothing."""

from __future__ import annotations

from pathlib import Path

from history_github import key_at, night, writes

from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, HUMAN_LOGIN, LocalGitHub
from bot.github.fake.state import Issue
from bot.github.issue_body import key_marker
from bot.history.stranded import CLOSED_MARK, NOTE_MARK

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
LABEL = "perf-regression-bot"


def file_earlier(fake: LocalGitHub, key: str) -> list[Issue]:
    """The issues an earlier run filed for ``key`` (both repositories) and a human's issue
    quoting its marker."""
    body = f"{key_marker(key)}\n### RMSNorm backward: main-branch history on nvidia-h200"
    filed = [
        fake.state.add_issue(
            repo, "RMSNorm backward (main branch)", author=BOT_LOGIN, body=body, labels=[LABEL]
        )
        for repo in (FUSER, THUNDER)
    ]
    fake.state.add_issue(FUSER, "Same here", author=HUMAN_LOGIN, body=body, labels=[LABEL])
    return filed


def notes(fake: LocalGitHub, issue: Issue) -> list[str]:
    return [c.body for c in fake.state.comments_on(issue.repo, issue.number)]


def snapshot(fake: LocalGitHub) -> list[object]:
    issues = [i for r in (FUSER, THUNDER) for i in fake.state.issues(r)]
    return [
        (i.repo, i.number, i.state, i.state_reason, i.body, i.updated_at, notes(fake, i))
        for i in issues
    ]


def human(fake: LocalGitHub) -> Issue:
    (issue,) = [i for i in fake.state.issues(FUSER) if i.author == HUMAN_LOGIN]
    return issue


def test_a_moved_change_is_noted_once_and_closed_when_the_series_is_back(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    case = "moved"  # the step is at split 5 (S to T); the earlier run filed it at split 4
    filed = file_earlier(fake_github, key_at(case, 4))
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    for issue in filed:
        assert issue.state == "open"
        (note,) = notes(fake_github, issue)
        assert NOTE_MARK in note and CLOSED_MARK not in note
        assert "the history no longer shows this change" in note
        assert f"key `{key_at(case, 5)}`" in note  # what it shows near that range, with its key
        assert "not back within the threshold: this issue stays open" in note
    assert human(fake_github).state == "open" and not notes(fake_github, human(fake_github))

    before, count = snapshot(fake_github), writes(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert writes(fake_github) == count and snapshot(fake_github) == before  # said once

    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    for issue in filed:
        assert (issue.state, issue.state_reason) == ("closed", "not_planned")
        first, closing = notes(fake_github, issue)
        assert (
            NOTE_MARK in first and CLOSED_MARK in closing and "back within the threshold" in closing
        )
    assert human(fake_github).state == "open" and not notes(fake_github, human(fake_github))
    before, count = snapshot(fake_github), writes(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    assert writes(fake_github) == count and snapshot(fake_github) == before


def test_a_change_no_longer_confirmed_where_the_series_is_flat_closes_at_once(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    case = "flat"
    filed = file_earlier(fake_github, key_at(case, 5, "ratio"))
    assert night(fake_github, tmp_path, case, "SSSSSSSS") == ExitCode.OK_NO_REGRESSION
    for issue in filed:
        assert (issue.state, issue.state_reason) == ("closed", "not_planned")
        (note,) = notes(fake_github, issue)
        assert "no change of this guard" in note and "closed as not planned" in note
    assert human(fake_github).state == "open"
    before = snapshot(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSSS") == ExitCode.OK_NO_REGRESSION
    assert snapshot(fake_github) == before


def test_a_dry_run_touches_nothing(fake_github: LocalGitHub, tmp_path: Path) -> None:
    case = "dry"
    file_earlier(fake_github, key_at(case, 5))
    before = snapshot(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSSS", "--dry-run") == ExitCode.OK_NO_REGRESSION
    assert fake_github.requests() == [] and snapshot(fake_github) == before
