"""The real measurer on CPU: ``python3 -m benchmarks.under_test.one`` installs and keys one
build exactly as a side of a pair (real pip, real git), and without a GPU the bisect stops
with MEASURE_FAILED, recording nothing. The wheels are tests/suite's one-line ``thunder``
(TEST INPUTS, not Thunder); no pip call reaches an index."""

from __future__ import annotations

import importlib.util
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType

import pytest
from paths import REPO_ROOT, working_directory

from benchmarks.under_test.__main__ import Exit
from benchmarks.under_test.one import main as one_main
from bot.commands import cli
from bot.exitcodes import ExitCode


def _test_inputs() -> ModuleType:
    """tests/suite/under_test_inputs.py, for its wheel maker (one definition of a test wheel)."""
    path = REPO_ROOT / "tests" / "suite" / "under_test_inputs.py"
    spec = importlib.util.spec_from_file_location("suite_under_test_inputs", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_INPUTS = _test_inputs()
make_wheel = _INPUTS.make_wheel


@pytest.fixture(autouse=True)
def _offline(tmp_path: Path) -> Iterator[None]:
    with _INPUTS.offline_env(tmp_path / "home"):
        yield


def one(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.under_test.one", "--package", "thunder", *args],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def one_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``one(*args)`` in this process (the function the module's ``python3 -m`` calls), for what
    it refuses before it installs anything, or its help: a process of its own shows no more."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["--package", "thunder", *args]
    with working_directory(REPO_ROOT), redirect_stdout(out), redirect_stderr(err):
        try:
            code = one_main(argv)
        except SystemExit as exc:  # argparse: --help, or arguments it refuses
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


def test_one_build_is_installed_keyed_and_described(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w", "0.2.7.dev20260118")
    results = tmp_path / "r" / "run-1"
    done = one("--build", str(wheel), "--results", str(results), "--work", str(tmp_path / "work"),
               "--points", "float32/2048x8192", "--install-only")  # fmt: skip
    assert done.returncode == Exit.OK, done.stderr
    manifest = json.loads((tmp_path / "r" / "run-1.build.json").read_text())
    assert manifest["schema"] == "perfbot-under-test-one/1"
    assert manifest["build"]["spec"] == wheel.name and manifest["build"]["side"] == "bisect"
    assert manifest["key_date"] == "2026-01-18T00:00:00+00:00" and len(manifest["key"]) == 40
    assert manifest["points"] == ["float32/2048x8192"] and manifest["run_status"] is None
    assert "lightning-thunder" not in manifest["stack"] and manifest["stack"]
    again = one("--build", str(wheel), "--results", str(tmp_path / "r" / "run-2"),
                "--work", str(tmp_path / "work"), "--install-only")  # fmt: skip
    assert again.returncode == 0
    assert json.loads((tmp_path / "r" / "run-2.build.json").read_text())["key"] == manifest["key"]


def test_a_results_folder_that_holds_anything_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w", "0.2.9")
    (tmp_path / "r" / "nvidia-h200").mkdir(parents=True)
    done = one_in_process(
        "--build", str(wheel), "--results", str(tmp_path / "r"), "--work", str(tmp_path)
    )
    assert done.returncode == Exit.USAGE and "is not empty" in done.stderr


@pytest.mark.slow  # seconds of real pip, asv or bash end to end (docs/BOT.md: pytest -m slow)
@pytest.mark.skipif(find_spec("torch") is not None, reason="torch is here: a GPU may be too")
def test_without_a_gpu_the_bisect_stops_and_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_wheel(tmp_path / "w", "0.2.7.dev20251102")
    bad = make_wheel(tmp_path / "w", "0.2.7.dev20260201")
    (tmp_path / "b.txt").write_text("")
    argv = ["bisect", "--package", "thunder", "--good", str(good), "--bad", str(bad),
            "--builds", str(tmp_path / "b.txt"), "--points", "float32/2048x8192",
            "--state", str(tmp_path / "state.json"), "--machine", "nvidia-h200",
            "--config", str(REPO_ROOT / "perfbot.toml")]  # fmt: skip
    assert cli.main(argv, env={}) == ExitCode.MEASURE_FAILED
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"fusion-perfbot bisect: step 'measure the builds' failed: {good.name}: no usable GPU "
        "here (the suite's exit 3)"
    )
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["runs"] == [] and state["good"] == good.name
    manifest = json.loads(next((tmp_path / "state.runs").glob("*/run-1.build.json")).read_text())
    assert manifest["run_status"] == 3 and len(manifest["key"]) == 40


def test_help_lists_the_exit_codes() -> None:
    done = one_in_process("--help")
    assert done.returncode == 0
    for code in (Exit.OK, Exit.MEASURE_FAILED, Exit.USAGE, Exit.NO_GPU, Exit.INSTALL_FAILED):
        assert f"{code.value}  {code.name}" in done.stdout
