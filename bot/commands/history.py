"""The ``history`` command: the main-branch watch. Reads every commit's results in commit
order, finds where the four guards changed (bot/history), prints the report (or JSON), and
opens, updates or closes one alert per break on main (every confirmed regression and break at
one commit range of one fusion on one machine: bot/history/alerts.py) with the PR mode's code
(bot/github/issues.py), then notes (once) and closes when back the bot's open history issues
that no current alert matches (bot/commands/history_stranded.py); without an issues token, or
with ``--dry-run``, it says what it would file and touches nothing.

Exit code: BROKEN when a confirmed break still fails at the newest commit, REGRESSION when a
confirmed regression still stands there, OK otherwise (a regression that was fixed later is in
the report, not in the exit code: a nightly watch must not fail forever on history).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.alert.model import change_words, clearly_worse
from bot.alert.plan import worse_note
from bot.commands.history_inside import inside_from_captures
from bot.commands.long_lived import long_lived
from bot.commands.noise_file import configured_noise_models
from bot.commands.steps import StepFailed, check_against_results, emit_json, step
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.fusion.names import unit_words
from bot.history.issues import AlertIssue, alert_json, watch_issues
from bot.history.load import load_histories, unmeasured_builds
from bot.history.method import Method
from bot.history.power import Power, power_json, power_text
from bot.history.power import power as search
from bot.history.render import to_json, worst
from bot.history.summary import reports_text
from bot.history.watch import Watch, analyse

if TYPE_CHECKING:  # PyGithub is imported only where GitHub is called (a dry run: never)
    from bot.decide.noise_model import NoiseModel
    from bot.github.issues import News, SyncAction
    from bot.history.series import History


def _tag(ai: AlertIssue, several: bool) -> str:
    a = ai.alert
    where = f"{a.last_good[:8]}..{a.first_bad[:8]}"
    return f"{a.unit} {where}" if several else where


def _dry(issues: Sequence[AlertIssue], several: bool, why: str) -> list[str]:
    lines = [f"DRY RUN ({why}): no issue was touched."]
    if not issues:
        lines.append("No confirmed regression or break: no alert to open, note or close.")
    for ai in issues:
        a, spec, tag = ai.alert, ai.spec, _tag(ai, several)
        what = {
            "regressed": "open or update the alert's issues",
            "recovered": "comment on and close the alert's open issues",
            "hold": "comment on the alert's open issues, if any, opening and closing nothing",
        }[a.state]
        where = ", ".join([f"{a.owner} (primary)", *(f"{r} (linked)" for r in a.repos[1:])])
        action = f"Would {what} in {where}"
        if not a.repos and a.state == "regressed":  # nobody's upstream: nothing is filed
            action = "Would file nothing upstream (no side's build explains it)"
        lines += [
            f"[{tag}] {action}",
            f"  key: {spec.key}",
            f"  owner: {a.owner_why}",
            "  sections: "
            + ", ".join(
                f"{p.section.name} ({p.follow}, {change_words(p.section.name, p.section.size)})"
                for p in a.parts
            ),
        ]
        if a.state == "regressed":
            lines.append(f"  title: {spec.title}")
        lines.append(f"  note: {ai.note}")
    return lines


#: The watch's states as sync actions: a regression files (and follows up on an open issue),
#: a recovery closes as completed, a hold notes an open issue.
HISTORY_ACTIONS: dict[str, SyncAction] = {
    "regressed": "file",
    "recovered": "recover",
    "hold": "note",
}


def _news(ai: AlertIssue, factor: float) -> News:
    """An open issue gets the night's note (posted once: the same note again is unchanged);
    a closed one stays closed and quiet, but for one comment when the alert got clearly worse
    than it showed (a section joined, or one grew by more than the factor, bot/alert/model.py)."""
    a = ai.alert
    where = f"{unit_words(a.unit)}'s main branch at {a.last_good[:12]}..{a.first_bad[:12]}"

    def news(then: Mapping[str, float] | None, closed: bool) -> str | None:
        if not closed:
            return ai.note
        worse = clearly_worse(then, a.sizes, factor) if then is not None else []
        return worse_note(worse, factor, where, closed) if worse else None

    return news


def _sync(
    cfg: Config, watches: Sequence[Watch], issues: Sequence[AlertIssue], several: bool
) -> tuple[list[str], list[str]]:
    """What each alert's sync did, and what failed (every alert gets its turn first); then the
    bot's open history issues that no current alert matches (bot/commands/history_stranded.py)."""
    from bot.commands.history_moved import rekey_moved
    from bot.commands.history_stranded import sync_stranded
    from bot.github.client import github_for
    from bot.github.issues import sync_issues

    assert cfg.issues_token is not None
    gh = github_for(cfg, cfg.issues_token.reveal())
    # First: an alert whose change point moved by a commit takes over its old issue.
    lines, failures = rekey_moved(gh, cfg, watches, issues)
    for ai in issues:
        tag = _tag(ai, several)
        try:
            with step(f"sync linked issues ({tag})", ExitCode.GITHUB_FAILURE):
                outcomes = sync_issues(
                    lambda _repo: gh,
                    ai.spec,
                    HISTORY_ACTIONS[ai.alert.state],
                    ai.note,
                    bot_login=cfg.issues_login,
                    news=_news(ai, cfg.alerts.worse_factor),
                )
        except StepFailed as failure:  # the other alerts' issues still get their turn
            failures.append(str(failure))
            continue
        for o in outcomes:
            role = "primary" if o.repo == ai.alert.owner else "linked"
            if o.action == "failed":
                failures.append(f"{tag} in {o.repo}: {o.error}")
            elif o.action != "absent":
                folded = (
                    f" (closed duplicate(s) {', '.join(f'#{n}' for n in o.folded)})"
                    if o.folded
                    else ""
                )
                lines.append(
                    f"issue ({tag}, {role}) in {o.repo}: {o.action} {o.url or ''}".rstrip() + folded
                )
    more, failed = sync_stranded(gh, cfg, watches, issues)
    return lines + more, failures + failed


def cmd_history(args: argparse.Namespace, env: Mapping[str, str], out: IO[str]) -> int:
    """``python -m bot history`` (bot/commands/history_parser.py is its grammar)."""
    return run_history(
        args.results,
        env,
        out,
        machine=args.machine,
        order=args.order,
        config_path=args.config,
        json_path=args.json,
        repo=args.repo,
        dry_run=args.dry_run,
        method=Method(window=args.window, min_after=args.min_after),
        power=args.power,
    )


def run_history(
    dirs: Sequence[Path],
    env: Mapping[str, str],
    out: IO[str],
    *,
    machine: str | None,
    order: Path | None,
    config_path: Path | None,
    json_path: Path | None,
    repo: str | None,
    dry_run: bool,
    method: Method,
    power: bool = False,
) -> int:
    with step("check arguments", ExitCode.USAGE):
        if method.min_after < 1 or method.window < max(method.min_after, method.min_before):
            raise ValueError(
                f"--window ({method.window}) must be at least --min-after ({method.min_after}) "
                f"and {method.min_before}, and --min-after at least 1"
            )
    with step("load configuration", ExitCode.USAGE):
        cfg = Config.from_env(env, config_path)
    s = cfg.verdict
    models = configured_noise_models(s)
    # PERFBOT_CACHE_DIR: where the runs read are kept between nights
    # (bot/results/run_cache.py); unset, every file is decoded each time.
    cache = Path(env["PERFBOT_CACHE_DIR"]) if env.get("PERFBOT_CACHE_DIR") else None
    with long_lived() as keep:  # the runs, out of the collector's way (long_lived.py)
        with step("read results", ExitCode.BAD_INPUT):
            histories = load_histories(dirs, machine or cfg.machine, order, s.min_samples, cache)
            # A build of a history that did not install or measure is a point of it too.
            gone = unmeasured_builds(dirs)
            histories = tuple(replace(h, notes=(*h.notes, *gone)) for h in histories)
        keep()
        return _watch(
            histories,
            cfg,
            models,
            out,
            json_path=json_path,
            repo=repo,
            dry_run=dry_run,
            method=method,
            power=power,
        )


def model_for(models: Mapping[str, NoiseModel], machine: str) -> NoiseModel | None:
    """A history's noise model: its machine's own, as the PR mode takes it; without one, the
    first configured, as ``history`` took it before (its note then says it is for another
    machine; the PR mode leaves such a machine uncalibrated instead). Within it each
    fusion's history is judged with that fusion's series and A/A runs (``model_fits``, on the
    history's runs: one fusion's points)."""
    return models.get(machine, next(iter(models.values()), None))


def _watch(
    histories: Sequence[History],
    cfg: Config,
    models: Mapping[str, NoiseModel],
    out: IO[str],
    *,
    json_path: Path | None,
    repo: str | None,
    dry_run: bool,
    method: Method,
    power: bool = False,
) -> int:
    """The analysis, the alerts and the report of histories read."""
    s = cfg.verdict
    check_against_results(s, [r for h in histories for r in h.runs])
    with step("find changes", ExitCode.BAD_INPUT):
        watches = [analyse(h, s, model_for(models, h.machine), method) for h in histories]
    powers: list[Power] = []
    if power:
        with step("measure power", ExitCode.BAD_INPUT):
            powers = [search(h, s, model_for(models, h.machine), method) for h in histories]
    with step("build issues", ExitCode.BAD_INPUT):
        issues = (
            watch_issues(
                watches,
                repo,
                cfg.issue_repos,
                cfg.issue_label,
                cfg.alerts.link,
                inside_from_captures,
            )
            if cfg.file_issues
            else ()
        )
    several = len(watches) > 1
    failures: list[str] = []
    if not cfg.file_issues:
        said = ["Linked issues are disabled (perfbot.toml [issues] enabled = false)."]
    elif dry_run or cfg.issues_token is None:
        why = "--dry-run" if dry_run else "no GITHUB_TOKEN or PERFBOT_ISSUES_TOKEN"
        said = _dry(issues, several, why)
    else:
        said, failures = _sync(cfg, watches, [ai for ai in issues if ai.spec.repos], several)
    code = worst(watches)
    to_stdout = False
    if json_path is not None:
        with step(f"write {json_path}", ExitCode.USAGE):
            data = {**to_json(watches), "alerts": [alert_json(ai) for ai in issues]}
            if power:
                data["power"] = [power_json(p) for p in powers]
            to_stdout = emit_json(json_path, {**data, "issues": said}, out)
    if not to_stdout:
        text = reports_text(watches) + (f"\n\n{power_text(powers)}" if power else "")
        out.write(text + "\n\n" + "\n".join(said) + "\n")
    if failures:  # after the report: what was found is printed whatever GitHub did
        raise StepFailed("sync linked issues", ExitCode.GITHUB_FAILURE, "; ".join(failures))
    return code
