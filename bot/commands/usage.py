"""Which exit codes each command can return, and one command line that shows it in use.

Written once, as a table, because the help pages are built from it: the top-level ``--help``
lists every code once (bot/exitcodes.py), each command's page lists only the codes that command
can return, so that a CI author branching on ``$?`` reads the cases that can happen, and one
example to copy. tests/commands/test_grammar.py holds every page to this table.

A code belongs to a command when some path of the command returns it: its own outcomes, a step
that fails with it (bot/commands/steps.py: configuration USAGE, results BAD_INPUT, a GitHub
call GITHUB_FAILURE where the command talks to GitHub); every command can get a usage error
from its arguments and OUTPUT_CLOSED when its reader leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.exitcodes import MEANING, ExitCode

__all__ = ["USAGES", "CommandUsage", "epilog"]

E = ExitCode
#: What any command can return: bad arguments, and a closed stdout.
ANY = (E.USAGE, E.OUTPUT_CLOSED)
VERDICT = (E.OK_NO_REGRESSION, E.REGRESSION, E.BAD_INPUT, E.BROKEN)
#: Done, or what it read (results, a store) was bad: a command that decides nothing that gates.
READS = (E.OK_NO_REGRESSION, E.BAD_INPUT)
SITE_BUILD = "python -m bot site build --results data/h200/results --out site"


@dataclass(frozen=True)
class CommandUsage:
    """One command's exit codes (besides :data:`ANY`), its example command line, and what
    exit 0 means for it where that is not "no regression"."""

    codes: tuple[ExitCode, ...]
    example: str
    ok: str | None = None

    def all_codes(self) -> tuple[ExitCode, ...]:
        return tuple(sorted(set(self.codes) | set(ANY)))


STORE_ADD = CommandUsage(
    (E.OK_NO_REGRESSION, E.BAD_INPUT, E.CONFLICT),
    'python -m bot store add --store store --results results --commit "$SHA" --machine nvidia-h200',
    "added (or nothing to do: the same run again)",
)

USAGES: Mapping[str, CommandUsage] = {
    "report": CommandUsage(
        VERDICT,
        "python -m bot report --results data/h200/results --base 06f650c8 --head 9dc51696",
    ),
    "pr": CommandUsage(
        (*VERDICT, E.GITHUB_FAILURE, E.UNTRUSTED),
        "python -m bot pr --results results/rep-1 --results results/rep-2 --base main \\\n"
        "      --head HEAD --repo Lightning-AI/lightning-thunder --pr 123 --dry-run",
    ),
    "verify-run": CommandUsage(
        (E.OK_NO_REGRESSION, E.GITHUB_FAILURE, E.UNTRUSTED),
        'python -m bot verify-run --repo "$GITHUB_REPOSITORY" --run-id "$RUN_ID" --pr 123 \\\n'
        '      --head-sha "$HEAD_SHA"',
        "the run passed every check",
    ),
    "fetch-artifact": CommandUsage(
        (E.OK_NO_REGRESSION, E.GITHUB_FAILURE, E.UNTRUSTED),
        'python -m bot fetch-artifact --repo "$GITHUB_REPOSITORY" --run-id "$RUN_ID" '
        "--dest artifacts",
        "every artifact passed its limits and was unpacked",
    ),
    "history": CommandUsage(
        (*VERDICT, E.GITHUB_FAILURE),
        "python -m bot history --results data/h200-thunder-nightlies/results --dry-run",
    ),
    "history-calibrate": CommandUsage(
        READS,
        "python -m bot history-calibrate --results data/h200/results \\\n"
        "      --results data/h200-states/results --nightlies data/h200-thunder-nightlies/results",
        "done: the calibration is printed",
    ),
    "bisect": CommandUsage(
        (
            E.OK_NO_REGRESSION,
            E.BAD_INPUT,
            E.GITHUB_FAILURE,
            E.UNFINISHED,
            E.INCONCLUSIVE,
            E.MEASURE_FAILED,
        ),
        "python -m bot bisect --package thunder --good lightning-thunder==0.2.7.dev20251102 \\\n"
        "      --bad lightning-thunder==0.2.7.dev20260201 --from-index \\\n"
        "      --from-report verdict.json --state bisect/state.json --budget-s 540 --json -",
        "the first bad build was named",
    ),
    "bisect-plan": CommandUsage(
        (E.OK_NO_REGRESSION, E.BAD_INPUT, E.GITHUB_FAILURE),
        "python -m bot bisect-plan --history-json history.json --out plan.json \\\n"
        "      --budget-s 9000",
        "a plan was written (or none: the file says no alert can be bisected)",
    ),
    "store": replace(STORE_ADD, ok="done (or nothing to do: the same run again)"),
    "store init": CommandUsage(
        (E.OK_NO_REGRESSION,), "python -m bot store init --store store", "the store was made"
    ),
    "store add": STORE_ADD,
    "store thin": CommandUsage(
        READS,
        "python -m bot store thin --store store --history-json history.json --dry-run",
        "thinned (or, with --dry-run, what would be)",
    ),
    "store pin": CommandUsage(
        READS,
        'python -m bot store pin --store store --commit "$SHA" --reason "a change point"',
        "pinned",
    ),
    "store check": CommandUsage(
        READS,
        "python -m bot store check --store store",
        "every stored run reads and the index matches the files",
    ),
    "store list": CommandUsage(
        READS,
        "python -m bot store list --store store --json -",
        "listed",
    ),
    "store estimate": CommandUsage(
        READS,
        "python -m bot store estimate --results data/h200-nightly/results --commit 4e57021e "
        "--machine nvidia-h200",
        "estimated",
    ),
    "calibrate": CommandUsage(
        READS,
        "python -m bot calibrate --results data/h200/results --results data/h200-states/results",
        "done: the calibration is printed",
    ),
    "noise": CommandUsage(
        READS,
        "python -m bot noise --results data/h200/results --results data/h200-states/results \\\n"
        "      --write-model noise/nvidia-h200.json",
        "done: the model is printed (and written)",
    ),
    "demo": CommandUsage(
        (E.OK_NO_REGRESSION, E.BAD_INPUT, E.GITHUB_FAILURE),
        "python -m bot demo --save demo-out",
        "the demo ran (it prints the code CI would have got)",
    ),
    "site": CommandUsage(READS, SITE_BUILD, "built (serve: stopped)"),
    "site build": CommandUsage(READS, SITE_BUILD, "built"),
    "site serve": CommandUsage(
        READS, "python -m bot site serve --results data/h200/results --port 8000", "stopped"
    ),
}

ENVIRONMENT = "environment: see perfbot.toml (GITHUB_TOKEN, PERFBOT_ISSUES_TOKEN, ...)"


def code_lines(codes: tuple[ExitCode, ...], ok: str | None = None) -> list[str]:
    """One line a code, as the top-level page and each command's page print them."""
    meaning = {**MEANING, **({E.OK_NO_REGRESSION: ok} if ok else {})}
    return [f"  {c.value:>3}  {c.name:<17} {meaning[c]}" for c in codes]


def epilog(command: str) -> str:
    """A command's help footer: its example, its exit codes, where its environment is."""
    usage = USAGES[command]
    return "\n".join(
        [
            "example:",
            f"  {usage.example}",
            "",
            "exit codes (all of them: python -m bot --help):",
            *code_lines(usage.all_codes(), usage.ok),
            "",
            ENVIRONMENT,
        ]
    )
