"""The command line's grammar: every command, option and check of a value, and the help pages.

Apart from the composition root (bot/commands/cli.py) so that the grammar can be read whole;
it knows nothing of what the commands do, only which handler each one gets.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.decide.noise import DEFAULT_MARGIN
from bot.exitcodes import HELP

#: A command's handler: (parsed arguments, environment, stdout) -> exit code.
Handler = Callable[..., int]


def _sha(text: str) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{4,40}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a commit hash (4-40 hex digits)")
    return text.lower()


def _repo(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not OWNER/NAME")
    return text


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0-65535)")
    return int(text)


def _pr(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 10**9:
        raise argparse.ArgumentTypeError(f"{text!r} is not a pull request number")
    return int(text)


def _common(p: argparse.ArgumentParser, *, shas: bool = True) -> None:
    p.add_argument("--results", type=Path, required=shas, help="asv results directory")
    p.add_argument("--base", type=_sha, required=shas, help="base commit (full or abbreviated)")
    p.add_argument("--head", type=_sha, required=shas, help="head commit (full or abbreviated)")
    p.add_argument("--machine", help="asv machine name, when several have both commits")
    _config_option(p)


def _config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path("perfbot.toml") if Path("perfbot.toml").is_file() else None,
        help="TOML configuration (default: ./perfbot.toml if present; see its comments)",
    )


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The whole command line; `handlers` maps each command to the function that runs it."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="fusion-perfbot",
        description="Is thunder.jit still as fast as hand-written nvFuser on RMSNorm backward?",
        epilog=HELP,
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    epilog = HELP + "\n\nenvironment: see perfbot.toml (GITHUB_TOKEN, PERFBOT_ISSUES_TOKEN, ...)"

    def add(name: str, help_text: str, func: Callable[..., int]) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name, help=help_text, description=help_text, epilog=epilog, formatter_class=fmt
        )
        p.set_defaults(func=func)
        return p

    p = add(
        "report",
        "print the PR comment for base vs head; optionally the verdict as JSON",
        handlers["report"],
    )
    _common(p)
    p.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the full verdict as JSON to FILE; '-': to stdout, instead of the comment",
    )

    p = add(
        "pr",
        "post or update the PR comment and sync the linked issues (dry without a token)",
        handlers["pr"],
    )
    _common(p)
    p.add_argument("--repo", type=_repo, required=True, help="OWNER/NAME of the pull request")
    p.add_argument("--pr", type=_pr, required=True, help="pull request number")
    p.add_argument("--pr-title", help="PR title to show (untrusted; escaped)")
    p.add_argument("--head-ref", help="PR branch to show (untrusted; escaped)")
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be posted; post nothing"
    )

    p = add(
        "calibrate",
        "measure A/A false alarms and power by resampling real samples",
        handlers["calibrate"],
    )
    _common(p)
    p.add_argument("--trials", type=int, default=300, help="A/A pairs per state (default 300)")
    p.add_argument("--power-trials", type=int, default=100, help="pairs per shift (default 100)")
    p.add_argument("--mode", choices=("bootstrap", "split"), default="bootstrap")
    p.add_argument("--resamples", type=int, help="bootstrap resamples (default: the config's)")
    p.add_argument(
        "--point-trials",
        type=int,
        default=0,
        help="also measure each point's power alone, with this many pairs per shift (0: skip)",
    )
    p.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the calibration as JSON to FILE; '-': to stdout, instead of the text",
    )

    p = add(
        "noise",
        "run-to-run spread over recorded A/A runs; suggests per-point thresholds",
        handlers["noise"],
    )
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        required=True,
        help="asv results directory (repeat to pool several)",
    )
    p.add_argument(
        "--thunder-variant",
        default="stock",
        help="the runs to pool, by their provenance record's thunder_variant (default: stock)",
    )
    p.add_argument("--machine", help="asv machine name, when several have runs")
    _config_option(p)
    p.add_argument(
        "--margin",
        type=_positive,
        default=DEFAULT_MARGIN,
        help=f"threshold = margin x largest A/A change (default {DEFAULT_MARGIN})",
    )
    p.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the spreads as JSON to FILE; '-': to stdout, instead of the text",
    )

    p = add(
        "demo",
        "the whole flow on the committed H200 data against a local fake GitHub",
        handlers["demo"],
    )
    _common(p, shas=False)
    p.set_defaults(results=None, base=None, head=None)
    p.description = (
        "the whole flow on the recorded H200 data against a local fake GitHub. Without "
        "--results: data/h200/results, else data/h200-smoke/results; without --base/--head: the "
        "stock run against the deliberately slower one (or older against newer, or one run "
        "against itself)"
    )
    p = add(
        "site", "build (or build and serve) the history website; see docs/SITE.md", handlers["site"]
    )
    site_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = site_sub.add_parser(
        "build", help="build the static site into --out", formatter_class=fmt, epilog=epilog
    )
    build.add_argument("--out", type=Path, required=True, help="output folder (replaced whole)")
    build.add_argument(
        "--history",
        choices=("auto", "git", "recorded"),
        default="auto",
        help="where commit order comes from (default: auto)",
    )
    serve = site_sub.add_parser(
        "serve",
        help="build into a temporary folder and serve it",
        formatter_class=fmt,
        epilog=epilog,
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=0, help="0-65535; 0: any free port")
    for sp in (build, serve):
        sp.add_argument("--results", type=Path, required=True, help="asv results directory")
        sp.add_argument(
            "--asv-conf",
            type=Path,
            default=Path("asv.conf.json"),
            help="asv configuration (default: ./asv.conf.json)",
        )
    return parser
