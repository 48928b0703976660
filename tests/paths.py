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
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
        timeout=timeout,
    )
