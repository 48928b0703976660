"""Several machines in one comment (issue 8): each machine decided on its own runs and noise
model, one comment, the worst exit code; a failed runner check makes a machine non-gating.

The machines are copies of the recorded H200 folder under other asv machine names
(tests/commands/machines_helpers.py): the samples stay as measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from machines_helpers import (
    AGAIN,
    BASE,
    H200,
    REGRESSED,
    calibrated_config,
    copy_machine,
    drop_commit,
    write_checks,
)
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_LOGIN, BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.tell.comment import MARKER

CONFIG = str(REPO_ROOT / "perfbot.toml")
THUNDER = "Lightning-AI/lightning-thunder"


def _report(
    results: list[Path], *extra: str, head: str = REGRESSED, config: str = CONFIG
) -> list[str]:
    folders = [x for d in results for x in ("--results", str(d))]
    return ["report", *folders, "--base", BASE[:8], "--head", head[:8], "--config", config, *extra]


def _two_artifacts(tmp_path: Path) -> tuple[Path, Path]:
    """Two runners' artifacts, each one results folder of its own machine."""
    a, b = tmp_path / "art-a" / "rep-1", tmp_path / "art-b" / "rep-1"
    copy_machine(H200, a, "nvidia-h200")
    copy_machine(H200, b, "gpu-b")
    return a, b


def _part(out: str, machine: str) -> str:
    """One machine's lines on the first screen: from its bold name to the next machine's (or
    to what follows the machines)."""
    rest = out.split(f"\n**{machine}**: ", 1)[1]
    return rest.split("\n**", 1)[0]


def _both(tmp_path: Path, extra: str = "") -> str:
    """A configuration that calibrates both machines of _two_artifacts."""
    return str(calibrated_config(tmp_path / "config", "nvidia-h200", "gpu-b", extra=extra))


def test_two_machines_merge_into_one_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two_artifacts(tmp_path)
    both = _both(tmp_path)
    assert cli.main(_report([a, b], config=both), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert out.count(MARKER) == 1 and out.startswith(MARKER)
    assert "### 🔴 RMSNorm backward: Regressed: Thunder's kernels 11.4x slower on gpu-b, " in out
    assert out.count("docs/METHOD.md") == 1  # the method linked once, not pasted
    # Each machine with its own noise model, the one measured on it, and its own guards.
    gpu_b, h200 = _part(out, "gpu-b"), _part(out, "nvidia-h200")
    assert gpu_b.startswith("🔴 regressed") and h200.startswith("🔴 regressed")
    assert "between-run noise from 12 A/A runs on gpu-b" in gpu_b
    assert "between-run noise from 12 A/A runs on nvidia-h200" in h200
    assert "gpu-b" not in h200
    for part in (gpu_b, h200):
        assert part.count("- 🔴 ") == 2 and part.count("- ⚪ ") == 2  # a line a guard
    assert out.count("| point | µs base | µs head | change |") == 1  # the rows once

    assert cli.main([*_report([a, b], config=both), "--json", "-"], env={}) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 1 and data["overall"] == "regressed"
    assert [m["machine"] for m in data["machines"]] == ["gpu-b", "nvidia-h200"]
    assert all(m["judged"] and m["verdict"]["overall"] == "regressed" for m in data["machines"])
    # The top level says the run as the comment and the status say it (one decision).
    assert data["schema"] == "fusion-perfbot-report/1"
    assert data["headline"] == (
        "🔴 RMSNorm backward: Regressed: Thunder's kernels 11.4x slower on gpu-b, nvidia-h200"
    )
    assert data["status"]["state"] == "failure"


def test_one_machine_is_the_one_machine_comment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two_artifacts(tmp_path)
    assert cli.main(_report([H200]), env={}) == ExitCode.REGRESSION
    alone = capsys.readouterr().out
    assert cli.main(_report([a, b], "--machine", "nvidia-h200"), env={}) == ExitCode.REGRESSION
    assert capsys.readouterr().out == alone  # --machine restricts; the comment is unchanged
    assert "\n**nvidia-h200**: " not in alone


def test_a_machine_with_one_side_is_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two_artifacts(tmp_path)
    drop_commit(b / "gpu-b", REGRESSED)  # gpu-b's head job left nothing
    assert cli.main(_report([a, b]), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert (
        "**gpu-b**: ⚫ not compared: no head results on this machine, only base results in 1 "
        "folder" in out
    )
    headline = (
        "### 🔴 RMSNorm backward: Regressed: Thunder's kernels 11.4x slower on nvidia-h200; "
        "not judged: no head results on this machine, only base results in 1 folder"
    )
    assert out.splitlines()[1] == headline  # what is not judged, said once
    # Only gpu-b asked for: nothing to compare is bad input, saying why.
    assert cli.main(_report([a, b], "--machine", "gpu-b"), env={}) == ExitCode.BAD_INPUT
    assert "no results for head commit 9dc51696 on machine gpu-b" in capsys.readouterr().err


def test_a_repeat_with_one_side_is_left_out_with_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reps = tmp_path / "artifact"
    copy_machine(H200, reps / "rep-1", "nvidia-h200")
    drop_commit(copy_machine(H200, reps / "rep-2", "nvidia-h200"), REGRESSED)
    assert cli.main(_report([reps]), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "1 run(s) of base, 1 of head" in out
    assert "rep-2: only base on nvidia-h200; that repeat is left out" in out


def test_a_failed_runner_check_holds_the_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two_artifacts(tmp_path)
    write_checks(b / "gpu-b", REGRESSED, "GPU clocks throttled: HW slowdown", "<b>@team</b>")
    write_checks(b / "gpu-b", BASE)
    both = _both(tmp_path)
    # gpu-b regressed but does not gate, and reads so (never red); nvidia-h200 still gates.
    assert cli.main(_report([a, b], config=both), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert out.split("\n")[1] == (
        "### 🔴 RMSNorm backward: Regressed: Thunder's kernels 11.4x slower on nvidia-h200; "
        "not judged: a runner check failed on gpu-b \\(head\\): re-run on a fit runner"
    )
    section = _part(out, "gpu-b")
    assert "🔴" not in section and section.startswith("⚪ not judged · ")
    # The rows shown are the gating machine's, not those of the one that does not gate.
    assert "| point | µs base |" in _part(out, "nvidia-h200") and "| point |" not in section
    assert "⚠️ **A runner check failed: this machine's verdict does not gate**" in section
    assert (
        "> - **head**, rep-1, after the measurement (2026-12-01T10:02:00Z): GPU clocks "
        "throttled: HW slowdown; &lt;b&gt;@\u200dteam&lt;/b&gt;"
    ) in section
    assert "<b>" not in out and "@team" not in out
    # Alone, the machine with the failed check sets no failing exit code.
    assert cli.main(_report([b], config=both), env={}) == ExitCode.OK_NO_REGRESSION
    capsys.readouterr()
    assert cli.main([*_report([b], config=both), "--json", "-"], env={}) == 0
    (m,) = json.loads(capsys.readouterr().out)["machines"]
    assert (m["judged"], m["exit_code"], m["state"]) == (False, 0, "runner check failed")
    assert m["verdict"]["overall"] == "regressed"  # as measured; the decision sets it aside
    head = [c for c in m["runner_checks"] if c["side"] == "head"]
    assert head[0]["failed"][0]["problems"][0] == "GPU clocks throttled: HW slowdown"


def test_clean_checks_change_no_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _two_artifacts(tmp_path)
    assert cli.main(_report([a]), env={}) == ExitCode.REGRESSION
    unchecked = capsys.readouterr().out
    write_checks(a / "nvidia-h200", REGRESSED)
    assert cli.main(_report([a]), env={}) == ExitCode.REGRESSION
    checked = capsys.readouterr().out
    note = " · runner checks passed (1 of 2 run(s) checked; 1 run(s) not checked)"
    assert note in checked and note not in unchecked
    assert checked.replace(note, "") == unchecked  # the same comment, the checks named


def _pr(
    fake: LocalGitHub, results: list[Path], number: int, *extra: str, config: str = CONFIG
) -> list[str]:
    argv = _report(results, "--repo", THUNDER, "--pr", str(number), *extra, config=config)
    return ["pr", *argv[1:]]


def _bot_issues(fake: LocalGitHub) -> list[tuple[str, str]]:
    return sorted(
        (i.repo, i.body.splitlines()[-1] if i.body else "")  # the key marker: the last line
        for repo in ("NVIDIA/Fuser", THUNDER)
        for i in fake.state.issues(repo)
        if i.pull is None and i.author == BOT_LOGIN
    )


def test_one_alert_for_every_machine_of_a_pr(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """One PR measured on one machine, then on two: one alert all along (its key names the
    PR, not a machine), its sections the machines' guards; a machine whose check failed adds
    no section and keeps the alert from being declared back."""
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    number = fake_github.state.add_pull_request(
        THUNDER, "x", author=HUMAN_LOGIN, head_ref="x"
    ).number
    push = _both(tmp_path, extra='[alerts]\nopen_on = "push"\n')
    assert cli.main(_pr(fake_github, [H200], number, config=push), env=env) == 1
    before = _bot_issues(fake_github)
    key = f"<!-- fusion-perfbot-key: rmsnorm-bwd|pr|{THUNDER}#{number} -->"
    # Thunder's change alone: nvFuser's build is the same at both sides, so Fuser is not told.
    assert before == [(THUNDER, key)]
    capsys.readouterr()
    a, b = _two_artifacts(tmp_path)
    write_checks(b / "gpu-b", REGRESSED, "another process on the GPU")
    assert cli.main(_pr(fake_github, [a, b], number, config=push), env=env) == 1
    out = capsys.readouterr().out
    assert _bot_issues(fake_github) == before  # found and updated, not duplicated
    assert f"alert issue (primary) in {THUNDER}: unchanged" in out
    (comment,) = fake_github.state.comments_on(THUNDER, number)
    assert "**Alert issues:** [" in comment.body.split("<details>")[0]  # on the first screen
    primary = next(i for i in fake_github.state.issues(THUNDER) if i.pull is None)
    assert "### 🔴 nvidia-h200: Thunder's own kernels, 11.4x slower" in (primary.body or "")
    assert "gpu-b" not in (primary.body or "")  # a machine that does not gate adds nothing
    # The same in a dry run.
    dry = _pr(fake_github, [a, b], number, "--dry-run", config=push)
    assert cli.main(dry, env=env) == 1
    assert f"Would open or update the alert's issues in {THUNDER} (" in capsys.readouterr().out


def test_a_machine_no_model_covers_is_shown_not_judged(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recorded H200 no-change pair labelled as an A100: before, "Regressed: nvFuser's
    hand-written fusion", exit 1, issues in both repositories. Now uncalibrated: shown, never
    red, no issue, a neutral status, and the steps that make a model."""
    a100 = tmp_path / "art" / "rep-1"
    copy_machine(H200, a100, "nvidia-a100")
    assert cli.main(_report([a100], head=AGAIN), env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "### ⚪ RMSNorm backward: Not judged" in out and "🔴" not in out
    assert "**Not judged: no noise model covers nvidia-a100** (no noise model for machine " in out
    assert "Call fusion-perfbot's reusable `calibrate-package.yml`" in out
    assert "`bash .github/scripts/calibration-evidence.sh nvidia-a100` writes" in out
    assert 'fusion-perfbot\'s `docs/CALIBRATION.md`, "Onboarding a GPU kind"' in out
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    number = fake_github.state.add_pull_request(THUNDER, "x", author=HUMAN_LOGIN, head_ref="x")
    argv = ["pr", *_report([a100], head=AGAIN)[1:], "--repo", THUNDER, "--pr", str(number.number)]
    assert cli.main([*argv, "--pr-state", "merged"], env=env) == ExitCode.OK_NO_REGRESSION
    assert _bot_issues(fake_github) == []
    (status,) = fake_github.state.pulls.of(THUNDER, AGAIN)
    assert status.state == "success"
    assert status.description == "Neutral: nvidia-a100 uncalibrated (no noise model)"


def test_the_demo_goes_through_the_same_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _two_artifacts(tmp_path)
    argv = ["demo", "--results", str(a), "--results", str(b), "--base", BASE, "--head", AGAIN]
    assert cli.main([*argv, "--config", _both(tmp_path)], env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "\n**gpu-b**: " in out and "\n**nvidia-h200**: " in out
    assert "Demo finished: status success: Success: " in out


def test_many_machines_still_fit_githubs_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.tell.markdown import MAX_CHARS

    folders = [
        copy_machine(H200, tmp_path / f"a{i}" / "rep-1", f"gpu-{i}").parent for i in range(5)
    ]
    config = str(calibrated_config(tmp_path / "c", *(f"gpu-{i}" for i in range(5))))
    assert cli.main(_report(folders, config=config), env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert len(out) <= MAX_CHARS and sum(f"\n**gpu-{i}**: " in out for i in range(5)) == 5
    assert out.count("docs/METHOD.md") == 1


def test_more_machines_than_the_runner_kinds_is_refused_before_any_write(
    tmp_path: Path, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """An artifact that claims more machines than [results] max_machines (the runner kinds a
    run can have measured) posts nothing at all: no comment, no status, no issue (exit 6); at
    the bound it posts as usual, one comment naming every machine."""
    folders = [
        copy_machine(H200, tmp_path / f"a{i}" / "rep-1", f"gpu-{i}").parent for i in range(5)
    ]
    names = [f"gpu-{i}" for i in range(5)]
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    number = fake_github.state.add_pull_request(THUNDER, "x", author=HUMAN_LOGIN, head_ref="x")
    push = 'open_on = "push"\n'
    for limit, code in ((4, ExitCode.UNTRUSTED), (5, ExitCode.REGRESSION)):
        extra = f"[results]\nmax_machines = {limit}\n[alerts]\n{push}"
        config = str(calibrated_config(tmp_path / f"c{limit}", *names, extra=extra))
        assert cli.main(_pr(fake_github, folders, number.number, config=config), env=env) == code
        captured = capsys.readouterr()
        comments = fake_github.state.comments_on(THUNDER, number.number)
        if code == ExitCode.UNTRUSTED:
            assert "5 machines in the results ('gpu-0', " in captured.err
            assert "more than [results] max_machines = 4: nothing was posted" in captured.err
            assert comments == [] and _bot_issues(fake_github) == []
            assert fake_github.state.pulls.statuses == []
        else:
            (comment,) = comments
            assert all(f"\n**{n}**: " in comment.body for n in names)
            # One alert: its primary issue (Thunder's change: nvFuser's build is unchanged).
            assert len(_bot_issues(fake_github)) == 1


def test_a_pr_from_another_repository_files_no_upstream_issue(
    fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fork's PR, even merged, even with a regression: its comment and its failing status,
    and not one issue in NVIDIA/Fuser or lightning-thunder (issue 20: issues in other
    organisations' trackers come only from heads this repository's writers pushed)."""
    env = {"GITHUB_TOKEN": BOT_TOKEN, "GITHUB_API_URL": fake_github.base_url}
    pull = fake_github.state.add_pull_request(
        THUNDER, "x", author=HUMAN_LOGIN, head_ref="x", head_repo="someone/lightning-thunder"
    )
    fake_github.state.pulls.finish(THUNDER, pull.number, merged=True, by=HUMAN_LOGIN)
    assert cli.main(_pr(fake_github, [H200], pull.number), env=env) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert _bot_issues(fake_github) == [] and "alert issue" not in out
    (comment,) = fake_github.state.comments_on(THUNDER, pull.number)
    assert (
        "no alert issue is filed for a PR from another repository \\(its head is in "
        "someone/lightning-thunder\\)" in comment.body
    )
    (status,) = fake_github.state.pulls.statuses
    assert status.state == "failure"
    # The same PR from a branch of the repository itself files its alert at merge.
    own = fake_github.state.add_pull_request(THUNDER, "y", author=HUMAN_LOGIN, head_ref="y")
    fake_github.state.pulls.finish(THUNDER, own.number, merged=True, by=HUMAN_LOGIN)
    assert cli.main(_pr(fake_github, [H200], own.number), env=env) == ExitCode.REGRESSION
    assert len(_bot_issues(fake_github)) == 1  # Thunder's: nvFuser's build did not change
