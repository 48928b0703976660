"""The command line end to end: real asv files in, real PyGithub against the local fake out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from data_helpers import SYNTHETIC_CONFIG, SyntheticResults, damaged_copy, synthetic
from paths import REPO_ROOT, run_bot_process

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.github.fake import BOT_TOKEN, HUMAN_LOGIN, LocalGitHub
from bot.tell.comment import MARKER

__all__ = ["synthetic"]
PRIMARY, SECONDARY = "NVIDIA/Fuser", "Lightning-AI/lightning-thunder"  # seeded by fake_github
ROOT = REPO_ROOT


def _args(synth: SyntheticResults, head: str, *extra: str) -> list[str]:
    return [
        "--results",
        str(synth.results_dir),
        "--base",
        synth.commits["base"][:8],
        "--head",
        synth.commits[head],
        "--config",
        str(SYNTHETIC_CONFIG),
        *extra,
    ]


def test_python_dash_m_bot_runs() -> None:
    done = run_bot_process("--help")
    assert done.returncode == 0 and "GITHUB_FAILURE" in done.stdout


def test_report_regression(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verdict.json"
    code = cli.main(["report", *_args(synthetic, "thunder_slower", "--json", str(out))], env={})
    assert code == ExitCode.REGRESSION
    assert capsys.readouterr().out.startswith(MARKER)
    data = json.loads(out.read_text())
    assert data["overall"] == "regressed" and data["head"] == synthetic.commits["thunder_slower"]


def test_report_no_regression(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["report", *_args(synthetic, "same")], env={}) == ExitCode.OK_NO_REGRESSION
    assert "### ⚪ RMSNorm backward: No change\n" in capsys.readouterr().out


def test_bad_input_names_the_step_and_posts_nothing(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    synth = damaged_copy(synthetic, tmp_path)
    path = synth.result_file("same")
    path.write_text(path.read_text()[:100])
    code = cli.main(["report", *_args(synth, "same")], env={})
    assert code == ExitCode.BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "fusion-perfbot report: step 'read results' failed:" in captured.err
    assert "truncated JSON" in captured.err


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (
            ["report", "--results", "x", "--base", "no-such-ref", "--head", "abcd"],
            "is not a commit",
        ),
        (
            [
                "pr",
                "--results",
                "x",
                "--base",
                "abcd",
                "--head",
                "abcd",
                "--repo",
                "a",
                "--pr",
                "1",
            ],
            "not OWNER/NAME",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_usage_errors(argv: list[str], where: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == ExitCode.USAGE
    assert where in capsys.readouterr().err


def test_bad_config_is_a_usage_error(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[verdict]\nalpha = 2\n")
    code = cli.main(["report", *_args(synthetic, "same"), "--config", str(bad)], env={})
    assert code == ExitCode.USAGE
    assert "step 'load configuration' failed" in capsys.readouterr().err


def test_unwritable_json_leaves_no_output(
    synthetic: SyntheticResults, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing-dir" / "v.json"
    code = cli.main(["report", *_args(synthetic, "same", "--json", str(target))], env={})
    assert code == ExitCode.USAGE
    captured = capsys.readouterr()
    assert captured.out == "" and f"step 'write {target}' failed" in captured.err


def test_unexpected_error_still_names_its_step(
    synthetic: SyntheticResults, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("kaboom")

    import bot.decide.verdict

    monkeypatch.setattr(bot.decide.verdict, "decide", boom)  # what load imports when it runs
    assert cli.main(["report", *_args(synthetic, "same")], env={}) == ExitCode.BAD_INPUT
    assert "step 'compute verdict' failed: RuntimeError: kaboom" in capsys.readouterr().err


def test_pr_without_token_runs_dry(
    synthetic: SyntheticResults, fake_github: LocalGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"GITHUB_API_URL": fake_github.base_url}
    argv = ["pr", *_args(synthetic, "thunder_slower"), "--repo", PRIMARY, "--pr", "1"]
    assert cli.main(argv, env=env) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert out.startswith("DRY RUN (no GITHUB_TOKEN): nothing was posted.")
    assert "Would set the perfbot status: failure (failure): Regressed: " in out
    # Thunder slower: one alert, Thunder's repository first; an open PR files it at merge.
    assert MARKER in out
    assert f"Would update (but not open) the alert's issues in {SECONDARY}, {PRIMARY}" in out
    assert f"key: rmsnorm-bwd|pr|{PRIMARY}#1" in out
    assert f"----- linked issue in {PRIMARY}: " in out
    assert fake_github.requests() == []


def test_a_merged_pr_files_its_alert_in_a_dry_run(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pr", *_args(synthetic, "thunder_slower"), "--repo", PRIMARY, "--pr", "1"]
    assert cli.main([*argv, "--pr-state", "merged"], env={}) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert f"Would open or update the alert's issues in {SECONDARY}, {PRIMARY}" in out


def _pr(fake: LocalGitHub) -> int:
    return fake.state.add_pull_request(
        PRIMARY, "Speed up rmsnorm", author=HUMAN_LOGIN, head_ref="fast"
    ).number


def _env(fake: LocalGitHub, **more: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": BOT_TOKEN,
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": PRIMARY,
        "GITHUB_RUN_ID": "7",
        **more,
    }


def _bot_issues(fake: LocalGitHub, repo: str) -> list[tuple[str, str]]:
    return [(i.state, i.title) for i in fake.state.issues(repo) if i.pull is None]


def _push_config(tmp_path: Path) -> Path:
    """The synthetic configuration with alerts filed at the first push that shows them."""
    path = tmp_path / "push.toml"
    path.write_text(
        SYNTHETIC_CONFIG.read_text().replace("[alerts]\n", '[alerts]\nopen_on = "push"\n')
    )
    return path


def test_pr_lifecycle_against_the_fake(
    synthetic: SyntheticResults,
    fake_github: LocalGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    number = _pr(fake_github)
    base = ["pr", "--repo", PRIMARY, "--pr", str(number)]
    env = _env(fake_github)
    push = ["--config", str(_push_config(tmp_path))]

    slower = [*base, *_args(synthetic, "thunder_slower"), *push]
    assert cli.main(slower, env=env) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    # Thunder's kernels and the ratio both moved: one alert, Thunder's repository first.
    assert "comment created" in out and out.count(": opened") == 2
    assert f"alert issue (primary) in {SECONDARY}: opened" in out
    assert f"alert issue (linked) in {PRIMARY}: opened" in out
    (comment,) = fake_github.state.comments_on(PRIMARY, number)
    assert comment.body.startswith(MARKER + "\n### 🔴 RMSNorm backward: Regressed: ")
    assert "**Alert issues:** [Lightning-AI/lightning-thunder#" in comment.body
    assert "[CI run](https://github.com/NVIDIA/Fuser/actions/runs/7)" in comment.body
    assert [s for s, _ in _bot_issues(fake_github, SECONDARY)] == ["open"]
    (status,) = fake_github.state.pulls.of(PRIMARY, synthetic.commits["thunder_slower"])
    assert (status.state, status.context) == ("failure", "perfbot")
    assert status.target_url == "https://github.com/NVIDIA/Fuser/actions/runs/7"

    # Run again: nothing changes, neither the comment nor the issues.
    assert cli.main(slower, env=env) == ExitCode.REGRESSION
    out = capsys.readouterr().out
    assert "comment unchanged" in out and out.count(": unchanged") == 2
    assert len(fake_github.state.comments_on(PRIMARY, number)) == 1
    assert len(_bot_issues(fake_github, PRIMARY)) == 1

    # A new push that fixes it: the comment is updated in place, the alert closes.
    same = [*base, *_args(synthetic, "same"), *push]
    assert cli.main(same, env=env) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "comment updated" in out and out.count(": closed") == 2
    (comment,) = fake_github.state.comments_on(PRIMARY, number)
    assert comment.body.splitlines()[1] == "### ⚪ RMSNorm backward: No change"
    assert _bot_issues(fake_github, PRIMARY) == [
        ("closed", _bot_issues(fake_github, PRIMARY)[0][1])
    ]
    status = fake_github.state.pulls.of(PRIMARY, synthetic.commits["same"])[0]
    assert status.state == "success" and status.description.startswith("Success: ")


def test_comment_failure_is_exit_4_naming_the_step(
    synthetic: SyntheticResults,
    fake_github: LocalGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    number = _pr(fake_github)
    fake_github.inject("POST", rf"/repos/{PRIMARY}/issues/{number}/comments$", 502, times=None)
    argv = ["pr", *_args(synthetic, "thunder_slower"), "--repo", PRIMARY, "--pr", str(number)]
    argv += ["--config", str(_push_config(tmp_path))]
    assert cli.main(argv, env=_env(fake_github)) == ExitCode.GITHUB_FAILURE
    err = capsys.readouterr().err
    assert f"step 'post comment on {PRIMARY}#{number}' failed" in err and "HTTP 502" in err
    assert fake_github.state.comments_on(PRIMARY, number) == []
    assert len(_bot_issues(fake_github, PRIMARY)) == 1  # the alert was still filed


def test_issue_failure_still_posts_the_comment_and_the_status(
    synthetic: SyntheticResults,
    fake_github: LocalGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    number = _pr(fake_github)
    fake_github.inject("POST", rf"/repos/{SECONDARY}/issues$", 500, times=None)
    argv = ["pr", *_args(synthetic, "thunder_slower"), "--repo", PRIMARY, "--pr", str(number)]
    argv += ["--config", str(_push_config(tmp_path))]
    assert cli.main(argv, env=_env(fake_github)) == ExitCode.GITHUB_FAILURE
    captured = capsys.readouterr()
    assert "step 'sync the alert's issues' failed" in captured.err and SECONDARY in captured.err
    (comment,) = fake_github.state.comments_on(PRIMARY, number)
    assert comment.body.splitlines()[1].startswith("### 🔴 RMSNorm backward: Regressed: ")
    assert _bot_issues(fake_github, SECONDARY) == []
    (status,) = fake_github.state.pulls.of(PRIMARY, synthetic.commits["thunder_slower"])
    assert status.state == "failure"


def test_demo_on_given_results(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["demo", "--results", str(synthetic.results_dir), "--config", str(SYNTHETIC_CONFIG)]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION  # picks stock -> slower
    out = capsys.readouterr().out
    assert "===== the comment on Lightning-AI/lightning-thunder#1 =====" in out
    assert "===== issue NVIDIA/Fuser#1 (open)" in out  # the linked one, filed at merge
    assert "Demo finished: status failure: Regressed: " in out and "(exit code 1 in CI)." in out


def test_demo_without_data_says_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["demo", "--results", str(tmp_path / "none")], env={}) == ExitCode.BAD_INPUT
    assert "results directory does not exist" in capsys.readouterr().err


def test_dry_run_of_a_recovery_only_closes(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pr", *_args(synthetic, "same"), "--repo", PRIMARY, "--pr", "3", "--dry-run"]
    assert cli.main(argv, env={"GITHUB_TOKEN": "unused"}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert out.startswith("DRY RUN (--dry-run)")
    assert f"Would close as completed any open alert issue (key rmsnorm-bwd|pr|{PRIMARY}#3)" in out
    assert "----- primary issue body -----" not in out


def test_demo_with_no_arguments_uses_the_recorded_data(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's main command on a fresh clone."""
    assert cli.main(["demo"], env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "data/h200" in out.splitlines()[0]
    assert "===== the comment on Lightning-AI/lightning-thunder#1 =====" in out
    assert "nvidia-h200" in out


def test_site_build_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The subcommand docs/SITE.md and the publish-site workflow call (bot/site does the work)."""
    smoke = ROOT / "data" / "h200-smoke" / "results"
    argv = [
        "site",
        "build",
        "--results",
        str(smoke),
        "--out",
        str(tmp_path / "site"),
        "--asv-conf",
        str(ROOT / "asv.conf.json"),
    ]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    assert capsys.readouterr().out.startswith(f"site: {tmp_path / 'site'}")
    assert (tmp_path / "site" / "index.html").is_file()
    missing = ["site", "build", "--results", str(tmp_path / "none"), "--out", str(tmp_path / "x")]
    assert cli.main(missing, env={}) == ExitCode.BAD_INPUT
    assert "step 'site build' failed" in capsys.readouterr().err


def test_the_demo_names_the_status_it_set_with_an_abbreviated_head(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last line reads the status of the full hash the bot set it on: an abbreviated
    --head printed "status none" before."""
    base, head = synthetic.commits["base"][:8], synthetic.commits["thunder_slower"][:8]
    argv = ["demo", "--results", str(synthetic.results_dir), "--base", base, "--head", head]
    assert cli.main([*argv, "--config", str(SYNTHETIC_CONFIG)], env={}) == 0
    assert "Demo finished: status failure: Regressed: " in capsys.readouterr().out
