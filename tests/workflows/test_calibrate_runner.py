"""calibrate-runner.yml: a maintainer's dispatch calibrates a new GPU runner kind.

Trusted code only (a dispatch, on main alone); neither job holds a secret or a write scope; the
GPU job takes the host's GPU lock and queues with the PR benches of its label, and measures the
`pr` size set `runs` times, each run its own process and its own results folder; the last job
fits the noise model with the real `python -m bot noise`, prints the command and uploads the
model. And what the bot tells people about an uncalibrated machine (bot/tell/uncalibrated.py)
matches the workflow: its file, its inputs, its default of 6 runs, the model's file name.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import STOCK_RUNS
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    CALIBRATE,
    GPU_LOCK_SH,
    OUR_REPO,
    REPO,
    UNTRUSTED_EVENTS,
    WORKFLOWS,
    check_no_secrets_no_write,
    iter_steps,
    jobs,
    load_workflow,
    outputs,
    run_step,
    runs_on_self_hosted,
    shim,
    step_by_id,
    triggers,
)

WF = load_workflow(WORKFLOWS / CALIBRATE)
SHA = "c" * 40


def _github(event: str, ref: str = "refs/heads/main") -> dict[str, Any]:
    return {"repository": OUR_REPO, "event_name": event, "ref": ref, "event": {}}


def _runs(job: dict[str, Any], github: dict[str, Any]) -> bool:
    return truthy(evaluate_if(str(job["if"]), {"github": github}))


def test_only_a_dispatch_from_main_runs_it() -> None:
    assert set(triggers(WF)) == {"workflow_dispatch"}
    inputs = triggers(WF)["workflow_dispatch"]["inputs"]
    assert inputs["runner-label"]["required"] is True
    assert inputs["runner-label"]["type"] == "string"
    assert inputs["runs"] == {**inputs["runs"], "type": "number", "default": 6}
    assert set(jobs(WF)) == {"measure", "model"}
    for job_id, job in jobs(WF).items():
        assert _runs(job, _github("workflow_dispatch")), job_id
        assert not _runs(job, _github("workflow_dispatch", "refs/heads/feature")), job_id
        assert not _runs(job, _github("workflow_dispatch", "refs/pull/7/merge")), job_id
        for event in ("push", "schedule", "pull_request", "workflow_run", "issue_comment"):
            assert not _runs(job, _github(event)), (job_id, event)
        for scenario in UNTRUSTED_EVENTS:
            assert not _runs(job, scenario.github), (job_id, scenario.name)


def test_the_gpu_job_holds_no_secret_and_a_read_only_token() -> None:
    assert check_no_secrets_no_write(WF) == []
    assert "secrets" not in WF.text
    measure, model = jobs(WF)["measure"], jobs(WF)["model"]
    assert runs_on_self_hosted(measure)
    assert measure["runs-on"] == ["self-hosted", "linux", "x64", "${{ inputs.runner-label }}"]
    assert measure["permissions"] == {"contents": "read"}
    assert model["permissions"] == {"contents": "read"}
    assert model["runs-on"].startswith("ubuntu-") and model["needs"] == "measure"
    assert "environment" not in measure and "environment" not in model
    # Queued with every GPU job of its label (bench-pr, the nightly's shards), never cancelled.
    assert measure["concurrency"] == {
        "group": "perfbot-gpu-${{ inputs.runner-label }}",
        "cancel-in-progress": False,
        "queue": "max",
    }
    # Every checkout is main's commit of the run; the bot is installed by hash.
    for _, step in iter_steps(WF):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert set(step["with"]) <= {"fetch-depth", "persist-credentials"}
    installs = [s["run"] for s in model["steps"] if "pip install" in str(s.get("run", ""))]
    assert installs and all("--require-hashes" in r and "--no-deps" in r for r in installs)


@pytest.mark.parametrize(
    "bad",
    [{"RUNNER_LABEL": "::error::x"}, {"RUNNER_LABEL": "a b"}, {"RUNNER_LABEL": ""}]
    + [{"RUNS": runs} for runs in ("1", "13", "0", "6.5", "a[$(id)]", "")],
    ids=lambda b: f"{next(iter(b))}={next(iter(b.values()))!r}",
)
def test_bad_inputs_stop_the_gpu_job(tmp_path: Path, bad: dict[str, str]) -> None:
    step = step_by_id(WF, "inputs")
    good = {"RUNNER_LABEL": "gpu-b200", "RUNS": "6"}
    assert run_step(step, tmp_path, good).returncode == 0
    proc = run_step(step, tmp_path, {**good, **bad})
    assert proc.returncode == 1 and "::error::" in proc.stdout
    assert "uid=" not in proc.stdout + proc.stderr


FAKE_RUN_GPU = """\
results="" machine=""
while [ $# -gt 0 ]; do
  case "$1" in --results) results=$2; shift 2 ;; --machine) machine=$2; shift 2 ;; *) shift ;; esac
done
printf '%s\\n' "$*" >> "$CALLS"
printf '%s\\n' "$ARGS" >> "$CALLS"
mkdir -p "$results/${machine:-nvidia-b200}"
exit "${STATUS:-0}"
"""


def _measure(tmp_path: Path, runs: str, status: int = 0) -> tuple[Any, list[str]]:
    """The real measuring step, with a run_gpu.sh that logs its arguments and writes the
    machine folder as the real one does (named from the GPU when no --machine is given)."""
    (tmp_path / "benchmarks").mkdir()
    script = 'ARGS="$*"\n' + FAKE_RUN_GPU
    (tmp_path / "benchmarks" / "run_gpu.sh").write_text(script, encoding="utf-8")
    (tmp_path / "lock").mkdir()
    env = {
        "RUNS": runs,
        "GITHUB_SHA": SHA,
        "CALLS": str(tmp_path / "calls"),
        "STATUS": str(status),
        "PERFBOT_GPU_LOCK": str(tmp_path / "lock" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    proc = run_step(step_by_id(WF, "measure"), tmp_path, env)
    calls = tmp_path / "calls"
    return proc, calls.read_text().splitlines()[1::2] if calls.exists() else []


def test_each_run_is_its_own_process_and_results_folder(tmp_path: Path) -> None:
    proc, calls = _measure(tmp_path, "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "holding the GPU lock" in proc.stdout
    common = f"--size-set pr --commit {SHA}"
    assert calls == [
        f"{common} --results results/run-1",
        f"{common} --results results/run-2 --machine nvidia-b200",
        f"{common} --results results/run-3 --machine nvidia-b200",
    ]
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["run-1", "run-2", "run-3"]


def test_a_failed_point_is_a_warning_and_no_gpu_stops_the_job(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    proc, calls = _measure(tmp_path / "a", "2", status=2)
    assert proc.returncode == 0 and len(calls) == 2
    assert "::warning::run 1: some points failed" in proc.stdout
    (tmp_path / "b").mkdir()
    proc, calls = _measure(tmp_path / "b", "2", status=3)
    assert proc.returncode == 3 and len(calls) == 1
    assert "::error::no usable GPU stack" in proc.stdout


def _checkout_with_runs(tmp_path: Path, prefixes: list[str], run_id: str = "555") -> Path:
    """A checkout (perfbot.toml, noise/) holding calibrate-<run id>/run-K as the download step
    leaves them: each run-K one recorded stock run of the H200, a complete asv results folder."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    shutil.copy(REPO / "perfbot.toml", checkout / "perfbot.toml")
    shutil.copytree(REPO / "noise", checkout / "noise")
    for k, prefix in enumerate(prefixes, 1):
        source = STOCK_RUNS[prefix]
        run = checkout / f"calibrate-{run_id}" / f"run-{k}"
        (run / "nvidia-h200").mkdir(parents=True)
        shutil.copy(source / "benchmarks.json", run / "benchmarks.json")
        for path in (source / "nvidia-h200").iterdir():
            if path.name == "machine.json" or path.name.startswith(prefix):
                shutil.copy(path, run / "nvidia-h200" / path.name)
    return checkout


def _fit(tmp_path: Path, checkout: Path, runs: str) -> tuple[Any, dict[str, str], str]:
    path = shim(tmp_path, "python", f'exec {sys.executable} "$@"')  # the real bot, logged
    env = {
        "PATH": path,
        "PYTHONPATH": str(REPO),
        "RUNS": runs,
        "RUNNER_LABEL": "gpu-h200",
        "RUNS_DIR": "calibrate-555",
        "GITHUB_SHA": SHA,
        "GITHUB_RUN_ID": "555",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
    }
    proc = run_step(step_by_id(WF, "fit"), checkout, env, tmp_path)
    summary = tmp_path / "summary"
    return proc, outputs(tmp_path / "out"), summary.read_text() if summary.exists() else ""


def test_the_model_is_fitted_by_the_bot_and_the_command_printed(tmp_path: Path) -> None:
    """The real `python -m bot noise` on three recorded A/A runs of the H200, laid out as the
    workflow's download leaves them: the command it prints is the one it ran (and one that runs
    as it is from a clone's root after `gh run download`), and it writes noise/<machine>.json."""
    checkout = _checkout_with_runs(tmp_path, ["06f650c8", "da17d548", "6c840f30"])
    (checkout / "noise" / "nvidia-h200.json").unlink()  # as on a runner kind not calibrated yet
    proc, out, summary = _fit(tmp_path, checkout, "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    command = (
        "python -m bot noise --results calibrate-555/run-1 --results calibrate-555/run-2 "
        "--results calibrate-555/run-3 --write-model noise/nvidia-h200.json"
    )
    assert f"$ {command}\n" in proc.stdout
    assert (tmp_path / "python.calls").read_text().split() == command.split()[1:]
    assert out == {"machine": "nvidia-h200"}
    model = json.loads((checkout / "noise" / "nvidia-h200.json").read_text(encoding="utf-8"))
    assert model and isinstance(model, dict)
    assert "Wrote the model to noise/nvidia-h200.json" in proc.stdout
    assert f"```\n{command}\n```" in summary
    assert "gh run download 555 -n calibrate-runs-gpu-h200 -D calibrate-555" in summary
    assert "Pools" in summary  # the model's summary, as the bot printed it
    assert "python -m bot calibrate" in summary and "noise_model" in summary


def test_the_fit_refuses_missing_runs_and_mixed_machines(tmp_path: Path) -> None:
    (tmp_path / "short").mkdir()
    checkout = _checkout_with_runs(tmp_path / "short", ["06f650c8", "da17d548"])
    proc, out, _ = _fit(tmp_path / "short", checkout, "3")
    assert proc.returncode == 1 and "::error::run-3 is missing" in proc.stdout
    assert out == {} and not (tmp_path / "short" / "python.calls").exists()
    (tmp_path / "mixed").mkdir()
    checkout = _checkout_with_runs(tmp_path / "mixed", ["06f650c8", "da17d548"])
    (checkout / "calibrate-555" / "run-2" / "nvidia-h200").rename(
        checkout / "calibrate-555" / "run-2" / "nvidia-b200"
    )
    proc, out, _ = _fit(tmp_path / "mixed", checkout, "2")
    assert proc.returncode == 1 and "not one" in proc.stdout and out == {}


def test_the_bots_calibration_steps_match_the_workflow() -> None:
    """What the comment for an uncalibrated machine tells people to do is what this workflow
    does: its file, its input, 6 runs a dispatch (the default), the model's file name, and the
    last job printing the command and uploading the model."""
    from bot.tell.uncalibrated import calibration_steps

    words = "\n".join(calibration_steps("nvidia-b200"))
    assert f"`.github/workflows/{CALIBRATE}`" in words and "**calibrate-runner**" in words
    assert WF.data["name"] == "calibrate-runner"
    assert "with this runner's label" in words and "runner-label" in WF.text
    runs = triggers(WF)["workflow_dispatch"]["inputs"]["runs"]["default"]
    assert f"({runs} runs each)" in words
    assert "--write-model noise/nvidia-b200.json" in words
    assert "the workflow's last job prints the exact command and uploads the model" in words
    last = list(jobs(WF).values())[-1]
    assert last is jobs(WF)["model"]
    fit = step_by_id(WF, "fit")["run"]
    assert re.search(r"command=\(python -m bot noise\)", fit)
    assert 'command+=(--write-model "noise/$machine.json")' in fit
    upload = last["steps"][-1]
    assert str(upload["uses"]).startswith("actions/upload-artifact@")
    assert upload["with"]["path"] == "noise/${{ steps.fit.outputs.machine }}.json"
