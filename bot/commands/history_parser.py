"""The grammar of ``history`` (the main-branch watch) and ``history-calibrate`` (its false
alarms and power on the recorded runs); docs/HISTORY.md.

Beside bot/commands/parser.py (which calls it; the shared pieces are bot/commands/args.py) so
that each file stays readable whole.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.commands.args import Handler, config_option, json_option, repo
from bot.history.method import Method

DEFAULTS = Method()
DESCRIPTION = textwrap.fill(
    "The main-branch watch: read every commit's results in commit order (the commit date asv "
    "stores, ties by hash; --order FILE for another), find where the four guards changed "
    "(broken, the Thunder/nvFuser ratio, nvFuser's kernel time, Thunder's kernel time), and "
    "open, update or close the linked issues of confirmed regressions and breaks (dry without "
    "GITHUB_TOKEN or PERFBOT_ISSUES_TOKEN). At each split, at most --window commits a side are "
    "compared with the PR mode's rules at alpha over the number of windows tested; a change is "
    f"confirmed once --min-after commits follow it (default {DEFAULTS.min_after}), pending "
    "before, and never filed while pending. Method and its measured false alarms: "
    "docs/HISTORY.md.",
    width=92,
)


def _count(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from 1 to 1000")
    return int(text)


def add_history_commands(
    add: Callable[[str, str, Callable[..., int]], argparse.ArgumentParser],
    handlers: Mapping[str, Handler],
) -> None:
    p = add(
        "history",
        "the main-branch watch: change points along a history of results; linked issues",
        handlers["history"],
    )
    p.description = DESCRIPTION
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        required=True,
        metavar="DIR",
        help="asv results directory (a history store, a job's repeats, ...); repeat to read "
        "several as one history; the same run in two folders counts once",
    )
    p.add_argument("--machine", help="asv machine name (default: every machine, each on its own)")
    p.add_argument(
        "--order",
        type=Path,
        metavar="FILE",
        help="commit order, oldest first, one hash a line (`git rev-list --reverse main`); "
        "commits with results that it does not list are left out",
    )
    config_option(p)
    p.add_argument(
        "--repo",
        type=repo,
        help="OWNER/NAME whose main branch this is: the issues link its commits",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be filed; touch nothing"
    )
    _method_options(p)
    p.add_argument(
        "--power",
        action="store_true",
        help="also search, per fusion, the smallest step this history could have caught: "
        "Thunder made slower from each split on, over these runs (a made step, said so)",
    )
    json_option(p, "the history")

    p = add(
        "history-calibrate",
        "measure history's false alarms (real A/A orders) and power (real slower states spliced "
        "in) on recorded runs",
        handlers["history-calibrate"],
    )
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        required=True,
        metavar="DIR",
        help="asv results directory (repeat to pool several): its stock runs are the A/A runs "
        "`noise` pools; its slower, unfused and broken runs the steps",
    )
    p.add_argument(
        "--states",
        type=Path,
        action="append",
        metavar="DIR",
        help="more folders whose slower or broken runs are used (their stock runs are not A/A "
        "runs here)",
    )
    p.add_argument(
        "--nightlies",
        type=Path,
        metavar="DIR",
        help="a real history of builds that agree (every ordering of it is tried)",
    )
    p.add_argument("--machine", help="asv machine name, when several have runs")
    config_option(p)
    _method_options(p)
    p.add_argument(
        "--jobs",
        type=_count,
        metavar="N",
        help="worker processes (default: the CPUs this process may use); the result is the "
        "same for any N",
    )
    json_option(p, "the calibration")


def _method_options(p: argparse.ArgumentParser) -> None:
    """The change-point method's two knobs, the same for ``history`` and its calibration."""
    for name, default, what in (
        ("--window", DEFAULTS.window, "commits a side at most at each split"),
        ("--min-after", DEFAULTS.min_after, "commits after a change before it is confirmed"),
    ):
        p.add_argument(
            name, type=_count, default=default, metavar="N", help=f"{what} (default {default})"
        )
