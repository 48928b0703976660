"""Command line: ``fusion-perfbot`` / ``python -m bot``. The composition root.

This is the one place that knows argparse, reads the inputs every verdict flow shares, wires
them into the commands (one module each in bot/commands/) and turns a failed step into its
exit code. Every command is a short list of named steps (bot/commands/steps.py); any failure
leaves as one line naming the step, with the exit code of its class (bot/exitcodes.py), and
nothing half-done behind it: the JSON file is written whole or not at all, the comment is
posted only once everything is rendered.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TextIO, cast

from bot.commands.calibrate import run_calibrate
from bot.commands.demo import run_demo
from bot.commands.inputs import Loaded, Selection
from bot.commands.noise import run_noise
from bot.commands.pr import run_pr
from bot.commands.report import run_report
from bot.commands.site import run_site_build, run_site_serve
from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.decide.config_check import check_gating, unused_thresholds
from bot.decide.noise import DEFAULT_MARGIN
from bot.decide.verdict import decide
from bot.exitcodes import HELP, ExitCode
from bot.results.locate import load_pair
from bot.tell.log import LogSafeWriter


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


def load(sel: Selection, env: Mapping[str, str]) -> Loaded:
    """Configuration, results and verdict, each its own step: a failure names which one.

    Here rather than in a flow, so that report, pr and the demo all read their inputs the same
    way; the demo is handed this function, as it can only load once its fake GitHub is up.
    """
    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, sel.config)
    with step("read results", ExitCode.BAD_INPUT):
        machine = sel.machine or config.machine
        s = config.verdict
        base, head = load_pair(sel.results, sel.base, sel.head, machine, s.min_samples)
    with step("check configuration against the results", ExitCode.USAGE):
        check_gating(s, (base, head))
        warnings = unused_thresholds(s, (base, head))
        for warning in warnings:
            print(f"fusion-perfbot: warning: {warning}", file=sys.stderr)
    with step("compute verdict", ExitCode.BAD_INPUT):
        verdict = decide(base, head, config.verdict)
        verdict = replace(verdict, notes=(*verdict.notes, *warnings))
    return Loaded(config, base, head, verdict)


def _selection(args: argparse.Namespace) -> Selection:
    return Selection(args.results, args.base, args.head, args.machine, args.config)


def cmd_report(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_report(load(_selection(args), env), out, json_path=args.json)


def cmd_pr(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_pr(
        load(_selection(args), env),
        out,
        repo=args.repo,
        pr=args.pr,
        pr_title=args.pr_title,
        head_ref=args.head_ref,
        dry_run=args.dry_run,
    )


def cmd_calibrate(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_calibrate(
        _selection(args),
        env,
        out,
        trials=args.trials,
        power_trials=args.power_trials,
        mode=args.mode,
        resamples=args.resamples,
        json_path=args.json,
        point_trials=args.point_trials,
    )


def cmd_noise(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_noise(
        args.results,
        env,
        out,
        thunder_variant=args.thunder_variant,
        machine=args.machine,
        config_path=args.config,
        margin=args.margin,
        json_path=args.json,
    )


def cmd_demo(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    return run_demo(
        env,
        out,
        load,
        results=args.results,
        base=args.base,
        head=args.head,
        machine=args.machine,
        config_path=args.config,
    )


def cmd_site(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    if args.action == "build":
        return run_site_build(
            out,
            results=args.results,
            site_out=args.out,
            asv_conf=args.asv_conf,
            history=args.history,
        )
    return run_site_serve(
        results=args.results, asv_conf=args.asv_conf, host=args.host, port=args.port
    )


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


def build_parser() -> argparse.ArgumentParser:
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
        cmd_report,
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
        cmd_pr,
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
        "calibrate", "measure A/A false alarms and power by resampling real samples", cmd_calibrate
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
        cmd_noise,
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
        "demo", "the whole flow on the committed H200 data against a local fake GitHub", cmd_demo
    )
    _common(p, shas=False)
    p.set_defaults(results=None, base=None, head=None)
    p.description = (
        "the whole flow on the recorded H200 data against a local fake GitHub. Without "
        "--results: data/h200/results, else data/h200-smoke/results; without --base/--head: the "
        "stock run against the deliberately slower one (or older against newer, or one run "
        "against itself)"
    )
    p = add("site", "build (or build and serve) the history website; see docs/SITE.md", cmd_site)
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


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Run one command; every line it prints goes through the log escaper (bot/tell/log.py).

    stdout and stderr are replaced for the duration of the command, so that what any module
    prints (argparse's messages included) reaches a CI log only as text, never as a workflow
    command; they are restored on the way out.
    """
    saved = sys.stdout, sys.stderr
    out, err = cast(TextIO, LogSafeWriter(saved[0])), cast(TextIO, LogSafeWriter(saved[1]))
    sys.stdout, sys.stderr = out, err
    try:
        try:
            return _run(build_parser(), argv, os.environ if env is None else env, out, err)
        finally:
            out.flush()
            err.flush()
    except BrokenPipeError:  # `fusion-perfbot demo | head`: the reader left; no traceback
        _drop_output(saved[0])
        return ExitCode.OUTPUT_CLOSED
    finally:
        sys.stdout, sys.stderr = saved


def _run(
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    env: Mapping[str, str],
    out: IO[str],
    err: IO[str],
) -> int:
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2, message already printed)
        return int(exc.code or 0)
    try:
        return int(args.func(args, env, out))
    except StepFailed as failure:
        err.write(f"fusion-perfbot {args.command}: {failure}\n")
        return int(failure.code)


def _drop_output(stream: IO[str]) -> None:
    """Point the closed stdout at /dev/null, so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to quiet
        pass
