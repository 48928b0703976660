"""Command line: ``fusion-perfbot`` / ``python -m bot``. The composition root.

This is the one place that reads the inputs every verdict flow shares, wires them into the
commands (one module each in bot/commands/; the grammar is bot/commands/parser.py, its shared
pieces bot/commands/args.py) and turns a failed step into its exit code. Every command is a
short list of named steps (bot/commands/steps.py); any failure leaves as one line naming the
step, with the exit code of its class (bot/exitcodes.py), and nothing half-done behind it: the
JSON file is written whole or not at all, the comment is posted only once everything is
rendered.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, TextIO, cast

from bot.commands.args import two_commits
from bot.commands.parser import build_parser
from bot.commands.steps import StepFailed, step
from bot.exitcodes import ExitCode
from bot.tell.log import LogSafeWriter, one_line

if TYPE_CHECKING:
    from bot.commands.inputs import Loaded, Selection

# Each command imports what it needs when it runs: numpy, PyGithub and the verdict's machinery
# cost a quarter of a second that `store`, `verify-run` or `--help` do not need.


def load(sel: Selection, env: Mapping[str, str]) -> Loaded:
    """Configuration, results, verdicts and the run's one decision, each its own step: a
    failure names which one.

    Here rather than in a flow, so that report, pr and the demo all read their inputs the same
    way; the demo is handed this function, as it can only load once its fake GitHub is up.
    """
    from dataclasses import replace

    from bot.alert.decision import decide_run
    from bot.alert.measured import Measured
    from bot.commands.captures import with_hints
    from bot.commands.inputs import Loaded
    from bot.commands.noise_file import configured_noise_models
    from bot.commands.steps import check_against_results
    from bot.config import Config
    from bot.decide.verdict import decide, model_fits
    from bot.results.machines import load_machines
    from bot.results.types import fusions_of

    with step("load configuration", ExitCode.USAGE):
        config = Config.from_env(env, sel.config, sel.caller_config, sel.caller_repo)
    s = config.verdict
    models = configured_noise_models(s)
    with step("read results", ExitCode.BAD_INPUT):
        machine = sel.machine or config.machine
        sides = load_machines(
            sel.results, sel.base, sel.head, machine, s.min_samples, per_round=False
        )
    warnings = check_against_results(s, [r for m in sides for r in (*m.base_runs, *m.head_runs)])
    measured = []
    with step("compute verdict", ExitCode.BAD_INPUT):
        for m in sides:  # each machine on its own runs, with its own noise model
            if not m.compared:
                measured.append(Measured(m.machine, None, missing=m.missing))
                continue
            model = models.get(m.machine)
            used, why = model_fits(model, (*m.base_runs, *m.head_runs))
            if used is None and model is None and models:
                others = ", ".join(sorted(models))
                why = f"no noise model for machine {m.machine} (perfbot.toml names {others})"
            uncalibrated = None if used is not None or s.judge_without_noise_model else why
            for fusion in fusions_of((*m.base_runs, *m.head_runs)):  # each judged on its own
                base = tuple(r.of_fusion(fusion) for r in m.base_runs)
                head = tuple(r.of_fusion(fusion) for r in m.head_runs)
                verdict = decide(base, head, config.verdict, model)
                verdict = replace(verdict, notes=(*verdict.notes, *m.notes, *warnings))
                measured.append(
                    Measured(
                        m.machine,
                        verdict,
                        base,
                        head,
                        uncalibrated=uncalibrated,
                        fusion=fusion,
                        model_stack=used.stack if used is not None else None,
                        provisional=used.provisional.get(fusion, ()) if used is not None else (),
                    )
                )
    with step("read fusion captures", ExitCode.BAD_INPUT):
        measured = with_hints(measured, sel.captures)
    with step("decide", ExitCode.BAD_INPUT):
        return Loaded(config, decide_run(measured))


def _selection(args: argparse.Namespace) -> Selection:
    from bot.commands.inputs import Selection

    captures = (getattr(args, "captures_base", None), getattr(args, "captures_head", None))
    return Selection(
        tuple(args.results or ()),
        args.base,
        args.head,
        args.machine,
        args.config,
        captures,
        getattr(args, "caller_config", None),
        getattr(args, "repo", None),
    )


def cmd_report(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.report import report_format, run_report

    two_commits("report", args.base, args.head)
    fmt, json_path = report_format(args.format, args.json, out)
    got = load(_selection(args), env)
    return run_report(got, out, json_path=json_path, full=args.full, fmt=fmt)


def cmd_pr(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.pr import run_pr  # PyGithub: 0.2 s and 30 MB that report does not need

    two_commits("pr", args.base, args.head)
    return run_pr(
        load(_selection(args), env),
        out,
        repo=args.repo,
        pr=args.pr,
        pr_title=args.pr_title,
        head_ref=args.head_ref,
        dry_run=args.dry_run,
        pr_state=args.pr_state,
    )


def cmd_calibrate(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.calibrate import run_calibrate

    return run_calibrate(
        args.results,
        env,
        out,
        thunder_variant=args.thunder_variant,
        machine=args.machine,
        config_path=args.config,
        runs_a_side=args.runs_a_side,
        trials=args.trials,
        jobs=args.jobs,
        json_path=args.json,
        mark_model=args.mark_model,
    )


def cmd_noise(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.noise import run_noise

    return run_noise(
        args.results,
        env,
        out,
        thunder_variant=args.thunder_variant,
        machine=args.machine,
        config_path=args.config,
        json_path=args.json,
        model_path=args.write_model,
        extend_path=args.extend,
    )


def cmd_demo(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.demo import run_demo

    if args.life:
        from bot.commands.demo_life import run_life

        return run_life(env, out, load, config_path=args.config)

    return run_demo(
        env,
        out,
        load,
        results=args.results,
        base=args.base,
        head=args.head,
        machine=args.machine,
        config_path=args.config,
        captures=(args.captures_base, args.captures_head),
        save=args.save,
    )


def cmd_site(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.site import run_site_build, run_site_serve

    if args.action == "build":
        return run_site_build(
            out,
            results=args.results,
            site_out=args.out,
            asv_conf=args.asv_conf,
            history=args.history,
            config=args.config,
            history_json=args.history_json,
        )
    return run_site_serve(
        results=args.results,
        asv_conf=args.asv_conf,
        host=args.host,
        port=args.port,
        config=args.config,
        history_json=args.history_json,
    )


def cmd_verify_run(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.verify import run_verify
    from bot.github.trust import Claim

    claim = Claim(args.repo, args.run_id, args.workflow_path, args.pr, args.head_sha, args.attempt)
    return run_verify(env, out, claim)


def cmd_fetch_artifact(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.fetch_artifact import run_fetch_artifact
    from bot.github.trust_artifact import Limits

    limits = Limits(args.max_bytes, args.max_files, args.max_artifacts)
    return run_fetch_artifact(
        env,
        out,
        repo=args.repo,
        run_id=args.run_id,
        prefix=args.name_prefix,
        dest=args.dest,
        limits=limits,
        config=args.config,
    )


def cmd_history(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.history import cmd_history as run  # docs/HISTORY.md

    return run(args, env, out)


def cmd_history_calibrate(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.history_calibrate import cmd_history_calibrate as run

    return run(args, env, out)


def cmd_bisect(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.bisect import run_bisect_command  # its modules load only when it runs

    return run_bisect_command(args, env, out)


def cmd_bisect_plan(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.bisect_plan import run_bisect_plan

    return run_bisect_plan(args, env, out)


def _store(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    from bot.commands.store import cmd_store

    return cmd_store(args, env, out)


HANDLERS = {
    "report": cmd_report,
    "pr": cmd_pr,
    "calibrate": cmd_calibrate,
    "noise": cmd_noise,
    "demo": cmd_demo,
    "site": cmd_site,
    "verify-run": cmd_verify_run,
    "fetch-artifact": cmd_fetch_artifact,
    "history": cmd_history,
    "history-calibrate": cmd_history_calibrate,
    "bisect": cmd_bisect,
    "bisect-plan": cmd_bisect_plan,
    "store": lambda args, env, out: _store(args, env, out),
}


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
            return _run(build_parser(HANDLERS), argv, os.environ if env is None else env, out, err)
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
        err.write(f"fusion-perfbot {args.command}: {one_line(str(failure))}\n")
        return int(failure.code)


def _drop_output(stream: IO[str]) -> None:
    """Point the closed stdout at /dev/null, so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):  # not a real file (a test's capture): nothing to quiet
        pass
