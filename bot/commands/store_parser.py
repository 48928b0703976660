"""The grammar of ``store`` (docs/STORE.md): its actions, their options and each value's shape.

Beside bot/commands/store.py (the steps), as bot/commands/trust_parser.py is beside the
poster's commands, so that each file reads whole; the defaults here are the policy's
(bot/store/policy.py) and the nightly's (.github/workflows/nightly.yml passes none).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from pathlib import Path

from bot.commands.args import Handler, sha
from bot.commands.usage import epilog
from bot.store.index import PINS
from bot.store.policy import MB, Policy


def _full_sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a full commit hash (40 hex digits)")
    return text.lower()


def _when(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO date") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of days")
    return int(text)


def _commits_kept(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of commits (at least 1)")
    return int(text)


def _megabytes(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < 10**6:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size in MB")
    return value


def _policy_options(q: argparse.ArgumentParser) -> None:
    """The retention policy's knobs, for ``thin`` and ``estimate``; defaults are Policy()'s."""
    policy = Policy()
    q.add_argument("--full-days", type=_count, default=policy.full_days)
    q.add_argument("--daily-days", type=_count, default=policy.daily_days)
    q.add_argument("--weekly-days", type=_count, default=policy.weekly_days)
    q.add_argument("--cap-mb", type=_megabytes, default=policy.cap_bytes / MB)


def add_store_command(
    add: Callable[[str, str, Handler], argparse.ArgumentParser], handlers: Mapping[str, Handler]
) -> None:
    p = add(
        "store",
        "the history store: add, thin, pin, check, list, estimate (docs/STORE.md)",
        handlers["store"],
    )
    sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, text: str, store: bool = True) -> argparse.ArgumentParser:
        q = sub.add_parser(
            name,
            help=text,
            description=text,
            epilog=epilog(f"store {name}"),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if store:
            q.add_argument(
                "--store",
                type=Path,
                required=True,
                help="the store's folder (its branch's work tree)",
            )
        return q

    q = action("init", "make an empty store (a git repository on branch perf-results)")
    q.add_argument("--branch", default="perf-results")
    q = action("add", "add one run (validated; the same run twice changes nothing)")
    q.add_argument("--results", type=Path, required=True, help="asv results folder holding it")
    q.add_argument("--commit", type=sha, required=True)
    q.add_argument("--machine", required=True, help="asv machine name")
    q.add_argument(
        "--replace",
        action="store_true",
        help="replace a different stored (or retired) result of this commit",
    )
    q.add_argument("--min-samples", type=int, default=10, metavar="N")
    q = action("thin", "strip and retire old runs by the policy; pinned commits stay whole")
    q.add_argument(
        "--pins",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help=f"more pinned commits, a line each (the store's own {PINS} always counts)",
    )
    q.add_argument("--pin", type=_full_sha, action="append", default=[], metavar="SHA")
    q.add_argument(
        "--history-json",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="`history --json` output: its change points' and breaks' commits are "
        f"pinned for good (added to {PINS})",
    )
    q.add_argument("--now", type=_when, help="the date ages count from (default: the newest run's)")
    _policy_options(q)
    q.add_argument(
        "--keep-history",
        type=_commits_kept,
        default=30,
        metavar="N",
        help="commits the branch keeps (older ones are squashed away; default 30)",
    )
    q.add_argument("--dry-run", action="store_true", help="say what would happen; change nothing")
    q = action("pin", f"pin a commit (written to the store's {PINS})")
    q.add_argument("--commit", type=_full_sha, required=True)
    q.add_argument("--reason", required=True, help="why (a change point, an issue)")
    action("check", "read every stored run with the bot's readers; the index must match the files")
    q = action("list", "the stored and retired runs")
    q.add_argument("--json", type=Path, metavar="FILE", help="as JSON to FILE; '-': stdout")
    q = action("estimate", "the store's size after a simulated year, from a real run", False)
    q.add_argument("--results", type=Path, required=True)
    q.add_argument("--commit", type=sha, required=True)
    q.add_argument("--machine")
    q.add_argument("--size-set", default="nightly")
    q.add_argument("--size-sets", type=Path, default=Path("benchmarks/size_sets.toml"))
    q.add_argument("--days", type=_count, default=365)
    _policy_options(q)
