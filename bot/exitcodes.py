"""The bot's exit codes: CI branches on them, so each failure class has its own."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK_NO_REGRESSION = 0  # ran to the end; no regression (or improved, or no data)
    REGRESSION = 1  # ran to the end; a regression was found and reported
    USAGE = 2  # bad arguments or configuration: nothing was read or posted
    BAD_INPUT = 3  # results missing, corrupt or incomplete: nothing was posted
    GITHUB_FAILURE = 4  # a GitHub step failed; the message names it


HELP = "\n".join(
    [
        "exit codes:",
        "  0  OK_NO_REGRESSION  no regression (no change, improved, or no data)",
        "  1  REGRESSION        a regression was found (and reported)",
        "  2  USAGE             bad arguments or configuration",
        "  3  BAD_INPUT         results missing, corrupt or incomplete",
        "  4  GITHUB_FAILURE    a GitHub step failed (the message names it)",
    ]
)
