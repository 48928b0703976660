"""The command line's grammar: every command, option and check of a value, and the help pages.

Apart from the composition root (bot/commands/cli.py) so that the grammar can be read whole;
it knows nothing of what the commands do, only which handler each one gets. The checks and
options several commands share are bot/commands/args.py, which the ``*_parser.py`` modules
beside this one import too (never this module: it calls them); each page's exit codes and
example come from the table in bot/commands/usage.py.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from pathlib import Path

from bot.commands.args import (
    Handler,
    captures_options,
    common,
    config_option,
    json_option,
    port,
    pr_number,
    repo,
)
from bot.commands.usage import epilog
from bot.exitcodes import HELP

#: What ``report`` prints: text for a person, the comment's markdown, or the verdict's JSON.
FORMATS = ("text", "markdown", "json")
TOP_EPILOG = (
    f"{HELP}\n\n"
    "Each command's --help gives its options, the exit codes it can return and an example.\n"
    "Try: python -m bot report --results data/h200/results --base 06f650c8 --head 9dc51696\n"
    "     python -m bot demo   (the whole flow against a local fake GitHub)"
)


def build_parser(handlers: Mapping[str, Handler]) -> argparse.ArgumentParser:
    """The whole command line; `handlers` maps each command to the function that runs it."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="fusion-perfbot",
        description="Is thunder.jit still as fast as hand-written nvFuser on RMSNorm backward?",
        epilog=TOP_EPILOG,
        formatter_class=fmt,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, help_text: str, func: Callable[..., int]) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name, help=help_text, description=help_text, epilog=epilog(name), formatter_class=fmt
        )
        p.set_defaults(func=func)
        return p

    p = add(
        "report",
        "print the PR comment for base vs head: as text, markdown or the verdict's JSON",
        handlers["report"],
    )
    common(p)
    captures_options(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="text (plain, for a terminal), markdown (the PR comment) or json (the verdict, "
        "as --json -); default: text when stdout is a terminal, else markdown",
    )
    json_option(p, "the full verdict", "the comment")
    p.add_argument(
        "--full",
        action="store_true",
        help="every point of every guard and the context variants (eager, torch.compile), "
        "however long; the PR comment shows the few that moved most",
    )

    p = add(
        "pr",
        "post or update the PR comment and sync the linked issues (dry without a token)",
        handlers["pr"],
    )
    common(p)
    captures_options(p)
    p.add_argument("--repo", type=repo, required=True, help="OWNER/NAME of the pull request")
    p.add_argument("--pr", type=pr_number, required=True, help="pull request number")
    p.add_argument(
        "--caller-config",
        type=Path,
        metavar="FILE",
        help="the calling repository's perfbot.toml (post-results.yml's config-path, read from "
        "its default branch): merged over --config; what a caller may not set is refused "
        "(exit 2, bot/config_caller.py CALLER_REFUSED)",
    )
    p.add_argument("--pr-title", help="PR title to show (untrusted; escaped)")
    p.add_argument("--head-ref", help="PR branch to show (untrusted; escaped)")
    p.add_argument(
        "--dry-run", action="store_true", help="print what would be posted; post nothing"
    )
    p.add_argument(
        "--pr-state",
        choices=("open", "merged", "closed"),
        default="open",
        help="the PR's state for a dry run (with a token, GitHub's answer is used instead)",
    )

    from bot.commands.trust_parser import add_trust_commands  # beside: this file's size

    add_trust_commands(add, handlers)

    from bot.commands.history_parser import add_history_commands  # docs/HISTORY.md

    add_history_commands(add, handlers)

    from bot.commands.bisect_parser import add_bisect_command  # docs/BISECT.md

    add_bisect_command(add, handlers)

    from bot.commands.bisect_plan import add_bisect_plan_command

    add_bisect_plan_command(add, handlers)

    from bot.commands.store import add_store_command  # the history store (docs/STORE.md)

    add_store_command(add, handlers)

    p = add(
        "calibrate",
        "measure the verdict's A/A false alarms and power out of sample, on recorded A/A runs",
        handlers["calibrate"],
    )
    p.add_argument(
        "--results",
        type=Path,
        action="append",
        required=True,
        metavar="DIR",
        help="asv results directory (repeat to pool several); the A/A runs are those `noise` "
        "pools, at least 4",
    )
    p.add_argument(
        "--thunder-variant",
        default="stock",
        help="the runs to use, by their provenance record's thunder_variant (default: stock)",
    )
    p.add_argument("--machine", help="asv machine name, when several have runs")
    config_option(p)
    p.add_argument(
        "--runs-a-side",
        type=int,
        default=2,
        metavar="N",
        help="report 1 to N runs a side, each size the runs allow (2k + 2 runs for k a side; "
        "default 2)",
    )
    p.add_argument(
        "--trials",
        type=int,
        default=9,
        metavar="N",
        help="bootstrap copies of every choice of runs, besides the recorded runs (default 9: "
        "300 trials from 30 choices)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes (default: the CPUs this process may use); the result is the "
        "same for any N",
    )
    p.add_argument(
        "--mark-model",
        type=Path,
        metavar="FILE",
        help="write into this noise model (of the same machine) which fusions fall short of "
        "their own calibration (its `provisional`): their moves are then shown, not gated on",
    )
    json_option(p, "the calibration")

    p = add(
        "noise",
        "fit the between-run noise model on recorded A/A runs (runs of the same code)",
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
    config_option(p)
    p.add_argument(
        "--write-model",
        type=Path,
        metavar="FILE",
        help="write the model as JSON to FILE, for perfbot.toml's [verdict] noise_model",
    )
    p.add_argument(
        "--extend",
        type=Path,
        metavar="MODEL",
        help="keep every entry of the model in MODEL and add what these runs fit that it "
        "lacks (a fusion new to the catalog): written with --write-model",
    )
    json_option(p, "the model")

    p = add(
        "demo",
        "the whole flow on the committed H200 data against a local fake GitHub",
        handlers["demo"],
    )
    common(p, shas=False)
    captures_options(p)
    p.set_defaults(results=None, base=None, head=None)
    p.add_argument(
        "--life",
        action="store_true",
        help="a PR's life step by step instead (push, re-run, rebase, acknowledgements, a "
        "clearly worse push, merge, a maintainer's close; a second PR closed unmerged) on "
        "data/h200-states, printing what each step posted and the status it set",
    )
    p.add_argument(
        "--save",
        type=Path,
        metavar="DIR",
        help="also write what landed on the fake GitHub into DIR: comment.md, one "
        "issue-OWNER-NAME-N.md a filed issue, and posted.json (titles, states, lengths)",
    )
    p.description = (
        "the whole flow on the recorded H200 data against a local fake GitHub, as a PR lives: "
        "once while it is open, once after it is merged. Without --results: data/h200/results, "
        "else data/h200-smoke/results; without --base/--head: the stock run against the "
        "deliberately slower one (or older against newer, or one run against itself)"
    )
    p = add(
        "site", "build (or build and serve) the history website; see docs/SITE.md", handlers["site"]
    )
    site_sub = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = site_sub.add_parser(
        "build",
        help="build the static site into --out",
        formatter_class=fmt,
        epilog=epilog("site build"),
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
        epilog=epilog("site serve"),
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=port, default=0, help="0-65535; 0: any free port")
    for sp in (build, serve):
        sp.add_argument(
            "--results",
            type=Path,
            action="append",
            required=True,
            help="asv results directory; repeat to publish several as one history (the same "
            "commit on a machine twice with different results is refused)",
        )
        sp.add_argument(
            "--history-json",
            type=Path,
            default=None,
            help="the main-branch watch's `history --json` output: its changes lead the landing "
            "view, with links to their commits and issues",
        )
        config_option(sp)
        sp.add_argument(
            "--asv-conf",
            type=Path,
            default=Path("asv.conf.json"),
            help="asv configuration (default: ./asv.conf.json)",
        )
    return parser
