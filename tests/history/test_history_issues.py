"""``python -m bot history`` against the fake GitHub (real PyGithub over HTTP): a confirmed
regression opens linked issues in both repositories, each linking the other; a rerun on the
same results changes nothing; a later history where the guard is back closes them; a pending
change never files; a failed GitHub step is exit 4 with the report still printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from history_data import BROKEN, STOCK, THUNDER_2, folder_args, order_file
from history_github import CONFIG, github_env, writes

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.fake.state import Issue

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github
STEP = [*STOCK[:6], *THUNDER_2]


def _history(tmp: Path, commits: list[str], *more: str) -> list[str]:
    return ["history", *folder_args(), "--order", str(order_file(tmp, commits)), *CONFIG, *more]


def _issues(fake: LocalGitHub) -> dict[str, list[Issue]]:
    return {r: [i for i in fake.state.issues(r) if i.author == BOT_LOGIN] for r in (FUSER, THUNDER)}


def _snapshot(fake: LocalGitHub) -> list[object]:
    issues = [i for found in _issues(fake).values() for i in found]
    return [
        [(i.repo, i.number, i.state, i.body, i.title, i.updated_at) for i in issues],
        [(c.id, c.body) for i in issues for c in fake.state.comments_on(i.repo, i.number)],
    ]


def test_regression_rerun_and_recovery(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = github_env(fake_github)
    assert (
        cli.main(_history(tmp_path, STEP, "--repo", "NVIDIA/Fuser"), env=env) == ExitCode.REGRESSION
    )
    out = capsys.readouterr().out
    assert "[regressed] Thunder's own kernel time: last good 016e16b1, first bad 63e9dde7" in out
    issues = _issues(fake_github)
    assert [len(found) for found in issues.values()] == [2, 2]  # ratio and Thunder, each repo
    for guard in ("ratio", "thunder"):
        pair = {
            repo: next(i for i in found if f"|{guard} -->" in (i.body or ""))
            for repo, found in issues.items()
        }
        fuser, thunder = pair[FUSER], pair[THUNDER]
        body = fuser.body or ""
        assert fuser.state == thunder.state == "open"
        assert f"[{THUNDER}#{thunder.number}](" in body and f"[{FUSER}#{fuser.number}](" in (
            thunder.body or ""
        )
        assert "016e16b1cc86" in body and "63e9dde7503b" in body  # the range: last good, first bad
        assert (
            "https://github.com/NVIDIA/Fuser/commit/63e9dde7503b46d0e18fb3173d688d039ae3f0ad"
            in body
        )
        assert "main branch" in (fuser.title or "") and "since 63e9dde7503b" in (fuser.title or "")
        assert f"{THUNDER} (primary)" in body  # Thunder's kernels moved: its repository first
    capsys.readouterr()

    before, written = _snapshot(fake_github), writes(fake_github)  # the same run again
    assert cli.main(_history(tmp_path, STEP, "--repo", FUSER), env=env) == ExitCode.REGRESSION
    assert writes(fake_github) == written and _snapshot(fake_github) == before
    assert "unchanged" in capsys.readouterr().out

    later = [*STEP, *STOCK[6:9]]  # Thunder back at 223f991a
    assert cli.main(_history(tmp_path, later), env=env) == ExitCode.OK_NO_REGRESSION
    for found in _issues(fake_github).values():
        assert [i.state for i in found] == ["closed", "closed"]
        for issue in found:
            (note,) = [c.body for c in fake_github.state.comments_on(issue.repo, issue.number)]
            assert "back since" in note and "223f991a" in note
    after = _snapshot(fake_github)
    assert cli.main(_history(tmp_path, later), env=env) == ExitCode.OK_NO_REGRESSION
    assert _snapshot(fake_github) == after  # closed stays closed, no note twice


def test_a_pending_change_files_nothing(fake_github: LocalGitHub, tmp_path: Path) -> None:
    code = cli.main(_history(tmp_path, [*STOCK[:6], THUNDER_2[0]]), env=github_env(fake_github))
    assert code == ExitCode.OK_NO_REGRESSION
    assert _issues(fake_github) == {FUSER: [], THUNDER: []} and writes(fake_github) == 0


def test_a_pending_break_files_nothing(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One broken commit at the newest end is a pending break (min_after is 2): it is reported,
    and nothing is filed until a second commit confirms it."""
    code = cli.main(_history(tmp_path, [*STOCK[:6], BROKEN[0]]), env=github_env(fake_github))
    assert code == ExitCode.OK_NO_REGRESSION
    assert (
        "[pending] 18 point(s): last ran 016e16b1, failing from f888795e" in capsys.readouterr().out
    )
    assert _issues(fake_github) == {FUSER: [], THUNDER: []} and writes(fake_github) == 0


def test_a_break_files_its_issue_with_the_error(fake_github: LocalGitHub, tmp_path: Path) -> None:
    code = cli.main(_history(tmp_path, [*STOCK[:6], *BROKEN]), env=github_env(fake_github))
    assert code == ExitCode.BROKEN
    marker = (
        "<!-- fusion-perfbot-key: rmsnorm-bwd|nvidia-h200|016e16b1cc86..f888795e1358|broken -->"
    )
    found = [i for i in _issues(fake_github)[THUNDER] if marker in (i.body or "")]
    (issue,) = found
    assert "not a valid Executor" in (issue.body or "") and "18 point(s)" in (issue.title or "")


def test_without_a_token_it_says_what_it_would_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(_history(tmp_path, STEP), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "DRY RUN (no GITHUB_TOKEN or PERFBOT_ISSUES_TOKEN): no issue was touched." in out
    assert f"[thunder] Would open or update linked issues in {THUNDER}, {FUSER}" in out
    assert "  key: rmsnorm-bwd|nvidia-h200|016e16b1cc86..63e9dde7503b|thunder" in out


def test_a_github_failure_is_exit_4_after_the_report(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_github.inject("GET", r"/issues", 502, times=10)
    # The configuration's own retry budget, but none of its minute of back-off: the client gives
    # up on the second 502 (its first retry waits 0 s) instead of sleeping 7 s through ten.
    config = tmp_path / "perfbot.toml"
    text = Path(CONFIG[1]).read_text(encoding="utf-8")
    changes = {  # the copy lives elsewhere: its noise model named by full path
        "max_retry_wait_s = 60.0": "max_retry_wait_s = 0.0",
        'noise_model = "noise/': f'noise_model = "{Path(CONFIG[1]).parent}/noise/',
    }
    for old, new in changes.items():
        assert old in text
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8")
    argv = [*_history(tmp_path, STEP), "--config", str(config)]
    code = cli.main(argv, env=github_env(fake_github))
    captured = capsys.readouterr()
    assert code == ExitCode.GITHUB_FAILURE
    assert "Result: REGRESSION (exit 1)" in captured.out  # the report came first
    assert "step 'sync linked issues' failed" in captured.err


def test_json_to_stdout_is_the_json_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([*_history(tmp_path, STEP), "--json", "-"], env={}) == ExitCode.REGRESSION
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "perfbot-history/1" and data["exit_code"] == 1
    (m,) = data["machines"]
    changes = {(c["guard"], c["status"], c["first_bad"][:8]) for c in m["changes"]}
    assert changes == {("thunder", "confirmed", THUNDER_2[0]), ("ratio", "confirmed", THUNDER_2[0])}
    size = next(c["size"] for c in m["changes"] if c["guard"] == "ratio")
    assert size["low"] > 1.0 and "geometric mean" in size["what"]
    points = next(c["points"] for c in m["changes"] if c["guard"] == "thunder")
    assert points and all(p["low"] > 1.0 and p["point"].startswith("thunder-") for p in points)
    assert [c["sha"][:8] for c in m["commits"]] == STEP
