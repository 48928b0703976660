"""The bot's exit codes: CI branches on them, so each failure class has its own."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK_NO_REGRESSION = 0  # ran to the end; no regression (no change, improved, unsure, no data)
    REGRESSION = 1  # ran to the end; a regression was found and reported
    USAGE = 2  # bad arguments or configuration: nothing was read or posted
    BAD_INPUT = 3  # results missing, corrupt or incomplete: nothing was posted
    GITHUB_FAILURE = 4  # a GitHub step failed; the message names it
    BROKEN = 5  # ran to the end; a point that ran at base fails at head (and was reported)
    UNTRUSTED = 6  # a workflow run or artifact failed a trust check: nothing was used or posted
    CONFLICT = 7  # the history store holds another result for that commit: nothing was changed
    UNFINISHED = 8  # bisect: stopped at its budget with builds left; the same command resumes
    INCONCLUSIVE = 9  # bisect: no first bad build can be named (said why; the issue says so)
    MEASURE_FAILED = 10  # bisect: a build could not be measured (install, GPU); nothing recorded
    OUTPUT_CLOSED = 141  # stdout was closed early (`| head`); 128 + SIGPIPE, as a shell says


MEANING = {
    ExitCode.OK_NO_REGRESSION: "no regression (no change, improved, unsure, or no data)",
    ExitCode.REGRESSION: "a regression was found (and reported)",
    ExitCode.USAGE: "bad arguments or configuration",
    ExitCode.BAD_INPUT: "results missing, corrupt or incomplete",
    ExitCode.GITHUB_FAILURE: "a GitHub step failed (the message names it)",
    ExitCode.BROKEN: "broken: a point that ran at base fails at head (and was reported)",
    ExitCode.UNTRUSTED: "untrusted: a run or artifact failed a trust check (nothing was used)",
    ExitCode.CONFLICT: "store: another result for that commit is stored (--replace); unchanged",
    ExitCode.UNFINISHED: "bisect: stopped at its budget, builds left; run it again to resume",
    ExitCode.INCONCLUSIVE: "bisect: no first bad build can be named (unsure, another change)",
    ExitCode.MEASURE_FAILED: "bisect: a build could not be measured (install, GPU); resumable",
    ExitCode.OUTPUT_CLOSED: "stdout was closed early (e.g. `| head`); the rest is dropped",
}

HELP = "\n".join(
    ["exit codes:"] + [f"  {code.value:>3}  {code.name:<17} {MEANING[code]}" for code in ExitCode]
)
