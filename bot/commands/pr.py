"""The ``pr`` command: one alert for the PR, its issues, the sticky comment, the commit status.

The steps, in order: build the alert from the judged machines' verdicts (bot/alert/); read
what GitHub says of the PR (open, merged or closed; acknowledgements; what the bot's comment
remembered: bot/github/pr_facts.py); decide the acknowledgement, the issues' plan and the status
(pure); sync the issues (so that the comment can link them); post the comment; set the status.
An issue failure still lets the comment and the status be posted (the verdict is the main
news) and is reported after them, with exit code 4. Without a token, or with ``--dry-run``, it
prints everything it would post and touches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import IO, TYPE_CHECKING

from bot.alert.ack import AckDecision, decide_ack
from bot.alert.decision import Decision
from bot.alert.model import Alert, alert_of, clearly_worse, pr_key
from bot.alert.plan import (
    IssuePlan,
    PrState,
    from_another_repository,
    plan_issues,
    same_repository,
    worse_note,
)
from bot.alert.status import Status, commit_status
from bot.commands.inputs import Loaded
from bot.commands.pr_dry import dry_run_text
from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.github.issues import News, RepoIssueOutcome
from bot.github.pr_facts import PrFacts
from bot.tell.alert_issue import alert_spec
from bot.tell.comment import MARKER, AlertPart, Context, render_report
from bot.tell.comment_state import CommentState, state_marker
from bot.tell.issue import IssueSpec
from bot.tell.log import quoted

if TYPE_CHECKING:  # PyGithub is imported when the command runs (bot/commands/cli.py)
    import github


def run_pr(
    got: Loaded,
    out: IO[str],
    *,
    repo: str,
    pr: int,
    pr_title: str | None,
    head_ref: str | None,
    dry_run: bool,
    pr_state: PrState = "open",
) -> int:
    ctx = Context(
        repo=repo,
        pr=pr,
        pr_title=pr_title,
        head_ref=head_ref,
        run_url=got.config.run_url,
        site_url=got.config.site_url,
        docs_url=got.config.docs_url,
    )
    return publish(got, ctx, out, dry_run=dry_run, pr_state=pr_state)


def check_machines(decision: Decision, limit: int) -> None:
    """Refuse, before anything is read from or written to GitHub, a run with more machines
    than the configured runner kinds could have measured: each machine is a section of the
    comment and may be a section of the alert, so the bound on machines bounds what one run
    posts."""
    machines = list(dict.fromkeys(u.machine for u in decision.units))  # a unit a fusion each
    if len(machines) > limit:
        names = ", ".join(quoted(m, 60) for m in machines[:10])
        more = f" and {len(machines) - 10} more" if len(machines) > 10 else ""
        raise ValueError(
            f"{len(machines)} machines in the results ({names}{more}), more than "
            f"[results] max_machines = {limit}: nothing was posted"
        )


def _alert(
    got: Loaded, ctx: Context, previous: Mapping[str, float] | None
) -> tuple[Alert, IssueSpec]:
    assert ctx.repo is not None and ctx.pr is not None
    cfg, d = got.config, got.decision
    # A section is one guard of one fusion on one machine: keyed by the unit (the machine
    # alone for RMSNorm backward, as before the catalog).
    alert = alert_of(
        d,
        key=pr_key(ctx.repo, ctx.pr),
        configured=cfg.issue_repos,
        pr_repo=ctx.repo,
        previous=previous,
        link=cfg.alerts.link,
    )
    judged = {u.unit: u.verdict for u in d.judged if u.verdict is not None}
    hints = {u.unit: u.hints for u in d.units}
    sides = {u.unit: (u.base, u.head) for u in d.units}
    return alert, alert_spec(alert, judged, ctx, hints, cfg.issue_label, sides)


def _facts(
    gh: github.Github | None, cfg: Config, ctx: Context, pr_state: PrState
) -> tuple[PrFacts, str | None]:
    """What GitHub says of the PR, and the login the comment token posts as (read once, for
    the facts and the sticky comment alike); without a client, the state given."""
    if gh is None:
        return PrFacts(pr_state, ""), cfg.comment_login
    from bot.github.client import authenticated_login
    from bot.github.pr_facts import read_pr_facts

    assert ctx.repo is not None and ctx.pr is not None
    login = cfg.comment_login or authenticated_login(gh)
    facts = read_pr_facts(
        gh, ctx.repo, ctx.pr, marker=MARKER, bot_login=login, ack_label=cfg.alerts.ack_label
    )
    return facts, login


def _news(alert: Alert, factor: float, pr_ref: str) -> News:
    """What an issue of the alert is told, open or closed: that a section joined, or got
    clearly worse than the issue showed. A closed one stays closed (bot/github/issues.py)."""

    def news(then: Mapping[str, float] | None, closed: bool) -> str | None:
        if then is None:
            return None  # an issue without sizes (filed by an older bot): nothing to compare
        worse = clearly_worse(then, alert.sizes, factor)
        return worse_note(worse, factor, pr_ref, closed) if worse else None

    return news


def _links(outcomes: Sequence[RepoIssueOutcome], alert: Alert) -> list[tuple[str, str]]:
    out = []
    for o in outcomes:
        if o.number is None or o.url is None or o.action == "absent":
            continue
        closed = ", closed" if o.action in ("closed", "left closed") else ""
        out.append((f"{o.repo}#{o.number} ({_role(o, alert)}{closed})", o.url))
    return out


def _role(outcome: RepoIssueOutcome, alert: Alert) -> str:
    return "primary" if outcome.repo == alert.owner else "linked"


def exit_code(alert: Alert, ack: AckDecision) -> ExitCode:
    if alert.state != "regressed" or ack.holds:
        return ExitCode.OK_NO_REGRESSION
    return ExitCode.BROKEN if alert.broken else ExitCode.REGRESSION


def _comment(
    got: Loaded,
    ctx: Context,
    decided: tuple[Alert, AckDecision, IssuePlan, Status],
    issues: list[tuple[str, str]],
) -> str:
    alert, ack, plan, status = decided
    hidden = state_marker(CommentState(alert.sizes, ack.record))
    part = AlertPart(alert, ack, plan, status, tuple(issues), got.config.alerts.ack_label, hidden)
    return render_report(got.decision, ctx, part)


def publish(
    got: Loaded, ctx: Context, out: IO[str], *, dry_run: bool = False, pr_state: PrState = "open"
) -> int:
    """Read, decide, then issues (so the comment can link them), comment and status."""
    from bot.github.client import github_for
    from bot.github.issues import sync_issues
    from bot.github.status import post_status
    from bot.github.sticky import upsert_sticky_comment

    cfg = got.config
    assert ctx.repo is not None and ctx.pr is not None
    pr_ref = f"{ctx.repo}#{ctx.pr}"
    with step("check the run's bounds", ExitCode.UNTRUSTED):
        check_machines(got.decision, cfg.max_machines)
    live = not dry_run and cfg.comment_token is not None
    gh = github_for(cfg, cfg.comment_token.reveal()) if live and cfg.comment_token else None
    with step(f"read {pr_ref}", ExitCode.GITHUB_FAILURE):
        facts, login = _facts(gh, cfg, ctx, pr_state)
    remembered = facts.remembered
    with step("build the alert", ExitCode.BAD_INPUT):
        alert, spec = _alert(got, ctx, remembered.sizes if remembered else None)
    a = cfg.alerts
    ack = decide_ack(
        facts.acks,
        remembered.ack if remembered else None,
        alert,
        shown=remembered.sizes if remembered else None,
        pr_author=facts.author,
        allow_author=a.allow_author,
        factor=a.worse_factor,
    )
    plan = plan_issues(alert, facts.state, a.open_on, ack, pr_ref, got.head)
    upstream = same_repository(facts.head_repo, ctx.repo)  # may this run touch their trackers?
    if not upstream:
        plan = from_another_repository(facts.head_repo)
    status = commit_status(alert, ack, got.decision.unsettled)
    decided = (alert, ack, plan, status)
    if gh is None:
        why = "--dry-run" if dry_run else "no GITHUB_TOKEN"
        out.write(dry_run_text(_comment(got, ctx, decided, []), spec, plan, status, why, cfg))
        return exit_code(alert, ack)
    outcomes: tuple[RepoIssueOutcome, ...] = ()
    issue_failure: StepFailed | None = None
    if plan.action in ("recover", "acknowledge", "abandon"):  # wherever an issue may be
        spec = replace(spec, repos=alert.everywhere)
    if upstream and cfg.file_issues and cfg.issues_token is not None and spec.repos:
        try:
            with step("sync the alert's issues", ExitCode.GITHUB_FAILURE):
                gh_issues = github_for(cfg, cfg.issues_token.reveal())
                outcomes = sync_issues(
                    lambda _repo: gh_issues,
                    spec,
                    plan.action,
                    plan.note,
                    bot_login=cfg.issues_login,
                    news=_news(alert, a.worse_factor, pr_ref),
                )
        except StepFailed as failure:  # still post the comment: the verdict is the main news
            issue_failure = failure
    with step("render comment", ExitCode.BAD_INPUT):
        body = _comment(got, ctx, decided, _links(outcomes, alert))
    with step(f"post comment on {pr_ref}", ExitCode.GITHUB_FAILURE):
        posted = upsert_sticky_comment(gh, ctx.repo, ctx.pr, body, MARKER, bot_login=login)
    with step("set the commit status", ExitCode.GITHUB_FAILURE):
        post_status(gh, ctx.repo, got.head, status, cfg.run_url)
    removed = ""
    if posted.removed:
        ids = ", ".join(str(i) for i in posted.removed)
        removed = (
            f" (deleted {len(posted.removed)} duplicate(s) of it left by a concurrent run: {ids})"
        )
    out.write(f"status: {status.kind}: {status.description}\n")
    out.write(f"comment {posted.action}: {posted.url}{removed}\n")
    for o in outcomes:
        if o.action == "absent":
            continue
        folded = ""
        if o.folded:
            numbers = ", ".join(f"#{n}" for n in o.folded)
            folded = f" (closed duplicate(s) {numbers} as not planned, pointing at this one)"
        line = f"alert issue ({_role(o, alert)}) in {o.repo}: {o.action} {o.url or ''}".rstrip()
        out.write(line + folded + "\n")
    failed = [o for o in outcomes if o.action == "failed"]
    if issue_failure is not None:
        raise issue_failure
    if failed:
        detail = "; ".join(f"{o.repo}: {o.error}" for o in failed)
        raise StepFailed("sync the alert's issues", ExitCode.GITHUB_FAILURE, detail)
    return exit_code(alert, ack)
