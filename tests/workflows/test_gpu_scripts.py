"""The GPU host's helpers every GPU workflow shares (.github/scripts): one lock, one machine name.

The lock was a copy in each workflow; now bench-pr.yml, bench-package.yml, nightly.yml and
calibrate-package.yml each source the one script (and none takes a lock of its own), so they
can never drift apart. Run for real: flock, bash, a second process holding the lock.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bench_run import BASE, HEAD, bench, write_fake_run_gpu
from workflow_expr import _text, evaluate_if
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

from benchmarks.under_test.pair import release_gpu_lock

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


def _lock_seen(measure: str) -> list[str]:
    """What the stand-in run_gpu.sh saw of the lock (bench_run.py), in the order of the runs:
    every measurement under the lock, no store with it, the last store after it was let go.
    `fd9`: the run holds the lock's descriptor (as a child of the step's shell does);
    `measure`: how a measurement sees it."""
    seen = [f"{phase} rep-{rep} {sha} {how}"
            for rep in (1, 2) for sha in (BASE, HEAD)
            for phase, how in (("measure", measure), ("store", "held no-fd9"))]  # fmt: skip
    seen[-1] = f"store rep-2 {HEAD} free no-fd9"
    return seen


def test_bench_pr_lets_go_of_the_lock_before_the_last_store(tmp_path: Path) -> None:
    """bench-pr's real step, git shimmed, run_gpu.sh the stand-in: while a side is measured
    another process cannot take the lock; the stores run beside the next measurement without
    the lock's descriptor; the last store runs after the step let go, so the host's next
    benchmark takes the lock at once instead of waiting for asv."""
    lock = tmp_path / "gpu.lock"
    code, _, out = bench(tmp_path, env={"LOCK_PROBE": str(lock), "LAST_COMMIT": HEAD})
    assert code == 0, out
    seen = Path(f"{lock}.seen").read_text(encoding="utf-8").splitlines()
    assert sorted(seen) == sorted(_lock_seen("held fd9"))
    assert f"released the GPU lock {lock}" in out


def test_bench_pr_runs_with_a_base_lock_script_from_before_the_release(tmp_path: Path) -> None:
    """bench-pr takes the lock script from the PR's base: one from before perfbot_gpu_release
    still runs the step, and holds the lock to its end, the last store included."""
    text = GPU_LOCK_SH.read_text(encoding="utf-8")
    old = tmp_path / "old-gpu-lock.sh"
    old.write_text(text[: text.index("# A step whose GPU work is done")], encoding="utf-8")
    lock = tmp_path / "gpu.lock"
    env = {"LOCK_PROBE": str(lock), "LAST_COMMIT": "", "PERFBOT_GPU_LOCK_SH": str(old)}
    code, _, out = bench(tmp_path, env=env)
    assert code == 0, out
    seen = Path(f"{lock}.seen").read_text(encoding="utf-8").splitlines()
    assert sorted(seen) == sorted([*_lock_seen("held fd9")[:-1], f"store rep-2 {HEAD} held no-fd9"])
    assert "released the GPU lock" not in out


def test_bench_pr_builds_at_once_and_times_in_turns_under_the_lock(tmp_path: Path) -> None:
    """Both sides' suites know turns: the four measuring processes start at once, each told
    its turn in the job's order (base, head, base, head), all under the lock (the step's
    shell holds it; the launcher's children hold no descriptor); every store runs after the
    step let go, with the machine name the measurements found."""
    lock = tmp_path / "gpu.lock"
    env = {"LOCK_PROBE": str(lock), "LAST_COMMIT": HEAD}
    code, runs, out = bench(tmp_path, env=env, turns=True)
    assert code == 0, out
    turns_seen = (tmp_path / "run_gpu.calls.turns").read_text(encoding="utf-8").splitlines()
    assert sorted(t for t in turns_seen if t.endswith("measure")) == [
        "1/4 perfbot-base rep-1 measure",
        "2/4 perfbot-head rep-1 measure",
        "3/4 perfbot-base rep-2 measure",
        "4/4 perfbot-head rep-2 measure",
    ]
    assert not [t for t in turns_seen if t.endswith("store")]  # a store is no turn
    seen = Path(f"{lock}.seen").read_text(encoding="utf-8").splitlines()
    measures = [line for line in seen if line.startswith("measure")]
    assert sorted(measures) == sorted(
        f"measure rep-{rep} {sha} held no-fd9" for rep in (1, 2) for sha in (BASE, HEAD)
    )
    stored = [f"store rep-{rep} {sha} free no-fd9" for rep in (1, 2) for sha in (BASE, HEAD)]
    assert seen[4:] == stored
    assert f"released the GPU lock {lock}" in out
    stores = [r for r in runs if r.endswith("--phase store")]
    assert len(stores) == 4 and all("--machine nvidia-h200 --phase store" in r for r in stores)
    captured = [r for r in runs if r.endswith("--phase measure") and "--capture" in r]
    assert len(captured) == 2 and all("rep-1" in r for r in captured)


def test_bench_pr_runs_one_at_a_time_where_the_repository_turns_turns_off(tmp_path: Path) -> None:
    """Both suites know turns, but the repository variable PERFBOT_TURNS is `off`: the job
    runs one process at a time, as before turns."""
    code, runs, out = bench(tmp_path, env={"PERFBOT_TURNS": "off"}, turns=True)
    assert code == 0, out
    assert not (tmp_path / "run_gpu.calls.turns").exists()
    assert len([r for r in runs if r.endswith("--phase measure")]) == 4


def test_bench_pr_runs_one_at_a_time_where_the_gpu_has_no_room_for_turns(tmp_path: Path) -> None:
    """Both suites know turns, but the GPU's memory (40 GB) cannot hold four processes' built
    points (benchmarks/engine/room.py): one process at a time, and the log says why."""
    code, runs, out = bench(tmp_path, env={"GPU_MEMORY_MIB": "40960"}, turns=True)
    assert code == 0, out
    assert not (tmp_path / "run_gpu.calls.turns").exists()
    assert len([r for r in runs if r.endswith("--phase measure")]) == 4
    assert "the GPU has 40,960 MiB: one process at a time" in out


def test_bench_pr_takes_turns_where_the_repository_says_nothing(tmp_path: Path) -> None:
    """Turns are the default (the catalog's job held an H100 155.3 s in turns against 401.0 s
    one at a time, docs/PERFORMANCE.md): with no repository variable the step's value is `on`,
    and an empty one is read as unset."""
    step = step_by_id(load_workflow(WORKFLOWS / BENCH), "bench")
    expression = step["env"]["PERFBOT_TURNS"]
    assert _text(evaluate_if(expression, {"vars": {}})) == "on"
    assert _text(evaluate_if(expression, {"vars": {"PERFBOT_TURNS": "off"}})) == "off"
    code, runs, out = bench(tmp_path, env={"PERFBOT_TURNS": ""}, turns=True)
    assert code == 0, out
    turns_seen = (tmp_path / "run_gpu.calls.turns").read_text(encoding="utf-8").splitlines()
    assert len([t for t in turns_seen if t.endswith("measure")]) == 4
    assert len([r for r in runs if r.endswith("--phase store")]) == 4


def test_bench_pr_in_turns_stops_when_a_measurement_fails(tmp_path: Path) -> None:
    """A measuring process that fails (no GPU, a crash) fails the job before any store, and
    says so under every process's log: later runs would be unpaired."""
    env = {"HEAD_MEASURE_STATUS": "7"}
    code, runs, out = bench(tmp_path, env=env, turns=True)
    assert code == 7, out
    assert "::error::a measuring process failed (exit 7)" in out
    assert "::group::head-rep1" in out
    assert not [r for r in runs if r.endswith("--phase store")]


#: benchmarks.under_test's measuring loop (pair.alternate) with two sides of made-up versions,
#: run_gpu.sh the stand-in: what `python3 -m benchmarks.under_test` runs after installing.
UNDER_TEST_LOOP = """\
import sys
from pathlib import Path

from benchmarks.under_test.install import Installed
from benchmarks.under_test.pair import Side, in_turns, one_at_a_time, stderr
from benchmarks.under_test.spec import parse_spec

work, run_script, base, head = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]


def side(name: str, version: str, key: str) -> Side:
    spec = parse_spec(f"lightning-thunder=={version}", "thunder")
    built = Installed(spec, work / name, "lightning-thunder", version, None, None, "")
    return Side(name, built, key, "2026-03-01")


sides = [side("base", "0.2.6", base), side("head", "0.2.7", head)]
measure = in_turns if sys.argv[5:] == ["turns"] else one_at_a_time
measure(sides, repeats=2, results=work / "results", size_set="pr", keys_repo=work / "keys",
        machine=None, run_script=run_script, log=stderr)
"""


@pytest.mark.parametrize("how", ["one-at-a-time", "turns"])
def test_under_test_lets_go_of_the_lock_before_its_stores(tmp_path: Path, how: str) -> None:
    """bench-package's shape: the step's shell takes the lock and starts Python, which inherits
    the descriptor (its children do not). One run at a time, each store runs beside the next
    run's start-up and Python lets go after the last measurement, so the last store, and what
    the step does after it, run without the lock; in turns (``--turns``) every measurement runs
    under the lock and every store after it was let go."""
    lock = tmp_path / "lock" / "gpu.lock"
    lock.parent.mkdir()
    (tmp_path / "loop.py").write_text(UNDER_TEST_LOOP, encoding="utf-8")
    fake = write_fake_run_gpu(tmp_path / "fake_run_gpu.sh")
    body = (
        f"export CALLS='{tmp_path}/run_gpu.calls' LOCK_PROBE='{lock}' LAST_COMMIT={HEAD} "
        f"REPEATS=2 PYTHONPATH='{REPO}'\n"
        f"'{sys.executable}' '{tmp_path}/loop.py' '{tmp_path}' '{fake}' {BASE} {HEAD} "
        f"{'turns' if how == 'turns' else ''}\n"
        f'flock -n "{lock}" true && echo "after: free" || echo "after: held"'
    )
    proc = _run(_lock_step(tmp_path, body), lock)
    assert proc.returncode == 0, proc.stderr
    seen = Path(f"{lock}.seen").read_text(encoding="utf-8").splitlines()
    if how == "turns":
        measured = [f"measure rep-{r} {sha} held no-fd9" for r in (1, 2) for sha in (BASE, HEAD)]
        assert sorted(seen[:4]) == sorted(measured)
        assert seen[4:] == [m.replace("measure", "store").replace("held", "free") for m in measured]
    else:
        assert sorted(seen) == sorted(_lock_seen("held no-fd9"))
    assert "== released the GPU lock" in proc.stderr
    assert proc.stdout.strip().endswith("after: free")


def test_python_lets_go_only_of_the_lock_it_was_named(tmp_path: Path) -> None:
    """release_gpu_lock closes the named descriptor only where it is open on the named lock: a
    stale variable never closes a file of the process's own that took that number."""
    lock, other = tmp_path / "gpu.lock", tmp_path / "other"
    lock.touch()
    other.touch()
    fd = os.open(other, os.O_WRONLY)
    try:
        assert release_gpu_lock({}) is None
        assert release_gpu_lock({"PERFBOT_GPU_LOCK_FD": str(fd)}) is None
        named = {"PERFBOT_GPU_LOCK_FD": str(fd), "PERFBOT_GPU_LOCK": str(lock)}
        assert release_gpu_lock(named) is None
        os.fstat(fd)  # still open
    finally:
        os.close(fd)
    fd = os.open(lock, os.O_WRONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    assert subprocess.run(["flock", "-n", str(lock), "true"], check=False).returncode == 1
    assert release_gpu_lock({"PERFBOT_GPU_LOCK_FD": str(fd), "PERFBOT_GPU_LOCK": str(lock)}) == fd
    assert subprocess.run(["flock", "-n", str(lock), "true"], check=False).returncode == 0


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
