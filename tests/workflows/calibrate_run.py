"""calibrate-package.yml's model job run as the runner runs it, on recorded H200 runs.

What the job finds, the tests lay out: a fusion-perfbot checkout (perfbot.toml, noise/, the
pooling script .github/scripts/calibration-evidence.sh) holding calibrate-<run id>/run-K, each
one recorded A/A run of the H200, a complete asv results folder, as the download step leaves
the measuring job's runs. The fit step's script runs for real with the real bot (`python -m
bot noise`); `python -m bot calibrate`, 40 s on two cores, is the real one too, or, for the
tests of the default run, a stand-in that prints a line and writes the "missed" list it is told
(`missed`), which the pooling script reads. The artifact is what the upload step's paths take,
copied with their layout (upload-artifact roots several paths at their common folder).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from paths import DATA, REPO_ROOT, STOCK_RUNS
from workflow_rules import (
    CALIBRATE_PACKAGE,
    WORKFLOWS,
    iter_steps,
    load_workflow,
    outputs,
    run_step,
    shim,
    step_by_id,
)

PACKAGE = load_workflow(WORKFLOWS / CALIBRATE_PACKAGE)
POOL = ".github/scripts/calibration-evidence.sh"
SHA = "c" * 40
REPEATS = DATA / "h200-repeats"
#: The H200 model's 12 A/A runs (the first fit of noise/nvidia-h200.evidence.toml), by commit
#: prefix, in the model's order: the first two days' six, then the four repeat calls' six
#: (repeat 1 of each, the one with the context baselines, as the other six).
FIRST_DAYS = list(STOCK_RUNS)
REPEAT_DAYS = ["223f991a", "ae560ef0", "983be29d", "240f289b", "6033818a", "70e55a95"]
FOLDERS = {
    **STOCK_RUNS,
    **{p: REPEATS / "call-1" / "results" / "rep-1" for p in ("223f991a", "ae560ef0")},
    "983be29d": REPEATS / "call-2" / "results" / "rep-1",
    "240f289b": REPEATS / "call-3" / "results" / "rep-1",
    **{p: REPEATS / "call-4" / "results" / "rep-1" for p in ("6033818a", "70e55a95")},
}
#: The calibrate stand-in: the pooling script reads only the JSON's "missed".
CALIBRATE_STAND_IN = """\
if [[ "$1 $2 $3" == "-m bot calibrate" ]]; then
  for ((i = 1; i < $#; i++)); do
    if [[ "${!i}" == --json ]]; then j=$((i + 1)); json=${!j}; fi
  done
  echo "calibrate: a stand-in (tests/workflows/calibrate_run.py)"
  printf '{"missed": %s}\\n' "$MISSED" > "$json"
  exit "${CALIBRATE_STATUS:-0}"
fi
"""


def checkout(folder: Path) -> Path:
    """fusion-perfbot at the pinned commit, as the model job checks it out, for a kind no model
    covers yet: perfbot.toml naming no model, noise/ without one, the pooling script."""
    folder.mkdir(parents=True)
    text = (REPO_ROOT / "perfbot.toml").read_text(encoding="utf-8")
    (folder / "perfbot.toml").write_text(with_models(text, []), encoding="utf-8")
    (folder / "noise").mkdir()
    (folder / ".github" / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / POOL, folder / POOL)
    return folder


def with_models(perfbot_toml: str, models: list[str]) -> str:
    """perfbot.toml's text with `[verdict] noise_model` naming these models (a list)."""
    line = re.compile(r"^noise_model = .*$", re.M)
    assert len(line.findall(perfbot_toml)) == 1
    return line.sub(f"noise_model = {json.dumps(models)}", perfbot_toml)


def lay_out_run(prefix: str, run: Path, source: Path | None = None) -> None:
    """One recorded run as one run-K folder: benchmarks.json, machine.json and its own files,
    from ``source`` (default: where the H200's model runs lie, :data:`FOLDERS`)."""
    source = FOLDERS[prefix] if source is None else source
    (run / "nvidia-h200").mkdir(parents=True)
    shutil.copy(source / "benchmarks.json", run / "benchmarks.json")
    for path in (source / "nvidia-h200").iterdir():
        if path.name == "machine.json" or path.name.startswith(prefix):
            shutil.copy(path, run / "nvidia-h200" / path.name)


def download_runs(folder: Path, run_id: str, prefixes: list[str]) -> None:
    """calibrate-<run id>/run-K as the model job's download step leaves the measured runs."""
    for k, prefix in enumerate(prefixes, 1):
        lay_out_run(prefix, folder / f"calibrate-{run_id}" / f"run-{k}")


def python_shim(tmp_path: Path, stand_in: bool) -> str:
    """A PATH whose `python` is this test's, logged; with the calibrate stand-in if asked."""
    return shim(tmp_path, "python", (CALIBRATE_STAND_IN if stand_in else "") + real_python())


def real_python() -> str:
    return f'exec {sys.executable} "$@"'


def fit(
    tmp_path: Path,
    folder: Path,
    run_id: str,
    runs: int,
    missed: list[str] | None = None,
    calibrate_status: int = 0,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], str]:
    """The fit step, run in the checkout ``folder``: ``missed`` None runs the real calibrate,
    a list the stand-in that reports those targets missed."""
    env = {
        "PATH": python_shim(tmp_path, missed is not None),
        "PYTHONPATH": str(REPO_ROOT),
        "MISSED": json.dumps(missed or []),
        "CALIBRATE_STATUS": str(calibrate_status),
        "RUNS": str(runs),
        "RUNNER_LABEL": "gpu-h200",
        "RUNS_DIR": f"calibrate-{run_id}",
        "PERFBOT_REPOSITORY": "fusion-perfbot/fusion-perfbot",
        "PERFBOT_REF": SHA,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "Lightning-AI/lightning-thunder",
        "GITHUB_RUN_ID": run_id,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
    }
    proc = run_step(step_by_id(PACKAGE, "fit"), folder, env, tmp_path)
    summary = tmp_path / "summary"
    return proc, outputs(tmp_path / "out"), summary.read_text() if summary.exists() else ""


def upload_step() -> dict[str, Any]:
    """The model job's last step: the one artifact it keeps."""
    (step,) = [
        s
        for job, s in iter_steps(PACKAGE)
        if job == "model" and str(s.get("uses", "")).startswith("actions/upload-artifact@")
    ]
    return step


def artifact(folder: Path, machine: str, into: Path) -> Path:
    """What the upload step takes from the checkout, copied into ``into`` with its layout."""
    paths = upload_step()["with"]["path"].splitlines()
    for path in (p.replace("${{ steps.fit.outputs.machine }}", machine) for p in paths):
        source, dest = folder / path.rstrip("/"), into / path.rstrip("/")
        assert source.exists(), path
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, dest)
        else:
            shutil.copy(source, dest)
    return into


def files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
