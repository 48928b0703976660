"""Where the tests find the repository's own files, and how they run the bot's command line.

``run_bot`` calls the command line in this process (``bot.commands.cli.main``, the function
``python -m bot`` calls): the same argument parsing, steps, exit codes and log escaping, without
0.3 s of interpreter start-up and imports per call. ``run_bot_process`` starts a real process,
for what only one shows (the installed entry module, stdout and stderr as the OS hands them
over, a closed pipe, two processes racing); a few end-to-end tests use it.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA = REPO_ROOT / "data"

#: The six 8-call stock (A/A) runs of the first two days, by commit prefix, and their folders.
STOCK_RUNS = {
    "06f650c8": DATA / "h200" / "results",
    "da17d548": DATA / "h200" / "results",
    "6c840f30": DATA / "h200-states" / "results",
    "022fefdd": DATA / "h200-states" / "results",
    "324c493b": DATA / "h200-states" / "results",
    "016e16b1": DATA / "h200-states" / "results",
}


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Run the body with `path` as the working directory (a test worker runs one test at a
    time, so the process-wide change is the test's alone), then go back."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def run_bot(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m bot ARGS`` from the repository root, in this process.

    The result has the shape of a finished process (returncode, stdout, stderr), so a test reads
    the same either way; an exception the command lets escape fails the test with its traceback
    instead of hiding in a child's stderr. `env` is the environment the command sees (default:
    this process's); `timeout` is accepted for the process form and not enforced here.
    """
    from bot.commands.cli import main  # imported late: collecting a test must not need it

    del timeout
    out, err = io.StringIO(), io.StringIO()
    with (
        working_directory(REPO_ROOT),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(args), env=dict(os.environ) if env is None else dict(env))
    return subprocess.CompletedProcess(
        ["python", "-m", "bot", *args], code, out.getvalue(), err.getvalue()
    )


def run_bot_process(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m bot ARGS`` in its own process, from the repository root."""
    return run_module("bot", *args, timeout=timeout)


def run_module(module: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` in its own process, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
        timeout=timeout,
    )


def module_output(module: str, *args: str) -> str:
    """The output of ``python -m MODULE ARGS``, which must succeed."""
    done = run_module(module, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
