"""The onboarding path of a GPU kind (docs/CALIBRATION.md, "Onboarding a GPU kind") walked on
committed data, as a second kind would walk it, with no number edited.

The H200 plays the new kind: its model is left out of perfbot.toml, so its machine is "not
judged" and the comment links the path; its 12 committed A/A runs (its model's first fit) come
as two calls of calibrate-package.yml, six each, whose model job's step runs for real on them
and leaves one artifact each; both artifacts' data/ go into a clone, where the pooling script
fits the model over the 12 runs and runs the held-out check; perfbot.toml names the model; the
acceptance test's checks (tests/decide/test_evidence.py) accept it; the same runs are judged.
The pooled model is the H200's own first fit, from its committed evidence by the real command.

`python -m bot calibrate` is the real one in the slow variant (about two minutes on two
cores: the first call's six runs miss the false-alarm target, the pooled twelve meet every
one) and a stand-in in the default run, where everything else is real. Beside the walk, the
pooling script's order and refusals.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from calibrate_run import (
    FIRST_DAYS,
    POOL,
    REPEAT_DAYS,
    artifact,
    checkout,
    download_runs,
    fit,
    lay_out_run,
    python_shim,
    with_models,
)
from data_helpers import assert_json_close
from evidence_helpers import Evidence, bot_in, evidence_path, read_evidence, refit
from machines_helpers import BASE, H200, REGRESSED
from paths import DATA, REPO_ROOT
from workflow_rules import shim_calls

from bot.config import Config

DOCS = "https://github.com/fusion-perfbot/fusion-perfbot/blob/main/docs/"
CALLS = "data/nvidia-h200-calibration"


def _report(clone: Path) -> tuple[int, str]:
    """The comment for the recorded regression (Thunder's backward unfused) on the H200."""
    argv = ["report", "--results", str(H200), "--base", BASE, "--head", REGRESSED]
    return bot_in(clone, *argv, "--format", "markdown", env={"PERFBOT_DOCS_URL": DOCS})


def _pool(tmp_path: Path, clone: Path, stand_in: bool) -> subprocess.CompletedProcess[str]:
    """The pooling script, run in the clone as docs/CALIBRATION.md's step 3 says."""
    env = {
        **os.environ,
        "PATH": python_shim(tmp_path, stand_in),
        "PYTHONPATH": str(REPO_ROOT),
        "MISSED": "[]",
    }
    return subprocess.run(
        ["bash", POOL, "nvidia-h200"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("calibrate", ["stand-in", pytest.param("real", marks=pytest.mark.slow)])
def test_a_second_kind_walks_the_path_on_committed_runs(tmp_path: Path, calibrate: str) -> None:
    real = calibrate == "real"
    clone = checkout(tmp_path / "clone")  # a fusion-perfbot clone: no model for this kind
    code, comment = _report(clone)
    assert code == 0 and "**Not judged: no noise model covers nvidia-h200**" in comment
    assert "🔴" not in comment
    assert f"[Each step and its check]({DOCS}CALIBRATION.md#onboarding-a-gpu-kind)" in comment
    assert "`bash .github/scripts/calibration-evidence.sh nvidia-h200`" in comment

    # Steps 1 and 2: two calls of the reusable workflow, six A/A runs each, a day apart.
    artifacts = []
    for run_id, prefixes in (("1001", FIRST_DAYS), ("1002", REPEAT_DAYS)):
        folder = checkout(tmp_path / f"call-{run_id}")
        download_runs(folder, run_id, prefixes)
        (tmp_path / run_id).mkdir()
        proc, out, _ = fit(tmp_path / run_id, folder, run_id, 6, None if real else [])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert out == {"machine": "nvidia-h200"}
        if real and run_id == "1001":  # one call is not enough (docs/CALIBRATION.md, step 1)
            assert "::warning::held-out check: a target MISSED" in proc.stdout
            assert "  1 a side: A/A false alarms (8/300)\n" in proc.stdout
            assert "  1 a side: +2% nvFuser fusion at every point (146/300)\n" in proc.stdout
        artifacts.append(artifact(folder, "nvidia-h200", tmp_path / f"artifact-{run_id}"))

    # Step 3: both calls' data/ in the clone, pooled by the same script.
    for got in artifacts:
        shutil.copytree(got / "data", clone / "data", dirs_exist_ok=True)
    (tmp_path / "pool").mkdir()
    pooled = _pool(tmp_path / "pool", clone, stand_in=not real)
    assert pooled.returncode == 0, pooled.stdout + pooled.stderr
    assert pooled.stdout.endswith("Held-out check: every target met over 12 runs\n")
    runs = [f"{CALLS}/{call}/run-{k}" for call in ("1001", "1002") for k in range(1, 7)]

    # Step 4: perfbot.toml names the model.
    toml = clone / "perfbot.toml"
    toml.write_text(with_models(toml.read_text(), ["noise/nvidia-h200.json"]), encoding="utf-8")

    # Step 5: the acceptance test's checks, on the clone.
    (model,) = Config.from_env({}, toml).verdict.noise_models
    evidence = read_evidence(evidence_path(model))
    assert evidence == Evidence("nvidia-h200", (tuple(runs),))
    committed = json.loads(model.read_text(encoding="utf-8"))
    assert_json_close(refit(clone, evidence, tmp_path / "refit.json"), committed)
    transcript = (clone / CALLS / "calibrate.txt").read_text(encoding="utf-8")
    command = evidence.calibrate_command("noise/nvidia-h200.json")
    assert transcript.startswith(f"$ python -m bot {' '.join(command)}\n")
    if not real:
        assert "-m bot calibrate " + " ".join(command[1:]) in shim_calls(
            tmp_path / "pool", "python"
        )
    # The same 12 runs the H200's model was fitted on: the same model as its first fit gives.
    h200 = read_evidence(REPO_ROOT / "noise" / "nvidia-h200.evidence.toml")
    first = refit(REPO_ROOT, Evidence(h200.machine, h200.fits[:1]), tmp_path / "h200.json")
    assert_json_close(committed, first)

    # After: the same machine is judged, and the regression is one.
    code, comment = _report(clone)
    assert code == 1 and "Not judged" not in comment and "🔴" in comment


def _layout(root: Path, runs: dict[str, str]) -> None:
    """`runs`: "call/run-K" -> the recorded run laid out there."""
    for where, prefix in runs.items():
        lay_out_run(prefix, root / CALLS / where)


def test_the_pool_takes_calls_by_run_id_and_runs_by_number(tmp_path: Path) -> None:
    """Run ids and run numbers are numbers: call 99 before call 100, run-2 before run-10."""
    clone = checkout(tmp_path / "clone")
    _layout(clone, {"100/run-1": "06f650c8", "99/run-10": "da17d548", "99/run-2": "6c840f30"})
    proc = _pool(tmp_path, clone, stand_in=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    order = (f"{CALLS}/99/run-2", f"{CALLS}/99/run-10", f"{CALLS}/100/run-1")
    assert read_evidence(clone / "noise" / "nvidia-h200.evidence.toml").fits == (order,)
    model = json.loads((clone / "noise" / "nvidia-h200.json").read_text(encoding="utf-8"))
    assert [r[:8] for r in model["runs"]] == ["6c840f30", "da17d548", "06f650c8"]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("rm -r data/nvidia-h200-calibration", "no folder data/nvidia-h200-calibration"),
        ("rm -r data/nvidia-h200-calibration/7", "no call under"),
        ("mv data/nvidia-h200-calibration/7 data/nvidia-h200-calibration/x7", "its run id"),
        ("ln -s 7 data/nvidia-h200-calibration/8", "its run id"),
        ("mkdir data/nvidia-h200-calibration/7/run-x", "not a run-K folder"),
        ("mv {run}/nvidia-h200 {run}/nvidia-b200", "holds no run on nvidia-h200"),
        ("rm -r {run}", "holds no run-K folder"),
    ],
)
def test_the_pool_refuses_what_is_not_a_calls_layout(
    tmp_path: Path, change: str, words: str
) -> None:
    clone = checkout(tmp_path / "clone")
    _layout(clone, {"7/run-1": "06f650c8"})
    run = f"{CALLS}/7/run-1"
    subprocess.run(change.format(run=run), shell=True, cwd=clone, check=True)
    proc = _pool(tmp_path, clone, stand_in=True)
    assert proc.returncode == 2 and words in proc.stderr, proc.stdout + proc.stderr
    assert shim_calls(tmp_path, "python") == ""
    assert not (clone / "noise" / "nvidia-h200.json").exists()


#: Four committed runs of the catalog's stock code on the H200 measuring the PR's three
#: variants (data/h200-catalog: two A/A pairs' and the catalog pair's base at repeat 2).
CATALOG_RUNS = {"da6533d1": "aa", "baad8fb3": "aa2", "c4af5b47": "aa2", "6a438ce9": "pair/rep-2"}


@pytest.mark.slow
def test_the_pool_marks_each_fusion_its_runs_do_not_calibrate(tmp_path: Path) -> None:
    """The catalog's four stock runs as one call, pooled with the real calibrate: too few for any
    fusion's own bounds (1 run a side), so the model the script writes marks all 14 fusions
    provisional (shown, not gated on) and the script names them; the pooled targets at 2 a side
    are missed too (exit 1). A kind onboarded on thin runs gates on nothing it cannot back."""
    clone = checkout(tmp_path / "clone")
    for k, (prefix, folder) in enumerate(CATALOG_RUNS.items(), 1):
        lay_out_run(prefix, clone / CALLS / "5" / f"run-{k}", DATA / "h200-catalog" / folder)
    proc = _pool(tmp_path, clone, stand_in=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    model = json.loads((clone / "noise" / "nvidia-h200.json").read_text(encoding="utf-8"))
    assert len(model["provisional"]) == 14 and "rmsnorm_bwd" in model["provisional"]
    named = next(line for line in proc.stdout.splitlines() if line.startswith("Provisional"))
    assert named.endswith(": " + ", ".join(sorted(model["provisional"])))
