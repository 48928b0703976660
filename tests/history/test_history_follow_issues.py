"""Each confirmed regression's linked issues are judged on its own change, over the fake
GitHub, night after night, on recorded runs tiled under made-up commits (history_tiled.py): a
later regression of the same guard gets its own issues and leaves the first one's alone, and
the first one closes when the guard is back where it started, not when the later one alone
recovers (it would then stay open for ever)."""

from __future__ import annotations

from pathlib import Path

from history_github import key_at, night

from bot.decide.types import GuardKind
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.issue_body import key_marker

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"


def states(fake: LocalGitHub, case: str, split: int, guard: GuardKind = "thunder") -> list[str]:
    """The state of the bot's issue for the change at ``split`` in each repository."""
    key = key_at(case, split, guard)
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
    assert states(fake_github, case, 5) == ["open", "open"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFF") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == states(fake_github, case, 7) == ["open", "open"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFFTT") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == ["open", "open"]  # T is still above S
    assert states(fake_github, case, 7) == ["closed", "closed"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTFFTTSS") == ExitCode.OK_NO_REGRESSION
    assert states(fake_github, case, 5) == ["closed", "closed"]  # back at S: not open for ever
    assert states(fake_github, case, 7) == ["closed", "closed"]


def test_a_later_regression_after_a_return_does_not_reopen_the_first(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    case = "again"
    assert night(fake_github, tmp_path, case, "SSSSSSTT") == ExitCode.REGRESSION
    assert night(fake_github, tmp_path, case, "SSSSSSTTSS") == ExitCode.OK_NO_REGRESSION
    assert states(fake_github, case, 5) == ["closed", "closed"]
    assert night(fake_github, tmp_path, case, "SSSSSSTTSSTT") == ExitCode.REGRESSION
    assert states(fake_github, case, 5) == ["closed", "closed"]  # not reopened
    assert states(fake_github, case, 9) == ["open", "open"]  # its own issues
