"""The ``bisect-plan`` command: the watch's follow-up of a confirmed break (docs/BISECT.md).

Steps, each with its own exit code: the configuration; the history (``history --json``); the
alert to follow (bot/bisect/watch_plan.py); the builds between its two ends: for Thunder the
upstream commits GitHub lists between them (read-only), installed from ``git+URL@<commit>``;
for nvFuser its daily wheels on the package index; the plan file, which ``bisect --plan``
runs on the GPU runner and the poster runs again to write the answer into the alert's issue.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.exitcodes import ExitCode

if TYPE_CHECKING:  # the bisect's modules load only when the command runs
    from bot.bisect.upstream import UpstreamCommit
    from bot.bisect.watch_plan import Target

SCHEMA = "perfbot-bisect-plan/1"


class _NoRange(Exception):
    """No builds between the alert's two ends can be listed: the next alert is tried."""


def _commits(
    config: Config, target: Target, git_url: str | None
) -> tuple[list[str], list[UpstreamCommit]]:
    """The builds between the ends, and the upstream commits they are (Thunder's)."""
    from benchmarks.under_test.spec import parse_spec
    from bot.bisect.upstream import Window, commit_spec, window_of

    good, bad = (parse_spec(s, target.package) for s in (target.good, target.bad))
    window = window_of(target.package, good, bad)
    if not isinstance(window, Window):
        raise _NoRange(window)
    token = config.comment_token or config.issues_token
    if token is None:
        raise StepFailed(
            "find the commits between the builds",
            ExitCode.USAGE,
            f"listing {window.words} needs a GitHub token (GITHUB_TOKEN, read-only is enough)",
        )
    from bot.bisect.upstream_github import commits_between
    from bot.github.client import github_for

    with step("find the commits between the builds", ExitCode.GITHUB_FAILURE):
        commits = commits_between(github_for(config, token.reveal()), window)
    # A git build's own commit is its end of the range, not a build between.
    inner = [c for c in commits if c.sha not in (good.commit, bad.commit)]
    return [commit_spec(c, git_url) for c in inner], inner


def _nightlies(args: argparse.Namespace, target: Target) -> list[str]:
    from benchmarks.under_test.spec import parse_spec
    from bot.bisect import index

    good, bad = (parse_spec(s, target.package) for s in (target.good, target.bad))
    if good.kind != "requirement" or bad.kind != "requirement":
        raise _NoRange(f"{good.shown()} and {bad.shown()}: the index lists NAME==VERSION only")
    assert good.distribution and good.version and bad.version
    if args.index_answer is not None:
        answer = args.index_answer.read_text(encoding="utf-8")[: index.MAX_ANSWER_BYTES]
    else:
        answer = index.ask_pip(good.distribution, [])
    versions = index.between(
        index.read_answer(answer), good.version, bad.version, nightlies_only=True
    )
    return [f"{good.distribution}=={v}" for v in versions if v not in (good.version, bad.version)]


def _by_hand(args: argparse.Namespace) -> tuple[tuple[Target, ...], tuple[str, ...]]:
    """A pair named on the command line (no alert: its answer goes on no issue)."""
    from bot.bisect.points import parse_points
    from bot.bisect.watch_plan import Target

    if not (args.package and args.good and args.bad and args.points):
        raise StepFailed(
            "check arguments",
            ExitCode.USAGE,
            "give --history-json, or --package, --good, --bad and --points (a pair by hand)",
        )
    with step("choose the points", ExitCode.USAGE):
        points = parse_points(args.points)
    name = "by hand"
    return (Target(name, None, "", args.package, args.good, args.bad, points, "", ""),), ()


def _fusion_entry(target: Target) -> dict[str, str]:
    """The plan's fusion entry: none for RMSNorm backward, whose plan is as before the
    catalog."""
    from bot.results.types import DEFAULT_FUSION

    return {} if target.fusion == DEFAULT_FUSION else {"fusion": target.fusion}


def run_bisect_plan(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.bisect.watch_plan import read_builds_of, targets
    from bot.fusion.names import on_fusion

    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, args.config)
    found, skipped = _by_hand(args) if args.history_json is None else ((), ())
    if args.history_json is not None:
        with step(f"read {args.history_json}", ExitCode.BAD_INPUT):
            history = json.loads(args.history_json.read_text(encoding="utf-8"))
            if not isinstance(history, dict) or history.get("schema") is None:
                raise ValueError("not the output of `history --json`")
        with step("read --build-of", ExitCode.USAGE):
            builds_of = read_builds_of(args.build_of)
        with step("choose the alert to follow", ExitCode.BAD_INPUT):
            found, skipped = targets(history, builds_of)
    for line in skipped:
        out.write(f"not followed: {line}\n")
    plan: dict[str, Any] = {"schema": SCHEMA, "alert": None, "skipped": list(skipped)}
    for n, target in enumerate(found):
        try:
            if target.package == "thunder":
                builds, commits = _commits(config, target, args.git_url)
            else:
                with step("list the nightlies between the builds", ExitCode.BAD_INPUT):
                    builds, commits = _nightlies(args, target), []  # the index: no commits
        except _NoRange as exc:
            out.write(f"not followed: {target.key}: {exc}\n")
            plan["skipped"].append(f"{target.key}: {exc}")
            continue
        plan.update(
            alert=target.key,
            repo=target.repo,
            machine=target.machine,
            package=target.package,
            **_fusion_entry(target),
            good=target.good,
            bad=target.bad,
            last_good_commit=target.last_good,
            first_bad_commit=target.first_bad,
            points=list(target.points),
            builds=builds,
            commits=[c.to_json() for c in commits],
            budget_s=args.budget_s,
            waiting=[t.key for t in found[n + 1 :]],
        )
        out.write(
            f"bisect {target.package}{on_fusion(target.fusion)} for {target.key}: "
            f"{target.good} .. {target.bad}, "
            f"{len(builds)} build(s) between, at {len(target.points)} point(s); "
            f"budget {args.budget_s:.0f} s of measuring\n"
        )
        break
    else:
        out.write("no standing alert can be bisected: nothing planned\n")
    with step(f"write {args.out}", ExitCode.USAGE):
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")
        tmp.replace(args.out)
    return ExitCode.OK_NO_REGRESSION


def add_bisect_plan_command(add: Any, handlers: Mapping[str, Any]) -> None:
    from bot.commands.bisect_parser import _seconds

    p = add(
        "bisect-plan",
        "plan the bisect of the watch's newest standing break (for `bisect --plan`)",
        handlers["bisect-plan"],
    )
    p.description = (
        "Read `history --json`, pick the newest standing alert whose two ends differ in one "
        "package's build, and write the bisect's plan: Thunder's upstream commits between the "
        "two builds (GitHub, read-only; installed as git+URL@<commit>) or nvFuser's nightly "
        "wheels between them (the package index), the alert's points, its issue key and the "
        "measuring budget across calls. Alerts it cannot follow are named, with why. Exit 0 "
        "with a plan or with none; docs/BISECT.md."
    )
    p.add_argument("--history-json", type=Path, metavar="FILE", help="`history --json`'s output")
    pair = p.add_argument_group("or a pair by hand (its answer goes on no issue)")
    pair.add_argument("--package", choices=("thunder", "nvfuser"))
    pair.add_argument("--good", metavar="SPEC")
    pair.add_argument("--bad", metavar="SPEC")
    pair.add_argument(
        "--points",
        metavar="LIST",
        help="dtype/MxN keys (fusion/dtype/MxN for another fusion: one fusion), comma separated",
    )
    p.add_argument("--out", type=Path, required=True, metavar="FILE", help="the plan (JSON)")
    p.add_argument(
        "--build-of",
        action="append",
        default=[],
        metavar="COMMIT=SPEC",
        help="the build a history commit measured where its provenance does not say it",
    )
    p.add_argument(
        "--git-url",
        metavar="URL",
        help="install the commits from this clone of the repository instead of GitHub's",
    )
    p.add_argument("--index-answer", type=Path, metavar="FILE", help="nvFuser: a saved answer")
    p.add_argument(
        "--budget-s",
        type=_seconds,
        default=9000.0,
        metavar="S",
        help="seconds of GPU measuring the bisect may spend over all its calls (default 9000)",
    )
    from bot.commands.args import config_option

    config_option(p)
