"""calibrate-package.yml, the reusable calibration of a GPU runner kind, and calibrate-runner.yml,
this repository's dispatch of it.

Trusted code only: the reusable workflow's jobs run for a dispatch of the caller's default branch
and nothing else (in a called workflow the github context is the caller's); this repository's
dispatch adds main. Neither job holds a secret or a write scope; the GPU job takes the host's GPU
lock, queues with the other GPU jobs of its label and measures the `pr` size set `runs` times at
the pinned fusion-perfbot commit, each run its own process and results folder; the model job
fits the noise model with the real `python -m bot noise`, runs the held-out check through the
pooling script, and uploads one artifact laid out as fusion-perfbot's tree. And what the bot
tells people about an uncalibrated machine (bot/tell/uncalibrated.py) names these files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from calibrate_run import (
    PACKAGE,
    POOL,
    SHA,
    artifact,
    checkout,
    download_runs,
    files,
    fit,
    upload_step,
)
from evidence_helpers import read_evidence, refit
from paths import REPO_ROOT
from workflow_expr import evaluate_if, truthy
from workflow_rules import (
    CALIBRATE,
    CALIBRATE_PACKAGE,
    GPU_LOCK_SH,
    OUR_REPO,
    UNTRUSTED_EVENTS,
    WORKFLOWS,
    check_no_secrets_no_write,
    iter_steps,
    jobs,
    load_workflow,
    run_step,
    runs_on_self_hosted,
    shim_calls,
    step_by_id,
    triggers,
)

RUNNER = load_workflow(WORKFLOWS / CALIBRATE)


def _github(event: str, ref: str = "refs/heads/main", default: str = "main") -> dict[str, Any]:
    event_body = {"repository": {"default_branch": default}}
    return {"repository": OUR_REPO, "event_name": event, "ref": ref, "event": event_body}


def _runs(job: dict[str, Any], github: dict[str, Any]) -> bool:
    return truthy(evaluate_if(str(job["if"]), {"github": github}))


def test_this_repository_dispatches_the_reusable_workflow_from_main_alone() -> None:
    assert set(triggers(RUNNER)) == {"workflow_dispatch"}
    inputs = triggers(RUNNER)["workflow_dispatch"]["inputs"]
    assert inputs["runner-label"]["required"] is True
    assert inputs["runner-label"]["type"] == "string"
    assert inputs["runs"] == {**inputs["runs"], "type": "number", "default": 6}
    (job,) = jobs(RUNNER).values()
    assert job["uses"] == f"$/.github/workflows/{CALIBRATE_PACKAGE}"
    assert job["permissions"] == {"contents": "read"} and "secrets" not in job
    assert job["with"] == {
        "runner-label": "${{ inputs.runner-label }}",
        "runs": "${{ inputs.runs }}",
        "perfbot-repository": "${{ github.repository }}",
        "perfbot-ref": "${{ github.sha }}",  # main's commit of the run: what is measured
    }
    assert _runs(job, _github("workflow_dispatch"))
    assert not _runs(job, _github("workflow_dispatch", "refs/heads/feature", "feature"))
    for event in ("push", "schedule", "pull_request", "workflow_run", "issue_comment"):
        assert not _runs(job, _github(event)), event
    # What it passes is what the reusable workflow takes, of the same type and default.
    called = triggers(PACKAGE)["workflow_call"]["inputs"]
    for name, given in inputs.items():
        assert {k: called[name][k] for k in ("type", "default") if k in given} == {
            k: given[k] for k in ("type", "default") if k in given
        }


def test_the_reusable_workflow_runs_only_for_a_dispatch_of_the_callers_default_branch() -> None:
    assert set(triggers(PACKAGE)) == {"workflow_call"}
    inputs = triggers(PACKAGE)["workflow_call"]["inputs"]
    assert inputs["runner-label"]["required"] is True and inputs["perfbot-ref"]["required"] is True
    assert inputs["runs"] == {**inputs["runs"], "type": "number", "default": 6}
    bench = triggers(load_workflow(WORKFLOWS / "bench-package.yml"))["workflow_call"]["inputs"]
    assert inputs["perfbot-repository"]["default"] == bench["perfbot-repository"]["default"]
    assert set(jobs(PACKAGE)) == {"measure", "model"}
    for job_id, job in jobs(PACKAGE).items():
        assert _runs(job, _github("workflow_dispatch")), job_id
        assert _runs(job, _github("workflow_dispatch", "refs/heads/trunk", "trunk")), job_id
        assert not _runs(job, _github("workflow_dispatch", "refs/heads/feature")), job_id
        assert not _runs(job, _github("workflow_dispatch", "refs/pull/7/merge")), job_id
        assert not _runs(job, {**_github("workflow_dispatch"), "event": {}}), job_id
        for event in ("push", "schedule", "pull_request", "workflow_run", "issue_comment"):
            assert not _runs(job, _github(event)), (job_id, event)
        for scenario in UNTRUSTED_EVENTS:
            assert not _runs(job, scenario.github), (job_id, scenario.name)


def test_the_gpu_job_holds_no_secret_and_a_read_only_token() -> None:
    for wf in (PACKAGE, RUNNER):
        assert check_no_secrets_no_write(wf) == [] and "secrets" not in wf.text
    measure, model = jobs(PACKAGE)["measure"], jobs(PACKAGE)["model"]
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
    # Every checkout is the pinned fusion-perfbot commit; the bot is installed by hash.
    for _, step in iter_steps(PACKAGE):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["repository"] == "${{ inputs.perfbot-repository }}"
            assert step["with"]["ref"] == "${{ inputs.perfbot-ref }}"
            assert set(step["with"]) <= {"repository", "ref", "fetch-depth", "persist-credentials"}
    installs = [s["run"] for s in model["steps"] if "pip install" in str(s.get("run", ""))]
    assert installs and all("--require-hashes" in r and "--no-deps" in r for r in installs)


@pytest.mark.parametrize(
    "bad",
    [{"RUNNER_LABEL": "::error::x"}, {"RUNNER_LABEL": "a b"}, {"RUNNER_LABEL": ""}]
    + [{"RUNS": runs} for runs in ("1", "13", "0", "6.5", "a[$(id)]", "")]
    + [{"PERFBOT_REF": ref} for ref in ("main", "c" * 39, "C" * 40, "")]
    + [{"PERFBOT_REPOSITORY": repo} for repo in ("x", "a/b/c", "a/$(id)")],
    ids=lambda b: f"{next(iter(b))}={next(iter(b.values()))!r}",
)
def test_bad_inputs_stop_the_gpu_job(tmp_path: Path, bad: dict[str, str]) -> None:
    step = step_by_id(PACKAGE, "inputs")
    good = {
        "RUNNER_LABEL": "gpu-b200",
        "RUNS": "6",
        "PERFBOT_REPOSITORY": "fusion-perfbot/fusion-perfbot",
        "PERFBOT_REF": SHA,
    }
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
        "PERFBOT_REF": SHA,
        "CALLS": str(tmp_path / "calls"),
        "STATUS": str(status),
        "PERFBOT_GPU_LOCK": str(tmp_path / "lock" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    proc = run_step(step_by_id(PACKAGE, "measure"), tmp_path, env)
    calls = tmp_path / "calls"
    return proc, calls.read_text().splitlines()[1::2] if calls.exists() else []


def test_each_run_is_its_own_process_and_results_folder(tmp_path: Path) -> None:
    proc, calls = _measure(tmp_path, "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "holding the GPU lock" in proc.stdout
    common = f"--size-set pr --commit {SHA}"  # the pinned fusion-perfbot commit, checked out
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


def test_one_artifact_holds_the_model_its_evidence_and_the_runs_as_the_tree(
    tmp_path: Path,
) -> None:
    """Three recorded A/A runs of the H200, laid out as the download step leaves them: the
    real `python -m bot noise` writes the model, the manifest names the runs where the
    acceptance PR keeps them, and the artifact is those files alone, each at its path in
    fusion-perfbot's tree. Re-fitted from the artifact's own manifest, it is the same model."""
    folder = checkout(tmp_path / "checkout")
    download_runs(folder, "555", ["06f650c8", "da17d548", "6c840f30"])
    proc, out, summary = fit(tmp_path, folder, "555", 3, missed=[])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = "data/nvidia-h200-calibration"
    runs = [f"{calls}/555/run-{k}" for k in (1, 2, 3)]
    noise = ["python", "-m", "bot", "noise"]
    noise += [a for run in runs for a in ("--results", run)]
    noise += ["--write-model", "noise/nvidia-h200.json"]
    assert f"$ {' '.join(noise)}\n" in proc.stdout
    logged = shim_calls(tmp_path, "python").splitlines()
    assert logged[0].split() == noise[1:]
    assert logged[1].split()[:3] == ["-m", "bot", "calibrate"] and "--json" in logged[1]
    assert out == {"machine": "nvidia-h200"}
    got = artifact(folder, "nvidia-h200", tmp_path / "artifact")
    want = {"noise/nvidia-h200.json", "noise/nvidia-h200.evidence.toml"}
    want |= {f"{calls}/{name}" for name in ("noise.txt", "calibrate.txt", "555/call.txt")}
    assert {f for f in files(got) if "/run-" not in f} == want
    assert {"/".join(f.split("/")[:4]) for f in files(got) if "/run-" in f} == set(runs)
    assert all((got / run / "nvidia-h200" / "machine.json").is_file() for run in runs)
    evidence = read_evidence(got / "noise" / "nvidia-h200.evidence.toml")
    assert evidence.fits == (tuple(runs),)
    assert evidence.noise_commands("noise/nvidia-h200.json") == [noise[3:]]
    model = json.loads((got / "noise" / "nvidia-h200.json").read_text(encoding="utf-8"))
    assert model["machine"] == "nvidia-h200" and len(model["runs"]) == 3
    assert refit(got, evidence, tmp_path / "again.json") == model
    record = (got / calls / "555" / "call.txt").read_text(encoding="utf-8")
    assert "https://github.com/Lightning-AI/lightning-thunder/actions/runs/555" in record
    assert f"fusion-perfbot/fusion-perfbot@{SHA}" in record and "gpu-h200" in record
    assert (got / calls / "noise.txt").read_text().startswith(f"$ {' '.join(noise)}\n")
    calibrate = f"$ python -m bot calibrate {' '.join(noise[4:])}\n".replace(
        "--write-model", "--mark-model"
    )
    assert (got / calls / "calibrate.txt").read_text().startswith(calibrate)
    assert "Held-out check: every target met: ready to be accepted." in summary
    assert f"bash {POOL} nvidia-h200" in summary and "noise_model" in summary
    assert upload_step()["with"]["name"] == "calibration-${{ steps.fit.outputs.machine }}"


def test_a_missed_target_is_a_warning_and_the_artifact_is_still_kept(tmp_path: Path) -> None:
    """One call's 6 runs usually miss a target (the first two days' H200 runs do: 8 of 300
    A/A trials alarmed): the job warns and keeps the artifact, to be pooled with the next."""
    folder = checkout(tmp_path / "checkout")
    download_runs(folder, "556", ["06f650c8", "da17d548"])
    proc, out, summary = fit(tmp_path, folder, "556", 2, missed=["1 a side: a stand-in miss"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "::warning::held-out check: a target MISSED" in proc.stdout
    assert "Held-out check: MISSED over 2 runs:\n  1 a side: a stand-in miss" in proc.stdout
    assert "pool this call with the next" in summary and out == {"machine": "nvidia-h200"}
    assert (folder / "noise" / "nvidia-h200.evidence.toml").is_file()


def test_the_fit_refuses_missing_runs_mixed_machines_and_a_failed_command(tmp_path: Path) -> None:
    (tmp_path / "short").mkdir()
    folder = checkout(tmp_path / "short" / "checkout")
    download_runs(folder, "555", ["06f650c8", "da17d548"])
    proc, out, _ = fit(tmp_path / "short", folder, "555", 3, missed=[])
    assert proc.returncode == 1 and "::error::run-3 is missing" in proc.stdout
    assert out == {} and shim_calls(tmp_path / "short", "python") == ""
    (tmp_path / "mixed").mkdir()
    folder = checkout(tmp_path / "mixed" / "checkout")
    download_runs(folder, "555", ["06f650c8", "da17d548"])
    (folder / "calibrate-555" / "run-2" / "nvidia-h200").rename(
        folder / "calibrate-555" / "run-2" / "nvidia-b200"
    )
    proc, out, _ = fit(tmp_path / "mixed", folder, "555", 2, missed=[])
    assert proc.returncode == 1 and "not one" in proc.stdout and out == {}
    (tmp_path / "failed").mkdir()
    folder = checkout(tmp_path / "failed" / "checkout")
    download_runs(folder, "555", ["06f650c8", "da17d548"])
    proc, _, _ = fit(tmp_path / "failed", folder, "555", 2, missed=[], calibrate_status=3)
    assert proc.returncode == 1
    assert "::error::calibration-evidence.sh failed (exit 3)" in proc.stdout


def test_the_bots_calibration_steps_name_the_callers_path() -> None:
    """What the comment for an uncalibrated machine tells people to do is what these files
    are: the reusable workflow (6 runs a call, its default), the pooling script, the model's
    file name and perfbot.toml's key, and docs/CALIBRATION.md's section, linked or named."""
    from bot.tell.context import Context, anchor_of
    from bot.tell.uncalibrated import PATH_SECTION, POOL, WORKFLOW, calibration_steps

    words = "\n".join(calibration_steps("nvidia-b200", Context()))
    assert WORKFLOW == CALIBRATE_PACKAGE and f"reusable `{WORKFLOW}`" in words
    runs = triggers(PACKAGE)["workflow_call"]["inputs"]["runs"]["default"]
    assert f"twice, a day apart ({runs} A/A runs each)" in words
    assert (REPO_ROOT / POOL).is_file() and f"`bash {POOL} nvidia-b200` writes" in words
    assert '`"noise/nvidia-b200.json"` added to `noise_model`' in words
    assert f'fusion-perfbot\'s `docs/CALIBRATION.md`, "{PATH_SECTION}"' in words
    assert f"\n## {PATH_SECTION}\n" in (REPO_ROOT / "docs" / "CALIBRATION.md").read_text()
    docs = "https://github.com/fusion-perfbot/fusion-perfbot/blob/main/docs/"
    linked = "\n".join(calibration_steps("nvidia-b200", Context(docs_url=docs)))
    assert f"[Each step and its check]({docs}CALIBRATION.md#{anchor_of(PATH_SECTION)})" in linked
    assert anchor_of(PATH_SECTION) == "onboarding-a-gpu-kind"
