"""The ``bisect`` command: the first bad build of Thunder or nvFuser (docs/BISECT.md).

Steps, each failing with its own exit code: the configuration; the timeline (a builds file
or the package index); the points; the state file; the measurements (the GPU through
benchmarks/under_test, or recorded runs); the answer (text or JSON, and the state file's
report); the issue's bisect section. Every run is in the state file before the next one
starts, and the issue is written only once the answer is whole.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from bot.commands.steps import StepFailed, emit_json, step
from bot.config import Config
from bot.exitcodes import ExitCode

if TYPE_CHECKING:  # the bisect's modules load only when the command runs
    from bot.bisect.driver import Outcome, Plan
    from bot.bisect.measure import Measurer

ROOT = Path(__file__).resolve().parents[2]
STATUS_CODES = {
    "found": ExitCode.OK_NO_REGRESSION,
    "stuck": ExitCode.INCONCLUSIVE,
    "unfinished": ExitCode.UNFINISHED,
}


def _usage(message: str) -> StepFailed:
    return StepFailed("check arguments", ExitCode.USAGE, message)


def _candidates(args: argparse.Namespace) -> list[str]:
    """The builds between good and bad, from the file or the index's answer."""
    from bot.bisect import index
    from bot.bisect.timeline import read_builds

    given = [x for x in (args.builds, args.from_index, args.index_answer) if x]
    if len(given) != 1:
        raise _usage(
            "give the builds between good and bad: --builds, --from-index or --index-answer"
        )
    if args.builds is not None:
        return read_builds(args.builds.read_text(encoding="utf-8"))
    from benchmarks.under_test.spec import parse_spec

    good, bad = (parse_spec(s, args.package) for s in (args.good, args.bad))
    if (
        good.kind != "requirement"
        or bad.kind != "requirement"
        or good.distribution != bad.distribution
    ):
        raise _usage(
            "--from-index and --index-answer need --good and --bad as NAME==VERSION of one name"
        )
    assert good.distribution and good.version and bad.version
    if args.index_answer is not None:
        answer = args.index_answer.read_text(encoding="utf-8")[: index.MAX_ANSWER_BYTES]
    else:
        answer = index.ask_pip(good.distribution, args.pip_arg)
    versions = index.between(
        index.read_answer(answer),
        good.version,
        bad.version,
        since=args.since,
        until=args.until,
        nightlies_only=args.nightlies_only,
    )
    return [f"{good.distribution}=={v}" for v in versions]


def _read_plan(args: argparse.Namespace) -> dict[str, Any] | None:
    """Fill the arguments a plan file holds; None when the plan follows no alert."""
    import json

    from bot.commands.bisect_plan import SCHEMA

    given = [
        n for n in ("package", "good", "bad", "builds", "points", "from_report") if getattr(args, n)
    ]
    if given or args.from_index or args.index_answer:
        raise _usage(
            f"--plan gives the builds and points: leave out --{given[0] if given else 'from-index'}"
        )
    plan = json.loads(args.plan.read_text(encoding="utf-8"))
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} file")
    if plan.get("alert") is None:
        return None
    args.package, args.good, args.bad = plan["package"], plan["good"], plan["bad"]
    args.points = ",".join(plan["points"])
    _check_fusion(plan)
    if args.post:
        if plan.get("repo") is None:
            raise _usage(f"--post: {args.plan} names no alert issue (a pair planned by hand)")
        args.repo, args.issue_key = plan["repo"], plan["alert"]
    return plan


def _check_fusion(plan: Mapping[str, Any]) -> None:
    """A plan names its fusion where it is not RMSNorm backward: its points must be of it."""
    from bot.bisect.points import one_fusion, parse_points
    from bot.results.types import DEFAULT_FUSION

    named = plan.get("fusion", DEFAULT_FUSION)
    if (of := one_fusion(parse_points(",".join(plan["points"])))) != named:
        raise ValueError(f"the plan names the fusion {named!r} and points of {of}")


def run_bisect_command(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.bisect.driver import Plan, run_bisect
    from bot.bisect.points import parse_points, parse_variants, read_report_points
    from bot.bisect.render import to_json
    from bot.bisect.state import State, read_state, write_state
    from bot.bisect.timeline import make_timeline
    from bot.bisect.words import to_text

    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, args.config)
    planned = None
    if args.plan is not None:
        with step(f"read the plan {args.plan}", ExitCode.BAD_INPUT):
            planned = _read_plan(args)
        if planned is None:
            out.write(f"{args.plan} follows no alert: nothing to bisect\n")
            return ExitCode.OK_NO_REGRESSION
    elif args.post:
        raise _usage("--post writes into the plan's alert issue: it needs --plan")
    if args.package is None or args.good is None or args.bad is None:
        raise _usage("give --plan, or --package, --good and --bad")
    with step("list the builds", ExitCode.USAGE):
        between = list(planned["builds"]) if planned else _candidates(args)
        timeline = make_timeline(args.package, args.good, args.bad, between)
    with step("read the plan's commits", ExitCode.BAD_INPUT):
        from bot.bisect.upstream import read_commits

        upstream = read_commits(planned["commits"]) if planned else ()
    if args.list_builds:
        out.write("".join(f"{b.spec.text}\n" for b in timeline.builds))
        return ExitCode.OK_NO_REGRESSION
    if (args.points is None) == (args.from_report is None):
        raise _usage("give the points to measure: --points or --from-report (one of them)")
    if args.state is None:
        raise _usage("give --state FILE: every measurement is recorded there, to resume from")
    if args.issue is not None and args.issue_key is not None:
        raise _usage("give --issue or --issue-key, not both")
    if (args.issue is not None or args.issue_key is not None) and args.repo is None:
        raise _usage("--issue and --issue-key need --repo")
    if args.repo is not None and args.issue is None and args.issue_key is None:
        raise _usage("--repo needs --issue or --issue-key: the issue the section goes on")
    with step("choose the points", ExitCode.USAGE):
        points = parse_points(args.points) if args.points else read_report_points(args.from_report)
        variants = parse_variants(args.variants)
    state_path = args.state.resolve()
    work = (args.work or state_path.parent / f"{state_path.stem}.runs").resolve()
    if not work.is_relative_to(state_path.parent):
        raise _usage(f"--work {work} must be inside the state file's folder {state_path.parent}")
    from bot.commands.noise_file import configured_noise_model

    model = configured_noise_model(config.verdict)
    fresh = State(args.package, timeline.good.name, points, variants)
    with step(f"read the state file {args.state}", ExitCode.BAD_INPUT):
        state = read_state(state_path) if state_path.exists() else fresh
    with step("check the state file", ExitCode.USAGE):
        state.check_same(fresh)
    with step("choose the measurer", ExitCode.USAGE):
        measurer = _measurer(args, points, variants, work)
    plan = Plan(
        timeline,
        points,
        variants,
        config.verdict,
        model,
        max_runs=1 + args.remeasure,
        max_measurements=0 if args.post_only else args.max_measurements,
        budget_s=args.budget_s,
        total_budget_s=float(planned["budget_s"]) if planned and planned.get("budget_s") else None,
        upstream=upstream,
    )
    from bot.bisect.measure import MeasureError

    with step("measure the builds", ExitCode.MEASURE_FAILED):
        if not state_path.exists():
            write_state(state_path, state)
        try:
            outcome, state = run_bisect(plan, state, state_path, measurer, work=work, log=_log)
        except MeasureError as exc:  # the message says which build and why: no type name
            raise StepFailed("measure the builds", ExitCode.MEASURE_FAILED, str(exc)) from exc
    code = STATUS_CODES[outcome.status]
    report = to_json(outcome, plan, int(code))
    with step(f"write the state file {args.state}", ExitCode.USAGE):
        write_state(state_path, replace(state, report=report))
    if args.json is not None:
        with step(f"write {args.json}", ExitCode.USAGE):
            if not emit_json(args.json, report, out):
                out.write(to_text(outcome, plan))
    else:
        out.write(to_text(outcome, plan))
    if args.repo is not None and outcome.status != "unfinished":
        _post(args, config, outcome, plan, out if args.json is None else sys.stderr)
    return code


def _measurer(
    args: argparse.Namespace, points: tuple[str, ...], variants: tuple[str, ...], work: Path
) -> Measurer:
    if args.recorded is not None:
        from bot.bisect.recorded import read_recorded

        recorded = read_recorded(args.recorded)
        if recorded.package != args.package:
            raise ValueError(
                f"{args.recorded} records {recorded.package} builds, not {args.package}"
            )
        return recorded
    from bot.bisect.measure import SuiteMeasurer

    return SuiteMeasurer(
        args.package,
        points,
        variants,
        work,
        ROOT,
        size_set=args.size_set,
        machine=args.machine,
        pip_args=tuple(args.pip_arg),
    )


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _post(
    args: argparse.Namespace, config: Config, outcome: Outcome, plan: Plan, out: IO[str]
) -> None:
    from bot.bisect.words import marker, section

    with step("render the issue section", ExitCode.BAD_INPUT):
        body = section(outcome, plan)
    where = f"{args.repo}#{args.issue}" if args.issue else f"{args.repo} (key {args.issue_key})"
    token = config.issues_token
    if args.dry_run or token is None:
        why = "--dry-run" if args.dry_run else "no PERFBOT_ISSUES_TOKEN or GITHUB_TOKEN"
        out.write(f"DRY RUN ({why}): would create or update the bisect section on {where}:\n")
        out.write(f"----- comment -----\n{body}----- end of comment -----\n")
        return
    from bot.bisect.issue import post_section
    from bot.github.client import github_for

    with step(f"post the bisect section on {where}", ExitCode.GITHUB_FAILURE):
        gh = github_for(config, token.reveal())
        number, posted = post_section(
            gh,
            args.repo,
            body,
            marker(plan.timeline.package, plan.fusion),
            number=args.issue,
            key=args.issue_key,
            label=config.issue_label,
            bot_login=config.issues_login,
        )
    out.write(f"bisect section {posted.action} on {args.repo}#{number}: {posted.url}\n")
