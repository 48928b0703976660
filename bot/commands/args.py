"""The command line's shared pieces: each value's check and the options several commands take.

A module of its own so that the grammar of each group of commands (bot/commands/parser.py and
the ``*_parser.py`` beside it) imports from here and nothing imports the grammar back: the
top-level parser calls the sub-parser modules, they call only this (tests/commands hold it).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from bot.commands.git_refs import RefError, Resolved, resolve_commit
from bot.commands.steps import StepFailed
from bot.exitcodes import ExitCode
from bot.results.limits import REPOSITORY

__all__ = [
    "Handler",
    "captures_options",
    "commit",
    "common",
    "config_option",
    "json_option",
    "port",
    "positive",
    "pr_number",
    "repo",
    "sha",
    "two_commits",
]

#: A command's handler: (parsed arguments, environment, stdout) -> exit code.
Handler = Callable[..., int]
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")


def sha(text: str) -> str:
    """A commit hash, full or abbreviated: what a results folder is searched for."""
    if not _HEX.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a commit hash (4-40 hex digits)")
    return text.lower()


def commit(text: str) -> str:
    """A commit hash as :func:`sha`, or a git ref (``main``, ``HEAD~1``, a tag) resolved in
    the current directory's repository, so that a person can name commits as git does.

    A hash is matched against the results as given (a results folder need not come from this
    repository); only a name that is a ref, or not a hash at all, is asked of git.
    """
    try:
        return resolve_commit(text)
    except RefError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def two_commits(command: str, base: str, head: str) -> None:
    """report and pr compare two commits; one commit twice is the caller's mistake (the demo's
    A/A fallback, one recorded run against itself, is the demo's own choice and skips this).
    A hash that abbreviates the other names the same commit, or none the results single out.
    Each ref that git resolved is said on stderr, so that a message about its hash is read."""
    for side, value in (("base", base), ("head", head)):
        if isinstance(value, Resolved):
            print(f"fusion-perfbot {command}: --{side} {value.ref} is {value}", file=sys.stderr)
    if base.startswith(head) or head.startswith(base):
        raise StepFailed(
            "check arguments",
            ExitCode.USAGE,
            f"--base {_given(base)} and --head {_given(head)} are the same commit: nothing to "
            "compare (give two commits; A/A runs of one commit are what `calibrate` measures)",
        )


def _given(value: str) -> str:
    return f"{value.ref} ({value[:12]})" if isinstance(value, Resolved) else value


def repo(text: str) -> str:
    if not REPOSITORY.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/NAME")
    return text


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0-65535)")
    return int(text)


def pr_number(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 10**9:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pull request number")
    return int(text)


def common(p: argparse.ArgumentParser, *, shas: bool = True) -> None:
    """What every verdict flow reads: the results, the two commits, the machine, the
    configuration. ``shas=False``: all optional (the demo picks its own)."""
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        required=shas,
        metavar="DIR",
        help="asv results directory; repeat it for a job's repeats (a folder per repeat, each "
        "with one run of base and one of head): the runs of a side are replicates",
    )
    for side in ("base", "head"):
        p.add_argument(
            f"--{side}",
            type=commit,
            required=shas,
            metavar="REF",
            help=f"{side} commit: a hash (full or abbreviated, as in the results) or a git ref "
            "of the repository in the current directory (main, HEAD~1, a tag)",
        )
    p.add_argument("--machine", help="asv machine name, when several have both commits")
    config_option(p)


def captures_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--captures-base",
        type=Path,
        metavar="DIR",
        help="the base's fusion captures (benchmarks/engine/capture.py's folder: "
        "[<fusion>/]<dtype>_<shape>/<variant>/); default: <results>/<machine>/<commit>.captures "
        "when present. With both sides, the comment and issues say what changed inside each "
        "fusion captured at both",
    )
    p.add_argument(
        "--captures-head", type=Path, metavar="DIR", help="the head's, as --captures-base"
    )


def config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path("perfbot.toml") if Path("perfbot.toml").is_file() else None,
        help="TOML configuration (default: ./perfbot.toml if present; see its comments)",
    )


def json_option(p: argparse.ArgumentParser, what: str, instead: str = "the text") -> None:
    """``--json FILE``: every command that prints a report can write it as JSON instead."""
    p.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help=f"write {what} as JSON to FILE; '-': to stdout, instead of {instead}",
    )
