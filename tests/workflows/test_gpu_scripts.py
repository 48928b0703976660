"""The GPU host's helpers every GPU workflow shares (.github/scripts): one lock, one machine name.

The lock was a copy in each workflow; now bench-pr.yml, bench-package.yml, nightly.yml and
calibrate-package.yml each source the one script (and none takes a lock of its own), so they
can never drift apart. Run for real: flock, bash, a second process holding the lock.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from workflow_rules import (
    BENCH,
    CALIBRATE_PACKAGE,
    GPU_LOCK_SH,
    NIGHTLY,
    REPO,
    SCRIPTS,
    WORKFLOWS,
    load_workflow,
    run_step,
    shim,
    step_by_id,
)

#: (workflow, id of the step that measures on the GPU)
GPU_STEPS = [
    (BENCH, "bench"),
    ("bench-package.yml", "bench"),
    (NIGHTLY, "measure"),
    (CALIBRATE_PACKAGE, "measure"),
]


@pytest.mark.parametrize(("name", "step_id"), GPU_STEPS)
def test_every_gpu_step_sources_the_one_lock_and_takes_none_of_its_own(
    name: str, step_id: str
) -> None:
    wf = load_workflow(WORKFLOWS / name)
    step = step_by_id(wf, step_id)
    script = step["run"]
    assert 'source "$PERFBOT_GPU_LOCK_SH"' in script
    assert step["env"]["PERFBOT_GPU_LOCK_SH"].endswith(".github/scripts/gpu-lock.sh")
    assert step["env"]["PERFBOT_GPU_LOCK"] == "/var/lock/perfbot/gpu.lock"
    # Taken before anything is measured: the source line comes first.
    assert script.index("source") < min(
        (script.index(w) for w in ("run_gpu.sh", "benchmarks.") if w in script), default=10**6
    )
    assert "flock" not in wf.text and "exec 9" not in wf.text


def _lock_step(tmp_path: Path, body: str = "echo measured") -> str:
    script = tmp_path / "step.sh"
    script.write_text(f'source "{GPU_LOCK_SH}"\n{body}\n', encoding="utf-8")
    return str(script)


def _env(lock: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "PERFBOT_GPU_LOCK": str(lock)}


def _run(script: str, lock: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", script],
        env=_env(lock),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_lock_waits_for_the_holder(tmp_path: Path) -> None:
    """A second process holds the lock until told to let go: the step says it waits, and runs
    only once the holder lets go (here after 0.9 s, no sooner)."""
    lock = tmp_path / "lock" / "gpu.lock"
    lock.parent.mkdir()
    holder = subprocess.Popen(
        ["flock", str(lock), "bash", "-c", "echo held; read -r _"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin and holder.stdout
    try:
        assert holder.stdout.readline() == "held\n"  # the holder has it
        start = time.monotonic()
        step = subprocess.Popen(
            ["bash", "-euo", "pipefail", _lock_step(tmp_path)],
            env=_env(lock),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert step.stdout
        said = step.stdout.readline()  # what it says on finding the lock taken, or all it says
        time.sleep(max(0.0, 0.9 - (time.monotonic() - start)))
        still_waiting = step.poll() is None  # 0.9 s on, the step has not run past the lock
        holder.stdin.close()  # the holder lets go
        out, err = step.communicate(timeout=30)
        waited = time.monotonic() - start
    finally:
        if not holder.stdin.closed:
            holder.stdin.close()
        holder.wait(timeout=10)
    proc = subprocess.CompletedProcess(step.args, step.returncode, said + out, err)
    assert proc.returncode == 0, proc.stderr
    assert "waiting for the GPU lock" in proc.stdout and "measured" in proc.stdout
    assert still_waiting and waited >= 0.9
    # Free: taken at once, no wait said.
    proc = _run(_lock_step(tmp_path), lock)
    assert proc.returncode == 0 and "waiting" not in proc.stdout


def test_the_lock_is_held_for_the_rest_of_the_step(tmp_path: Path) -> None:
    lock = tmp_path / "lock" / "gpu.lock"
    lock.parent.mkdir()
    proc = _run(_lock_step(tmp_path, f'flock -n "{lock}" true && echo free || echo held'), lock)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("held")


def test_no_lock_folder_or_a_link_fails_the_step_before_anything_runs(tmp_path: Path) -> None:
    proc = _run(_lock_step(tmp_path), tmp_path / "missing" / "gpu.lock")
    assert proc.returncode == 1 and "::error::no GPU lock folder" in proc.stdout
    assert "measured" not in proc.stdout
    folder = tmp_path / "lock"
    folder.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep me")
    (folder / "gpu.lock").symlink_to(victim)
    proc = _run(_lock_step(tmp_path), folder / "gpu.lock")
    assert proc.returncode == 1 and "symbolic link" in proc.stdout
    assert victim.read_text() == "keep me"
    (tmp_path / "linked").symlink_to(folder, target_is_directory=True)
    proc = _run(_lock_step(tmp_path), tmp_path / "linked" / "other.lock")
    assert proc.returncode == 1 and "::error::no GPU lock folder" in proc.stdout


def test_bench_pr_measures_under_the_lock(tmp_path: Path) -> None:
    """bench-pr's real step, git shimmed: the lock script ran before the first measurement."""
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "bench")
    path = shim(tmp_path, "git", "exit 0")
    env = {
        "PATH": path,
        "BASE_SHA": "a" * 40,
        "PR_HEAD_SHA": "b" * 40,
        "REPEATS": "1",
        "RUNNER_TEMP": str(tmp_path),
        "PERFBOT_GPU_LOCK": str(tmp_path / "gone" / "gpu.lock"),
        "PERFBOT_GPU_LOCK_SH": str(GPU_LOCK_SH),
    }
    proc = run_step(step, tmp_path, env)
    assert proc.returncode == 1 and "::error::no GPU lock folder" in proc.stdout
    assert not (tmp_path / "git.calls").exists()  # nothing ran before the lock


GPU_NAMES = {
    "NVIDIA H200": "nvidia-h200",
    "NVIDIA H100 80GB HBM3": "nvidia-h100-80gb-hbm3",
    "NVIDIA B200": "nvidia-b200",
    "NVIDIA GeForce RTX 4090 (D)": "nvidia-geforce-rtx-4090-d",
}


@pytest.mark.parametrize(("gpu", "machine"), GPU_NAMES.items())
def test_the_machine_name_is_run_gpu_shs(tmp_path: Path, gpu: str, machine: str) -> None:
    """gpu-machine.sh derives the name as benchmarks/run_gpu.sh does: the same probe and the
    same pipeline, character for character, and the same answers."""
    pipeline = re.compile(
        r"""tr '\[:upper:\]' '\[:lower:\]' \| tr -cs 'a-z0-9' '-' \| sed 's/-\$//'"""
    )
    probe = "print(torch.cuda.get_device_name(0))"
    ours = (SCRIPTS / "gpu-machine.sh").read_text(encoding="utf-8")
    theirs = (REPO / "benchmarks" / "run_gpu.sh").read_text(encoding="utf-8")
    for text in (ours, theirs):
        assert pipeline.search(text) and probe in text
    path = shim(tmp_path, "python3", f"echo '{gpu}'")
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "gpu-machine.sh")],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == machine  # as run_gpu.sh: no newline


def test_no_gpu_is_exit_3(tmp_path: Path) -> None:
    path = shim(tmp_path, "python3", "echo 'AssertionError: no CUDA device' >&2; exit 1")
    proc = subprocess.run(
        ["bash", str(SCRIPTS / "gpu-machine.sh")],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 3 and "no usable GPU" in proc.stderr and proc.stdout == ""
