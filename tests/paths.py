"""Where the tests find the repository's own files (one definition for every test folder)."""

from __future__ import annotations

import subprocess
import sys
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


def run_bot(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m bot ARGS`` in its own process, from the repository root: for what only a
    real process shows (exit status, stdout and stderr apart, the installed entry module)."""
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
