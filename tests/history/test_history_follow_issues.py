"""Each alert is judged on its own changes, over the fake GitHub, night after night, on recorded
runs tiled under made-up commits (history_tiled.py): a later regression of the same guards gets
its own alert and leaves the first one's alone, and the first one closes when its guards are
back where they started, not when the later one alone recovers (it would then stay open for
ever). Thunder's runs move at every step and nvFuser's build never does: each alert is one
issue, in Thunder's repository (``[alerts] link = "implicated"``: nvFuser is not told)."""

from __future__ import annotations

from pathlib import Path

from history_github import key_at, night

from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.issue_body import key_marker

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"


def states(fake: LocalGitHub, case: str, split: int) -> list[str]:
    """The state of the bot's issue for the alert at ``split`` in each repository (Thunder's
    kernels and the ratio moved there: one alert, one issue, in Thunder's repository)."""
    key = key_at(case, split)
    out = []
    for repo in (FUSER, THUNDER):
        found = [
            i
            for i in fake.state.issues(repo)
            if i.author == BOT_LOGIN and key_marker(key) in (i.body or "")
        ]
        out += [i.state for i in found]
    return out


def test_a_stacked_regression_leaves_the_first_open_until_the_guard_is_back(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """S: stock, T: slow-thunder-2 (+2.5%), F: slow-thunder-5. The first regression (S to T,
    split 5) is still standing when the second (T to F, split 7) comes; the second recovers
    (F to T, split 9) while the first still stands; then the first recovers (T to S, split 11)."""
    case = "stacked"
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == ["open"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFF") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == states(fake_github, case, 7) == ["open"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFFTT") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == ["open"]  # T is still above S
    assert states(fake_github, case, 7) == ["closed"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFFTTSS") == ExitCode.OK_NO_REGRESSION
    assert states(fake_github, case, 5) == ["closed"]  # back at S: not open for ever
    assert states(fake_github, case, 7) == ["closed"]


def test_a_later_regression_after_a_return_does_not_reopen_the_first(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    case = "again"
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    assert states(fake_github, case, 5) == ["closed"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTSSTT") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == ["closed"]  # not reopened
    assert states(fake_github, case, 9) == ["open"]  # its own issue


def test_a_standing_alert_is_said_once_not_every_night(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """The night after the alert opened, one more slower commit moves its figures (the body,
    kept up to date without a notification) but not its sections' states: no comment."""
    case = "standing"
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    bodies = [i.body for r in (FUSER, THUNDER) for i in fake_github.state.issues(r)]
    assert night(fake_github, tmp_path, case, "SSSSSSTTT") == ExitCode.REGRESSION
    issues = [i for r in (FUSER, THUNDER) for i in fake_github.state.issues(r)]
    assert len(issues) == 1 and [(i.repo, i.state) for i in issues] == [(THUNDER, "open")]
    assert [i.body for i in issues] != bodies  # the figures moved
    assert all(fake_github.state.comments_on(i.repo, i.number) == [] for i in issues)
