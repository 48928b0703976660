"""Run-to-run noise: the spread arithmetic, and the shipped thresholds equal to what the
recorded H200 A/A runs suggest (so perfbot.toml cannot drift away from the data)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from data_helpers import state_from_rounds
from paths import REPO_ROOT

from bot.commands import cli
from bot.commands.noise import run_noise
from bot.config import Config, VerdictSettings
from bot.decide.noise import run_to_run, suggest, thresholds_toml
from bot.exitcodes import ExitCode
from bot.results.types import BadInput, CommitResults

ROOT = REPO_ROOT
H200 = [ROOT / "data" / "h200" / "results", ROOT / "data" / "h200-single-call" / "results"]


def _run(commit: str, thunder_scale: float, eager_scale: float = 1.0) -> CommitResults:
    nvf = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.1, 10.0, 10.2, 9.9]
    return state_from_rounds(
        commit,
        {
            ("bfloat16", "2048x8192"): {
                "nvfuser": nvf,
                "thunder-prims": [t * thunder_scale for t in nvf],
                "eager": [t * eager_scale for t in nvf],
            }
        },
    )


@pytest.mark.parametrize(
    ("spread", "default", "expected"),
    [
        (0.0, 0.02, 0.02),
        (0.01, 0.02, 0.02),
        (0.02, 0.02, 0.03),
        (0.044, 0.02, 0.07),
        (0.0541, 0.02, 0.085),
        (0.02 / 1.5, 0.02, 0.02),
    ],
)
def test_suggest_rounds_up_to_half_a_percent(
    spread: float, default: float, expected: float
) -> None:
    assert suggest(spread, default) == expected


def test_spread_is_the_largest_change_between_two_runs_of_gating_points_only() -> None:
    runs = [_run("a", 1.00, 1.0), _run("b", 1.03, 2.0), _run("c", 1.01, 3.0)]
    (only,) = run_to_run(runs, VerdictSettings())  # eager is context, not gating
    assert only.key.label == "thunder-prims/bfloat16/2048x8192"
    assert only.medians == pytest.approx((1.00, 1.03, 1.01))
    assert only.spread == pytest.approx(0.03)
    assert only.suggested == 0.045
    assert thresholds_toml([only], 0.02) == (
        '[[verdict.thresholds]]\npattern = "thunder-prims/bfloat16/2048x8192"\neffect = 0.045'
    )


def test_one_run_is_not_enough() -> None:
    with pytest.raises(BadInput, match="at least 2 runs"):
        run_to_run([_run("a", 1.0)], VerdictSettings())


def test_shipped_thresholds_are_what_the_recorded_runs_suggest(tmp_path: Path) -> None:
    """Suggested from the uncalibrated defaults (config None), compared with the shipped file."""
    code = run_noise(
        H200,
        {},
        io.StringIO(),
        thunder_variant="stock",
        machine=None,
        config_path=None,
        json_path=tmp_path / "n.json",
    )
    assert code == ExitCode.OK_NO_REGRESSION
    data = json.loads((tmp_path / "n.json").read_text())
    assert len(data["runs"]) == 4 and len(data["points"]) == 18
    suggested = {p["point"]: p["suggested"] for p in data["points"] if p["suggested"] > 0.02}
    shipped = Config.from_env({}, ROOT / "perfbot.toml").verdict.thresholds
    assert {t.pattern: t.effect for t in shipped} == suggested
    assert (
        Config.from_env({}, ROOT / "perfbot.toml").verdict.threshold_for(
            "thunder-prims/float32/512x4096"
        )
        == 0.07
    )


def test_cli_noise_prints_the_table_and_refuses_a_lone_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["noise", "--results", str(H200[0]), "--results", str(H200[1])]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "over 4 runs of the same code on nvidia-h200" in out
    assert 'pattern = "thunder-func/float32/512x4096"' in out
    smoke = ROOT / "data" / "h200-smoke" / "results"
    assert cli.main(["noise", "--results", str(smoke)], env={}) == ExitCode.BAD_INPUT
    assert "step 'measure run-to-run spread' failed" in capsys.readouterr().err


def test_runs_of_different_stacks_are_not_pooled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version change between runs is a real change, not noise: refused (exit 3)."""
    copy = tmp_path / "results"
    shutil.copytree(H200[0], copy)
    record = next(copy.glob("*/da17d548*.provenance.jsonl"))
    data = json.loads(record.read_text())
    data["versions"]["thunder"] = "0.2.7"
    record.write_text(json.dumps(data) + "\n")
    assert cli.main(["noise", "--results", str(copy)], env={}) == ExitCode.BAD_INPUT
    assert "the runs differ in torch/nvfuser/thunder versions" in capsys.readouterr().err
    assert cli.main(["noise", "--results", str(copy), "--margin", "0"], env={}) == ExitCode.USAGE


def test_a_run_of_another_stack_is_left_out_by_name_when_most_runs_agree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """data/h200-states holds a broken-executor run (Thunder 0.2.5) beside four stock runs:
    the six stock runs of 0.2.6 are pooled and the other one is named, not mixed in."""
    states = ROOT / "data" / "h200-states" / "results"
    argv = ["noise", "--results", str(H200[0]), "--results", str(states), "--json", "-"]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    data = json.loads(capsys.readouterr().out)
    assert [r[:8] for r in data["runs"]] == [
        "06f650c8",
        "da17d548",
        "6c840f30",
        "022fefdd",
        "324c493b",
        "016e16b1",
    ]
    assert [r[:8] for r in data["left_out"]] == ["f888795e"]
    argv = ["noise", "--results", str(H200[0]), "--results", str(states)]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    assert "Left out, run on another torch/nvfuser/thunder stack: f888795e (" in (
        capsys.readouterr().out
    )


def test_the_same_run_in_two_folders_is_counted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "again"
    shutil.copytree(H200[0], copy)
    argv = ["noise", "--results", str(H200[0]), "--results", str(copy), "--json", "-"]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 2
