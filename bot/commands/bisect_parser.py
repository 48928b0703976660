"""The grammar of ``bisect``: the first bad build of Thunder or nvFuser (docs/BISECT.md).

Beside bot/commands/parser.py (which calls it; the shared pieces are bot/commands/args.py) so
that each file stays readable whole. Which inputs belong together (builds, points, the state
file) is checked by the command, since ``--list-builds`` needs only the builds.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path

from bot.commands.args import Handler, config_option, pr_number, repo

DESCRIPTION = """\
Find the first bad build of a dependency (Thunder or nvFuser) between a known-good and a
known-bad build: each build is measured at the regressed points only and decided against the
known-good build by the bot's own verdict (bad: it raises a guard the known-bad build raises;
good: nothing moved; unsure: measured again, --remeasure times at most). The two ends are
measured first, then midpoints, assuming one step: a timeline of n builds needs at most
2 + ceil(log2(n - 1)) measurements. Every run is recorded in --state at once: a call that
stops (--budget-s, --max-measurements, a GPU call's time limit) is resumed by running the
same command again, and no build is measured twice. With --repo and --issue (or --issue-key),
the linked issue gets one "bisect" comment, updated in place on every run. Exit 0: the first
bad build was named; 8, 9 and 10 are the bisect's own (below); docs/BISECT.md."""


def _count(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 100")
    return int(text)


def _runs(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 10:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 0 to 10")
    return int(text)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 10**7:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    return value


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def add_bisect_command(
    add: Callable[[str, str, Handler], argparse.ArgumentParser], handlers: Mapping[str, Handler]
) -> None:
    p = add(
        "bisect",
        "find the first bad build of Thunder or nvFuser between a good and a bad one",
        handlers["bisect"],
    )
    p.description = DESCRIPTION
    p.add_argument(
        "--plan",
        type=Path,
        metavar="FILE",
        help="a `bisect-plan` file: its package, builds, points, budget and alert (instead of "
        "--package, --good, --bad, the builds and the points)",
    )
    p.add_argument("--package", choices=("thunder", "nvfuser"))
    p.add_argument("--good", metavar="SPEC", help="the known-good build")
    p.add_argument("--bad", metavar="SPEC", help="the known-bad build")
    which = p.add_argument_group("the builds between them (one of)")
    which.add_argument("--builds", type=Path, metavar="FILE", help="one spec a line, in order")
    which.add_argument(
        "--from-index",
        action="store_true",
        help="ask the package index (pip index versions --pre, this runner's pip configuration): "
        "every version between --good and --bad (NAME==VERSION specs)",
    )
    which.add_argument(
        "--index-answer",
        type=Path,
        metavar="FILE",
        help="a saved answer of the index instead: pip index versions' output or PyPI's JSON "
        "(https://pypi.org/pypi/NAME/json)",
    )
    which.add_argument(
        "--since", type=_day, metavar="DAY", help="index: only builds dated from DAY on"
    )
    which.add_argument(
        "--until", type=_day, metavar="DAY", help="index: only builds dated up to DAY"
    )
    which.add_argument(
        "--nightlies-only", action="store_true", help="index: leave out releases (no dev date)"
    )
    which.add_argument(
        "--list-builds",
        action="store_true",
        help="print the timeline (one spec a line, what --builds reads) and stop",
    )
    what = p.add_argument_group("what is measured")
    what.add_argument(
        "--points",
        metavar="LIST",
        help="dtype/MxN keys, comma separated; fusion/dtype/MxN for a fusion of the catalog "
        "other than RMSNorm backward (a bisect measures one fusion)",
    )
    what.add_argument(
        "--from-report",
        type=Path,
        metavar="FILE",
        help="the regressed and broken points of a `report --json` output (of one fusion)",
    )
    what.add_argument(
        "--variants",
        default="thunder-prims,thunder-func",
        metavar="LIST",
        help="variants measured and decided (nvfuser always; default: thunder-prims,thunder-func)",
    )
    how = p.add_argument_group("how it is measured")
    how.add_argument("--state", type=Path, metavar="FILE", help="the bisect's state (JSON)")
    how.add_argument(
        "--work",
        type=Path,
        metavar="DIR",
        help="where each measurement's results go, under the state's folder "
        "(default: STATE.runs beside it)",
    )
    how.add_argument(
        "--recorded",
        type=Path,
        metavar="FILE",
        help="measure by copying recorded runs (tests/bisect/recorded/*.json) instead of the GPU",
    )
    how.add_argument("--size-set", default="pr", choices=("smoke", "pr", "nightly"))
    how.add_argument("--machine", help="asv machine name (default: from the GPU's name)")
    how.add_argument("--pip-arg", action="append", default=[], metavar="ARG")
    how.add_argument(
        "--remeasure",
        type=_runs,
        default=2,
        metavar="N",
        help="times an unsure build is measured again before the bisect stops (default 2)",
    )
    how.add_argument("--max-measurements", type=_count, metavar="N", help="in this call")
    how.add_argument(
        "--budget-s",
        type=_seconds,
        metavar="S",
        help="in this call: start no measurement that may end past S seconds (the longest so "
        "far is the estimate); then it exits UNFINISHED (8): run it again to resume",
    )
    out = p.add_argument_group("where the answer goes")
    out.add_argument("--json", type=Path, metavar="FILE", help="'-': to stdout, instead of text")
    out.add_argument("--repo", type=repo, help="OWNER/NAME of the linked issue")
    out.add_argument("--issue", type=pr_number, help="the linked issue's number")
    out.add_argument("--issue-key", metavar="KEY", help="or the key the bot filed it under")
    out.add_argument("--dry-run", action="store_true", help="print the issue section; post none")
    out.add_argument(
        "--post",
        action="store_true",
        help="with --plan: write the answer into the plan's alert issue (its repo and key)",
    )
    out.add_argument(
        "--post-only",
        action="store_true",
        help="measure nothing: answer from the state file alone (the poster, with no GPU)",
    )
    config_option(p)
