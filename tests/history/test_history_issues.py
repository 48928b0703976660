"""``python -m bot history`` against the fake GitHub (real PyGithub over HTTP): a break on main
is one alert, one issue in the repository that owns it with a section a guard, and a short
linked one in the other where that one is told (``[alerts] link``: "always" here where the two
issues' mechanics are tested; the shipped "implicated" tells nvFuser nothing of Thunder's own
change, tests/history/test_history_owners.py), each linking the other; a rerun on the same
results changes nothing; a later history where every section is back closes both; a pending
change never files; a failed GitHub step is exit 4 with the report still printed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from history_data import BROKEN, STOCK, THUNDER_2, folder_args, order_file
from history_github import CONFIG, github_env, link_config, writes

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, LocalGitHub
from bot.github.fake.state import Issue

FUSER, THUNDER = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github
STEP = [*STOCK[:6], *THUNDER_2]


def _history(tmp: Path, commits: list[str], *more: str) -> list[str]:
    return ["history", *folder_args(), "--order", str(order_file(tmp, commits)), *CONFIG, *more]


def _always(tmp: Path, commits: list[str], *more: str) -> list[str]:
    """As :func:`_history`, with ``[alerts] link = "always"``: every configured repository
    gets its issue (the rule before the provenance records decided who is told)."""
    return [*_history(tmp, commits), *link_config(tmp, "always"), *more]


def _issues(fake: LocalGitHub) -> dict[str, list[Issue]]:
    return {r: [i for i in fake.state.issues(r) if i.author == BOT_LOGIN] for r in (FUSER, THUNDER)}


def _snapshot(fake: LocalGitHub) -> list[object]:
    issues = [i for found in _issues(fake).values() for i in found]
    return [
        [(i.repo, i.number, i.state, i.body, i.title, i.updated_at) for i in issues],
        [(c.id, c.body) for i in issues for c in fake.state.comments_on(i.repo, i.number)],
    ]


KEY = "rmsnorm-bwd|nvidia-h200|016e16b1cc86..63e9dde7503b"  # the STEP's alert, spelled out


def test_the_step_is_one_alert_a_rerun_writes_nothing_the_recovery_closes_both(
    fake_github: LocalGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thunder +2% on main moves Thunder's kernel time and the ratio at one split: one alert,
    keyed by the range alone, one issue in Thunder (the owner) with both sections and, with
    ``link = "always"``, one short linked issue in Fuser; before alerts it was four issues
    (each guard, each repo)."""
    env = github_env(fake_github)
    assert cli.main(_always(tmp_path, STEP, "--repo", FUSER), env=env) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "[regressed] Thunder's own kernel time: last good 016e16b1, first bad 63e9dde7" in out
    issues = _issues(fake_github)
    assert [len(found) for found in issues.values()] == [1, 1]
    (fuser,), (thunder,) = issues[FUSER], issues[THUNDER]
    primary, linked = thunder.body or "", fuser.body or ""
    for body in (primary, linked):
        assert f"<!-- fusion-perfbot-key: {KEY} -->" in body
        assert "<!-- fusion-perfbot-sizes: nvidia-h200/ratio=1.02" in body
        assert ",nvidia-h200/thunder=1.02" in body
        assert f"{THUNDER} (primary)" in body  # Thunder's kernels moved: its repository first
    assert fuser.state == thunder.state == "open"
    assert f"[{FUSER}#{fuser.number}](" in primary and f"[{THUNDER}#{thunder.number}](" in linked
    assert primary.count("\n#### ") == 2  # a section a guard, each under its own heading
    assert "#### Thunder's own kernel time (regressed)" in primary
    assert "#### Thunder/nvFuser kernel-time ratio (regressed)" in primary
    assert primary.count("How this is decided") == 1  # the method once
    assert primary.count("**One alert for the break between last good") == 1  # the range once
    commit = "https://github.com/NVIDIA/Fuser/commit/63e9dde7503b46d0e18fb3173d688d039ae3f0ad"
    assert commit in primary and commit in linked
    assert "main branch" in (thunder.title or "") and "since 63e9dde7503b" in (thunder.title or "")
    # The second guard by what it says (issue 38), never "and 1 more".
    assert "(thunder-func geomean +2.8%, ratio +2.7%)" in (thunder.title or "")
    assert f"tracked in {THUNDER}" in (fuser.title or "")
    assert f"filed in {THUNDER}**" in linked and "| point |" not in linked  # short: no table
    assert "- Thunder's kernels slower: +2." in linked
    assert "- Thunder slower relative to nvFuser: +2." in linked
    assert f'- {FUSER} has the linked issue: \\[alerts\\] link \\= "always".' in primary
    capsys.readouterr()

    before, written = _snapshot(fake_github), writes(fake_github)  # the same run again
    assert cli.main(_always(tmp_path, STEP, "--repo", FUSER), env=env) == ExitCode.REGRESSION
    assert writes(fake_github) == written and _snapshot(fake_github) == before
    assert "unchanged" in capsys.readouterr().out

    later = [*STEP, *STOCK[6:9]]  # Thunder back at 223f991a
    assert cli.main(_always(tmp_path, later), env=env) == ExitCode.OK_NO_REGRESSION
    for found in _issues(fake_github).values():
        (issue,) = found
        assert (issue.state, issue.state_reason) == ("closed", "completed")
        (note,) = [c.body for c in fake_github.state.comments_on(issue.repo, issue.number)]
        assert note.count("back since") == 2 and "223f991a" in note
        assert "Every section is back: closed as completed." in note
    after = _snapshot(fake_github)
    assert cli.main(_always(tmp_path, later), env=env) == ExitCode.OK_NO_REGRESSION
    assert _snapshot(fake_github) == after  # closed stays closed, no note twice


def test_a_closed_alert_stays_closed_and_is_told_once_when_a_section_joins(
    fake_github: LocalGitHub, tmp_path: Path
) -> None:
    """A maintainer closed the alert while it showed the ratio alone (the sizes marker of a
    night when only the ratio was confirmed); now Thunder's kernels are a section too: one
    comment on the closed issue naming the section that joined, never a reopen, and the next
    night says nothing (the marker moved on). Thunder's change alone: Thunder's issue alone
    (nvFuser's build is the same at both commits: it is not told)."""
    env = github_env(fake_github)
    assert cli.main(_history(tmp_path, STEP), env=env) == ExitCode.REGRESSION
    assert _issues(fake_github)[FUSER] == [] and len(_issues(fake_github)[THUNDER]) == 1
    for issue in _issues(fake_github)[THUNDER]:
        ratio_alone = re.sub(r"(fusion-perfbot-sizes: [^,]*),\S*", r"\1", issue.body or "")
        assert ratio_alone != issue.body
        issue.body, issue.state, issue.state_reason = ratio_alone, "closed", "completed"
    assert cli.main(_history(tmp_path, STEP), env=env) == ExitCode.REGRESSION
    assert _issues(fake_github)[FUSER] == []
    for issue in _issues(fake_github)[THUNDER]:
        assert (issue.state, issue.state_reason) == ("closed", "completed")
        (note,) = [c.body for c in fake_github.state.comments_on(issue.repo, issue.number)]
        assert note.startswith(
            "Clearly worse on nvidia-h200's main branch at 016e16b1cc86..63e9dde7503b"
        )
        assert "nvidia-h200/thunder: new → +2.8%" in note and "leaves this issue closed" in note
    before = _snapshot(fake_github)
    assert cli.main(_history(tmp_path, STEP), env=env) == ExitCode.REGRESSION
    assert _snapshot(fake_github) == before


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
    marker = "<!-- fusion-perfbot-key: rmsnorm-bwd|nvidia-h200|016e16b1cc86..f888795e1358 -->"
    (issue,) = [i for i in _issues(fake_github)[THUNDER] if marker in (i.body or "")]
    assert "not a valid Executor" in (issue.body or "") and "18 point(s)" in (issue.title or "")
    assert "#### Every point still runs (broken)" in (issue.body or "")
    # Thunder 0.2.6 -> 0.2.5 broke Thunder's points: nvFuser's build is the same, Fuser is not
    # told (with link = "always" it got the short linked issue).
    assert _issues(fake_github)[FUSER] == []
    assert f"- {FUSER} is not told: nvFuser 0.2.36\\+git7e04d26 is the same at base and head" in (
        issue.body or ""
    )


def test_without_a_token_it_says_what_it_would_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(_history(tmp_path, STEP), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "DRY RUN (no GITHUB_TOKEN or PERFBOT_ISSUES_TOKEN): no issue was touched." in out
    assert (
        f"[016e16b1..63e9dde7] Would open or update the alert's issues in {THUNDER} (primary)\n"
        f"  key: {KEY}\n  owner: what moved points at Thunder\n"
        "  sections: nvidia-h200/ratio (regressed, +2.7%), nvidia-h200/thunder (regressed, +2.8%)"
    ) in out  # Thunder's change alone: Fuser is not told (link = "implicated", as shipped)
    assert out.count("  key: ") == 1  # one alert, not one a guard


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
    (alert,) = data["alerts"]
    assert (alert["key"], alert["state"], alert["primary"], alert["linked"]) == (
        KEY,
        "regressed",
        THUNDER,
        [],  # Thunder's change alone: Fuser is not told (link = "implicated", as shipped)
    )
    assert (alert["repos"], alert["upstream_none"]) == ([THUNDER], "")
    ((told,),) = [[(t["repo"], t["told"]) for t in alert["told"]]]
    assert told == (FUSER, False)
    sections = [(s["name"], s["guard"], s["state"], s["owner"]) for s in alert["sections"]]
    assert sections == [
        ("nvidia-h200/ratio", "ratio", "regressed", "thunder"),
        ("nvidia-h200/thunder", "thunder", "regressed", "thunder"),
    ]
    assert all(1.02 < s["size"] < 1.03 for s in alert["sections"])
