"""The ``noise`` command: the between-run model fitted on recorded A/A runs, which runs it
pools, and extending a model with a new fusion's runs. That the shipped model equals what its
recorded runs give is tests/decide/test_evidence.py's, for every model perfbot.toml names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from evidence_helpers import read_evidence
from paths import REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode

ROOT = REPO_ROOT
H200 = [ROOT / "data" / "h200" / "results", ROOT / "data" / "h200-single-call" / "results"]
#: The A/A runs the shipped model comes from, and the catalog's (data/h200-catalog/README.md),
#: whose fit extends it with the other fusions (RMSNorm backward's entries stay the first's):
#: the model's evidence, noise/nvidia-h200.evidence.toml.
MODEL_RUNS, CATALOG_RUNS = (
    [ROOT / folder for folder in fit]
    for fit in read_evidence(ROOT / "noise" / "nvidia-h200.evidence.toml").fits
)


def _args(dirs: list[Path]) -> list[str]:
    return [str(a) for d in dirs for a in ("--results", d)]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """RMSNorm backward's model from MODEL_RUNS, and it extended with the catalog's runs: the
    two fits of the model's evidence, run once for the tests that read them."""
    folder = tmp_path_factory.mktemp("noise")
    rmsnorm, out = folder / "rmsnorm.json", folder / "model.json"
    assert cli.main(["noise", *_args(MODEL_RUNS), "--write-model", str(rmsnorm)], env={}) == 0
    extend = ["--extend", str(rmsnorm), "--write-model", str(out)]
    assert cli.main(["noise", *_args(CATALOG_RUNS), *extend], env={}) == 0
    return rmsnorm, out


def test_extending_keeps_every_entry_and_names_the_new_fusions_runs(
    fitted: tuple[Path, Path],
) -> None:
    """A fusion new to the catalog gets its own series; RMSNorm backward's (and the verdicts
    made with them) do not move, and each verdict names the runs behind its own fusion."""
    from bot.decide.noise_model import from_json

    rmsnorm, out = fitted
    kept, grown = json.loads(rmsnorm.read_text()), json.loads(out.read_text())
    for table in ("series", "pool", "aggregates"):
        assert {k: grown[table][k] for k in kept[table]} == kept[table]
    added = set(grown["series"]) - set(kept["series"])
    assert added and all(label.split("/")[0].count(":") == 2 for label in added)
    assert grown["runs"] == kept["runs"]
    model = from_json(grown, "model")
    assert len(model.runs_for("softmax_bwd")) == 4
    assert model.runs_for("rmsnorm_bwd") == tuple(kept["runs"])


def test_cli_noise_prints_the_model_and_refuses_a_lone_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["noise", "--results", str(MODEL_RUNS[0]), "--results", str(MODEL_RUNS[1])]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    out = capsys.readouterr().out
    assert "over 6 runs of the same code on nvidia-h200 (8 call(s) per sample)" in out
    assert "ratio:thunder-prims/bfloat16/2048x8192" in out
    assert "kernel:nvfuser/bfloat16/2048x8192" in out
    assert "ratio:eager/" not in out  # context variants are not listed
    smoke = ROOT / "data" / "h200-smoke" / "results"
    assert cli.main(["noise", "--results", str(smoke)], env={}) == ExitCode.BAD_INPUT
    assert "step 'fit the between-run noise model' failed" in capsys.readouterr().err


def test_runs_with_different_calls_per_sample_are_not_pooled(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two 8-call and two single-call runs: no majority, nothing is guessed (exit 3)."""
    argv = ["noise", "--results", str(H200[0]), "--results", str(H200[1])]
    assert cli.main(argv, env={}) == ExitCode.BAD_INPUT
    assert "the runs differ in torch/nvfuser/thunder versions" in capsys.readouterr().err


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
    out = " ".join(capsys.readouterr().out.split())  # the line is wrapped
    assert "Left out, run on another stack, sampling or set of variants: f888795e (" in out


def test_the_same_run_in_two_folders_is_counted_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "again"
    shutil.copytree(H200[0], copy)
    argv = ["noise", "--results", str(H200[0]), "--results", str(copy), "--json", "-"]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 2


def test_two_processes_of_one_commit_are_two_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job's repeats store one commit in two folders: distinct processes (their records'
    start times differ) are both pooled, unlike a copy of one run."""
    copy = tmp_path / "rep-2"
    shutil.copytree(H200[0], copy)
    for record in copy.glob("*/*.provenance.jsonl"):
        lines = record.read_text().splitlines()
        data = json.loads(lines[-1])
        data["started_at"] = "2026-12-01T00:00:00+00:00"
        record.write_text("\n".join([*lines[:-1], json.dumps(data)]) + "\n")
    argv = ["noise", "--results", str(H200[0]), "--results", str(copy), "--json", "-"]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 4
