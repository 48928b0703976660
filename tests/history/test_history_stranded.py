"""Stranded history issues over the fake GitHub: the bot's open issue for a change the history
no longer shows (a change confirmed on a shorter history whose split moved by a commit, or
that a smaller alpha no longer confirms: filed here as the earlier run filed it) gets one
note, with what the history shows near that range, and is closed as not planned only once
the series there is back within the threshold (every section of an alert; the one guard of an
issue filed before alerts); an issue filed before alerts for the change an alert now tracks is
followed until its guard is back; a rerun changes nothing; a human's copy of the marker is
never touched; a dry run touches nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from history_github import key_at, legacy_key_at, night, writes

from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, HUMAN_LOGIN, LocalGitHub
from bot.github.fake.state import Issue
from bot.github.issue_body import key_marker
from bot.history.stranded import CLOSED_MARK, NOTE_MARK

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"
LABEL = "perf-regression-bot"


#: The sizes marker an alert of Thunder's kernels and the ratio is filed with (its sections).
BOTH = "<!-- fusion-perfbot-sizes: nvidia-h200/ratio=1.0267,nvidia-h200/thunder=1.0284 -->"


def file_earlier(fake: LocalGitHub, key: str, sizes: str = "") -> list[Issue]:
    """The issues an earlier run filed for ``key`` (both repositories; ``sizes``: the sizes
    marker of an alert, none for an issue filed before alerts) and a human's issue quoting its
    marker."""
    body = f"{key_marker(key)}\n{sizes}\n### RMSNorm backward: main-branch history on nvidia-h200"
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


def test_a_change_whose_split_moved_by_a_commit_keeps_its_issue(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """Issue 21: an alert filed at split 4 whose change the longer history finds at split 5
    (one commit away, a guard in common) moves its issues there: re-keyed, one comment saying
    so, updated in place; no second pair is filed, and the move is not said again. When the
    series is back, they close as the alert's issues do (completed)."""
    case = "moved"
    filed = file_earlier(fake_github, key_at(case, 4), BOTH)
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    bots = [
        i for r in (FUSER, THUNDER) for i in fake_github.state.issues(r) if i.author == BOT_LOGIN
    ]
    assert sorted(i.number for i in bots) == sorted(i.number for i in filed)  # none new
    for issue in filed:
        assert issue.state == "open" and key_marker(key_at(case, 5)) in (issue.body or "")
        assert key_marker(key_at(case, 4)) not in (issue.body or "")
        moved = [n for n in notes(fake_github, issue) if "follows it there" in n]
        assert len(moved) == 1 and f"`{key_at(case, 4)}`" in moved[0]
        assert not any(NOTE_MARK in n for n in notes(fake_github, issue))  # not "stranded"
    assert human(fake_github).state == "open" and not notes(fake_github, human(fake_github))
    before, count = snapshot(fake_github), writes(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert writes(fake_github) == count and snapshot(fake_github) == before  # said once
    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    assert {(i.state, i.state_reason) for i in filed} == {("closed", "completed")}


@pytest.mark.parametrize("legacy", [True], ids=["filed-before-alerts"])
def test_a_moved_change_is_noted_once_and_closed_when_the_series_is_back(
    fake_github: LocalGitHub, tmp_path: Path, legacy: bool
) -> None:
    """An issue filed before alerts (``|thunder``: judged on its one guard, never moved: the
    alert at the neighbouring range has issues of its own) whose change moved."""
    case = "moved-legacy" if legacy else "moved"  # the step is at split 5 (S to T)
    earlier = legacy_key_at(case, 4) if legacy else key_at(case, 4)  # filed at split 4
    filed = file_earlier(fake_github, earlier, "" if legacy else BOTH)
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    for issue in filed:
        assert issue.state == "open"
        (note,) = notes(fake_github, issue)
        assert NOTE_MARK in note and CLOSED_MARK not in note
        assert "the history no longer shows this change" in note
        assert f"key `{key_at(case, 5)}`" in note  # what it shows near that range, with its key
        assert "not back within the threshold" in note and "this issue stays open" in note
        assert ("Thunder/nvFuser kernel-time ratio:" in note) is not legacy  # its sections
        assert "nvFuser's hand-written fusion" not in note  # and no other guard
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


def test_an_issue_filed_before_alerts_at_the_alert_s_range_is_followed_until_its_guard_is_back(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """The ``|thunder`` issue an older bot filed for the very change the alert now tracks: one
    note pointing at the alert's key, open while Thunder's kernels stand, closed as completed
    the night they are back (with the alert)."""
    case = "legacy"
    filed = file_earlier(fake_github, legacy_key_at(case, 5))
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    alert = [
        i
        for r in (FUSER, THUNDER)
        for i in fake_github.state.issues(r)
        if key_marker(key_at(case, 5)) in (i.body or "")
    ]
    # the alert, filed as well: in Thunder's repository alone (nvFuser's build is the same at
    # both commits: not told, [alerts] link = "implicated")
    assert [(i.repo, i.state) for i in alert] == [(THUNDER, "open")]
    for issue in filed:
        assert issue.state == "open"
        (note,) = notes(fake_github, issue)
        said = "now a section of one alert with every guard that moved at this range, key"
        assert f"{said} `{key_at(case, 5)}`" in note
        assert "not back within the threshold: this issue stays open" in note
    before, count = snapshot(fake_github), writes(fake_github)
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert writes(fake_github) == count and snapshot(fake_github) == before  # said once
    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    for issue in [*filed, *alert]:
        assert (issue.state, issue.state_reason) == ("closed", "completed")
    for issue in filed:
        first, closing = notes(fake_github, issue)
        assert NOTE_MARK in first and CLOSED_MARK in closing and "closed as completed" in closing


def test_a_change_no_longer_confirmed_where_the_series_is_flat_closes_at_once(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    case = "flat"
    filed = file_earlier(fake_github, legacy_key_at(case, 5, "ratio"))  # filed before alerts
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
