"""The command line's rough edges, each as a new user met it, and how it behaves now."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from data_helpers import MACHINE, SyntheticResults, synthetic
from paths import DATA, REPO_ROOT

from bot.commands import cli
from bot.exitcodes import ExitCode

__all__ = ["synthetic"]
H200 = DATA / "h200" / "results"


def _pair(synth: SyntheticResults) -> list[str]:
    return ["--results", str(synth.results_dir), "--base", synth.commits["base"][:8]]


def test_demo_into_a_closed_pipe_ends_quietly_with_its_own_code() -> None:
    """Before: `python -m bot demo | head` ended in a BrokenPipeError traceback."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    with subprocess.Popen(
        [sys.executable, "-m", "bot", "demo"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        first = [proc.stdout.readline() for _ in range(3)]
        proc.stdout.close()  # what `head -3` does after three lines
        err = proc.stderr.read()
        code = proc.wait(timeout=120)
    assert first[0].startswith("Results ")
    assert code == ExitCode.OUTPUT_CLOSED == 141
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("command", ["report", "noise"])
def test_json_dash_writes_json_to_stdout_and_no_file_named_dash(
    synthetic: SyntheticResults,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    """Before: `--json -` wrote a file named `-` in the working directory."""
    monkeypatch.chdir(tmp_path)
    if command == "report":
        argv = ["report", *_pair(synthetic), "--head", synthetic.commits["same"], "--json", "-"]
        expected = ExitCode.OK_NO_REGRESSION
    else:
        argv = ["noise", "--results", str(H200), "--json", "-"]
        expected = ExitCode.OK_NO_REGRESSION
    assert cli.main(argv, env={}) == expected
    data = json.loads(capsys.readouterr().out)  # stdout is the JSON and nothing else
    assert isinstance(data, dict) and ("machines" in data or "series" in data)
    assert not (tmp_path / "-").exists()


def test_calibrate_json_dash(
    synthetic: SyntheticResults,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["calibrate", "--results", str(synthetic.results_dir), "--json", "-"]
    argv += ["--trials", "0", "--runs-a-side", "1", "--jobs", "1"]
    assert cli.main(argv, env={}) == ExitCode.OK_NO_REGRESSION
    data = json.loads(capsys.readouterr().out)  # stdout is the JSON and nothing else
    assert [s["a_a"]["false_alarm"]["trials"] for s in data["sides"]] == [12]
    assert not (tmp_path / "-").exists()


def test_site_serve_on_a_busy_port_fails_at_once_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: it built the whole site first, then exited 3 without naming the port. The build
    is replaced by one that fails the test: the port is refused before any build starts."""
    from bot.site import serve

    def no_build(*args: object, **kwargs: object) -> object:
        raise AssertionError("the site was built before the port was taken")

    monkeypatch.setattr(serve, "build_site", no_build)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["site", "serve", "--results", str(DATA / "h200-smoke" / "results")]
        code = cli.main([*argv, "--port", str(port)], env={})
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE
    assert f"cannot listen on 127.0.0.1:{port}" in err and "choose another --port" in err


def test_site_serve_takes_its_port_before_it_reads_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The order, not only the speed: with results that do not exist, a busy port is still the
    error reported (a build first would have failed on the results, exit 3)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        argv = ["site", "serve", "--results", str(tmp_path / "none"), "--port", str(port)]
        assert cli.main(argv, env={}) == ExitCode.USAGE
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


def test_site_serve_refuses_a_port_that_does_not_exist(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["site", "serve", "--results", str(DATA / "h200-smoke" / "results"), "--port", "70000"]
    assert cli.main(argv, env={}) == ExitCode.USAGE
    assert "'70000' is not a TCP port (0-65535)" in capsys.readouterr().err


def test_results_given_as_a_machine_folder_or_a_file(
    synthetic: SyntheticResults, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: both read "no asv machine directories", which sent people looking elsewhere."""
    machine = synthetic.results_dir / MACHINE
    head = ["--head", synthetic.commits["same"]]
    for given, said in (
        (
            machine,
            f"is one machine's folder (it holds machine.json); pass the results directory "
            f"above it: {synthetic.results_dir}",
        ),
        (synthetic.result_file("same"), "is a file, not an asv results directory"),
    ):
        argv = ["report", "--results", str(given), "--base", synthetic.commits["base"], *head]
        assert cli.main(argv, env={}) == ExitCode.BAD_INPUT
        assert said in capsys.readouterr().err


def test_an_unknown_sha_lists_what_is_there(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["report", "--results", str(H200), "--base", "06f650c8", "--head", "deadbeef"]
    assert cli.main(argv, env={}) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "no results for commit deadbeef; commits there: " in err
    for listed in (
        "06f650c8 (nvidia-h200, stock)",
        "da17d548 (nvidia-h200, stock)",
        "9dc51696 (nvidia-h200, unfused-backward)",
    ):
        assert listed in err
