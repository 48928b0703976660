"""``python -m bot history`` at its edges: bad input is one line and exit 3, bad arguments
exit 2, --help lists the exit codes, and commit links go only where the commit exists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from history_data import real
from paths import DATA, run_bot

from bot.commands import cli
from bot.exitcodes import ExitCode
from bot.history.load import load_histories
from bot.history.sections import commit_url
from bot.results.types import BENCH_KERNEL

NIGHTLIES = DATA / "h200-thunder-nightlies" / "results"


def _copy(tmp: Path) -> Path:
    out = tmp / "results"
    shutil.copytree(NIGHTLIES, out)
    return out


def test_a_truncated_results_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _copy(tmp_path)
    victim = next((results / "nvidia-h200").glob("5ac5d5f2-*.json"))
    victim.write_text(victim.read_text()[:5000])
    assert cli.main(["history", "--results", str(results)], env={}) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "step 'read results' failed" in err
    assert victim.name in err and "truncated JSON" in err


def test_a_nan_sample_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _copy(tmp_path)
    victim = next((results / "nvidia-h200").glob("31d18939-*.json"))
    data = json.loads(victim.read_text())
    row = data["results"][BENCH_KERNEL]
    samples = row[data["result_columns"].index("samples")]
    first = next(i for i, s in enumerate(samples) if s)
    samples[first][0] = float("nan")
    victim.write_text(json.dumps(data))
    assert cli.main(["history", "--results", str(results)], env={}) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "sample 0 is nan, not a finite positive number" in err and victim.name in err


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    args = ["history", "--results", str(NIGHTLIES)]
    assert cli.main([*args, "--window", "1"], env={}) == ExitCode.USAGE
    assert cli.main([*args, "--window", "0"], env={}) == ExitCode.USAGE
    assert cli.main([*args, "--repo", "not a repo"], env={}) == ExitCode.USAGE
    missing = tmp_path / "order.txt"
    assert cli.main([*args, "--order", str(missing)], env={}) == ExitCode.BAD_INPUT
    assert cli.main(["history", "--results", str(tmp_path)], env={}) == ExitCode.BAD_INPUT


def test_help_lists_the_exit_codes() -> None:
    done = run_bot("history", "--help")
    assert done.returncode == 0
    for name in (
        "OK_NO_REGRESSION",
        "REGRESSION",
        "USAGE",
        "BAD_INPUT",
        "GITHUB_FAILURE",
        "BROKEN",
    ):
        assert name in done.stdout
    assert "--min-after" in done.stdout and "docs/HISTORY.md" in done.stdout
    assert "history-calibrate" in run_bot("--help").stdout


def test_commit_links_go_where_the_commit_exists() -> None:
    (pair,) = load_histories([DATA / "h200-under-test" / "thunder-pair" / "results"])
    assert [commit_url(c, "Lightning-AI/lightning-thunder") for c in pair.commits] == [None, None]
    h = real(["06f650c8"])
    url = commit_url(h.commits[0], "Lightning-AI/lightning-thunder")
    assert url == f"https://github.com/Lightning-AI/lightning-thunder/commit/{h.commits[0].sha}"
    assert commit_url(h.commits[0], None) is None


def test_several_machines_are_each_their_own_history(tmp_path: Path) -> None:
    """A store with two machines: one history each, the exit code the worst."""
    results = _copy(tmp_path)
    other = results / "another-h200"
    shutil.copytree(results / "nvidia-h200", other)
    histories = load_histories([results])
    assert [h.machine for h in histories] == ["another-h200", "nvidia-h200"]
    assert cli.main(["history", "--results", str(results)], env={}) == ExitCode.OK_NO_REGRESSION
    assert len(load_histories([results], machine="nvidia-h200")) == 1
