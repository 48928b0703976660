"""Base and head of the package under test, measured alternately like a PR's two sides.

The same job as bench-pr.yml's (every process building at once, then timing in its turn,
base, head, base, head: a drift of the machine lands on both sides; the stores after the GPU
lock is released), but both sides run this repository's suite at one commit, each with its own
overlay first on the path and its own key as the asv commit.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from benchmarks.engine import turns
from benchmarks.under_test import keys
from benchmarks.under_test.install import Installed, overlay_env

#: Variants measured in repeats after the first: eager and torch.compile are context, once a side.
DECIDING_VARIANTS = "nvfuser,thunder-prims,thunder-func"
MANIFEST_SCHEMA = "perfbot-under-test/1"


@dataclass(frozen=True)
class Side:
    name: str  # "base" or "head"
    installed: Installed
    key: str
    key_date: str

    def provenance(self) -> dict[str, object]:
        return {**self.installed.record(self.name), "key": self.key}

    def suite_env(self) -> dict[str, str]:
        """The suite's environment for this side: its overlay first, and what it is."""
        env = overlay_env(self.installed.overlay, dict(os.environ))
        env["RMSNORM_BENCH_UNDER_TEST"] = json.dumps(self.provenance(), sort_keys=True)
        return env

    def suite_command(
        self, run_script: Path, size_set: str, keys_repo: Path, results: Path, machine: str | None
    ) -> list[str]:
        """run_gpu.sh measuring this side under its key into ``results``."""
        cmd = ["bash", str(run_script), "--size-set", size_set, "--commit", self.key]
        cmd += ["--asv-repo", str(keys_repo), "--results", str(results)]
        return cmd + (["--machine", machine] if machine else [])


def keyed_side(name: str, installed: Installed, keys_repo: Path) -> Side:
    """The side of an installed build, under the key its build gets in ``keys_repo``."""
    key = keys.key_for(keys_repo, installed)
    return Side(name, installed, key, keys.commit_date(keys_repo, key))


def manifest(
    package: str,
    sides: list[Side],
    stack: dict[str, str],
    suite_commit: str | None,
    size_set: str,
    repeats: int,
) -> dict[str, object]:
    """What the poster and a reader need to know which results are which build."""
    return {
        "schema": MANIFEST_SCHEMA,
        "package": package,
        "suite_commit": suite_commit,
        "size_set": size_set,
        "repeats": repeats,
        "sides": {s.name: {**s.provenance(), "key_date": s.key_date} for s in sides},
        "stack": stack,
    }


class MeasureFailed(RuntimeError):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _measure_failed(what: str, code: int) -> MeasureFailed:
    why = ": no usable GPU here (run_gpu.sh's exit 3)" if code == 3 else ""
    return MeasureFailed(f"{what}: the measurement failed (exit {code}){why}", code)


def _stored(what: str, code: int, warnings: list[str]) -> None:
    """asv's exit 2 (some points failed) is a warning: the bot reports those points as broken;
    any other failure to store stops the job."""
    if code == 2:
        warnings.append(f"{what}: some points failed (the bot reports them)")
    elif code != 0:
        raise MeasureFailed(f"{what}: asv could not store the results (exit {code})", code)


def _machine_in(results: Path) -> str:
    """The asv machine name the first run found (its one folder in rep-1)."""
    found = sorted(p.name for p in (results / "rep-1").iterdir() if p.is_dir())
    if len(found) != 1:
        raise MeasureFailed(f"rep-1 holds {len(found)} machine folders, not 1", 1)
    return found[0]


def _run_args(
    side: Side, rep: int, run_script: Path, size_set: str, keys_repo: Path, results: Path,
    machine: str | None,
) -> list[str]:  # fmt: skip
    """run_gpu.sh's arguments for repeat ``rep`` of ``side``: repeat 1 also captures what ran
    inside the fusions (the bot's hints) and measures the context variants (eager,
    torch.compile), once a side."""
    args = side.suite_command(run_script, size_set, keys_repo, results / f"rep-{rep}", machine)
    return args + (["--variants", DECIDING_VARIANTS] if rep > 1 else ["--capture"])


def run_told(
    runs: list[tuple[str, list[str], dict[str, str]]],
    log: Callable[[str], None],
    *,
    together: bool = True,
) -> list[int]:
    """Each (label, command, environment) as one job's turns (benchmarks/engine/turns.py), or,
    not ``together``, each a job of its own, one after the other; once all are over, each one's
    exit and log told under its label, in order. Their exit statuses."""
    # The protocol's markers and the logs, gone once the logs are told.
    with tempfile.TemporaryDirectory(prefix="perfbot-turns-") as tmp:
        work = Path(tmp)
        commands = [
            turns.Command(args, env, work / "logs" / f"{k}.log")
            for k, (_, args, env) in enumerate(runs)
        ]
        batches = [commands] if together else [[c] for c in commands]
        statuses = [
            status
            for k, batch in enumerate(batches)
            for status in turns.run_in_turns(batch, work / f"markers-{k}")
        ]
        for (label, _, _), command, status in zip(runs, commands, statuses, strict=True):
            log(f"== {label}: exit {status}")
            log(command.log.read_text(encoding="utf-8", errors="replace").rstrip())
    return statuses


def in_turns(
    sides: list[Side],
    *,
    repeats: int,
    results: Path,
    size_set: str,
    keys_repo: Path,
    machine: str | None,
    run_script: Path,
    log: Callable[[str], None],
) -> list[str]:
    """Measure every side ``repeats`` times as one job's turns (``--turns``); returns the
    warnings (failed points).

    Every measuring process starts at once and builds beside the others; then each has the
    GPU alone for its timed rounds, alternately (base, head, base, head: a drift of the machine
    lands on both sides; benchmarks/engine/turns.py). A measurement that fails (no GPU, a
    crash) stops everything before any store: later runs would be unpaired. The stores follow
    one at a time after the GPU lock is released; asv's exit 2 (some points failed) is a
    warning: the bot reports those points as broken.
    """
    runs = [(rep, side) for rep in range(1, repeats + 1) for side in sides]

    def args_of(rep: int, side: Side, machine: str | None) -> list[str]:
        return _run_args(side, rep, run_script, size_set, keys_repo, results, machine)

    for k, (rep, side) in enumerate(runs, start=1):
        log(f"== {side.name} repeat {rep} of {repeats}: {side.installed.spec.shown()} "
            f"(key {side.key[:12]}), turn {k} of {len(runs)}")  # fmt: skip
    measures = [
        (f"{side.name} repeat {rep}", [*args_of(rep, side, machine), "--phase", "measure"],
         side.suite_env())
        for rep, side in runs
    ]  # fmt: skip
    statuses = run_told(measures, log)
    failed = [(run, status) for run, status in zip(runs, statuses, strict=True) if status != 0]
    if failed:
        (rep, side), code = failed[0]
        raise _measure_failed(f"{side.name} repeat {rep}", code)
    # The GPU work is done: the host's next benchmark may start beside the stores.
    if release_gpu_lock(os.environ) is not None:
        log("== released the GPU lock: the stores need no GPU")
    if machine is None:
        machine = _machine_in(results)
    warnings: list[str] = []
    for rep, side in runs:
        store = [*args_of(rep, side, machine), "--phase", "store"]
        stored = subprocess.run(store, env=side.suite_env(), check=False)
        _stored(f"{side.name} repeat {rep}", stored.returncode, warnings)
    return warnings


def one_at_a_time(
    sides: list[Side],
    *,
    repeats: int,
    results: Path,
    size_set: str,
    keys_repo: Path,
    machine: str | None,
    run_script: Path,
    log: Callable[[str], None],
) -> list[str]:
    """Measure every side ``repeats`` times, alternately, one process at a time (the job
    before turns); returns the warnings (failed points).

    A measurement that fails (no GPU, a crash) stops everything: later runs would be unpaired.
    asv's exit 2 (some points failed) is a warning: the bot reports those points as broken.
    """
    warnings: list[str] = []
    store: tuple[subprocess.Popen[bytes], str] | None = None

    def finish_store() -> None:
        nonlocal store
        if store is None:
            return
        proc, what = store
        store = None
        _stored(what, proc.wait(), warnings)

    for rep in range(1, repeats + 1):
        for side in sides:
            args = _run_args(side, rep, run_script, size_set, keys_repo, results, machine)
            env = side.suite_env()
            what = f"{side.name} repeat {rep}"
            log(f"== {what} of {repeats}: {side.installed.spec.shown()} (key {side.key[:12]})")
            done = subprocess.run([*args, "--phase", "measure"], env=env, check=False)
            finish_store()
            if done.returncode != 0:
                raise _measure_failed(what, done.returncode)
            store = (subprocess.Popen([*args, "--phase", "store"], env=env), what)
            if machine is None:
                machine = _machine_in(results)
    # The GPU work is done: the host's next benchmark may start beside the last store.
    if release_gpu_lock(os.environ) is not None:
        log("== released the GPU lock: the last store needs no GPU")
    finish_store()
    return warnings


#: What .github/scripts/gpu-lock.sh exports: the descriptor that holds the host's GPU lock (a
#: process started from the step's shell inherits it; this one's children do not) and its file.
LOCK_FD_VAR, LOCK_FILE_VAR = "PERFBOT_GPU_LOCK_FD", "PERFBOT_GPU_LOCK"


def release_gpu_lock(environ: Mapping[str, str]) -> int | None:
    """Let go of the GPU lock this process inherited from its step's shell: unlocking through
    this copy of the descriptor releases the step's lock, then the copy is closed. Returns the
    descriptor released, or None where there is nothing to release: no lock named, or the
    descriptor not open here or open on another file than the lock (left alone)."""
    raw, path = environ.get(LOCK_FD_VAR, ""), environ.get(LOCK_FILE_VAR, "")
    if not raw.isdigit() or not path:
        return None
    fd = int(raw)
    try:
        held, lock = os.fstat(fd), os.stat(path)
    except OSError:
        return None
    if (held.st_dev, held.st_ino) != (lock.st_dev, lock.st_ino):
        return None
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    return fd


def suite_commit(root: Path) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


def stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
