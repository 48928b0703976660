"""The headless browser the tests drive, in one place: Debian's Chromium (never Playwright's own
download), its flags, and why it cannot run here when it cannot (tests/site's browser tests and
tests/tell's first-screen tool and test share it)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

CHROMIUM = Path(os.environ.get("PERFBOT_CHROMIUM", "/usr/bin/chromium"))
GET_CHROMIUM = (
    "sudo apt-get install -y chromium fonts-liberation (Debian's browser; Playwright's own "
    "download is not used), or set PERFBOT_CHROMIUM to a Chromium binary"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def missing_browser() -> str | None:
    """Why no headless Chromium can be driven here, or None."""
    if not CHROMIUM.is_file():
        return f"headless Chromium not found at {CHROMIUM}: {GET_CHROMIUM}"
    if importlib.util.find_spec("playwright") is None:
        return "Python playwright is not installed: pip install -e '.[test]'"
    return None
