"""The ``pr`` command: sync the linked issues, then create or update the one sticky comment.

Issues go first so that the comment can link them; an issue failure still lets the comment be
posted (the verdict is the main news) and is reported after it, with exit code 4. Without a
token, or with ``--dry-run``, it prints everything it would post and touches nothing, so the
whole flow can be checked anywhere without write access.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from bot.commands.inputs import Loaded, report_code
from bot.commands.steps import StepFailed, step
from bot.exitcodes import ExitCode
from bot.github.issues import RepoIssueOutcome
from bot.tell.comment import MARKER, Context
from bot.tell.issue import GuardIssue, guard_issues
from bot.tell.machines import Links, render_report


def run_pr(
    got: Loaded,
    out: IO[str],
    *,
    repo: str,
    pr: int,
    pr_title: str | None,
    head_ref: str | None,
    dry_run: bool,
) -> int:
    ctx = Context(
        repo=repo,
        pr=pr,
        pr_title=pr_title,
        head_ref=head_ref,
        run_url=got.config.run_url,
        site_url=got.config.site_url,
    )
    return publish(got, ctx, out, dry_run=dry_run)


def _tag(gi: GuardIssue, got: Loaded) -> str:
    """The guard, and with several machines the machine too: ``nvidia-h200 ratio``."""
    return gi.guard if len(got.reports()) == 1 else f"{gi.machine} {gi.guard}"


def _dry(got: Loaded, ctx: Context, issues: Sequence[GuardIssue], why: str) -> str:
    body = render_report(got.reports(), ctx, {})
    lines = [
        f"DRY RUN ({why}): nothing was posted.",
        f"Would create or update the bot's comment on {ctx.repo}#{ctx.pr}:",
        "----- comment -----",
        body,
        "----- end of comment -----",
    ]
    if not issues:
        lines.append("Would not touch linked issues (disabled).")
    for gi in issues:
        spec, tag = gi.spec, _tag(gi, got)
        if gi.state == "recovered":
            lines.append(
                f"[{tag}] Would close any open linked issue with key {spec.key} in "
                f"{', '.join(spec.repos)} after commenting: {gi.note}"
            )
        elif gi.state == "hold":
            lines.append(
                f"[{tag}] Would comment on an open linked issue with key {spec.key} in "
                f"{', '.join(spec.repos)}, if any, opening and closing nothing: {gi.note}"
            )
        else:
            lines += [
                f"[{tag}] Would open or update linked issues in {', '.join(spec.repos)}",
                f"key: {spec.key}",
                f"label: {spec.label}",
                f"title: {spec.title}",
                "----- issue body -----",
                spec.body,
                "----- note on existing issues -----",
                gi.note,
                "----- end of issues -----",
            ]
    return "\n".join(lines) + "\n"


def _links(outcomes: Sequence[tuple[GuardIssue, RepoIssueOutcome]]) -> Links:
    """Each machine's linked issues, as (label, url), for its own section of the comment."""
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for gi, o in outcomes:
        if o.number is None or o.url is None or o.action == "absent":
            continue
        label = f"{o.repo}#{o.number} ({gi.guard})" + (" (closed)" if o.action == "closed" else "")
        out[gi.machine] = (*out.get(gi.machine, ()), (label, o.url))
    return out


def verdict_words(got: Loaded) -> str:
    reports = got.reports()
    if len(reports) == 1:
        return got.verdict.overall
    return "; ".join(
        f"{m.machine} {m.verdict.overall if m.verdict else 'not compared'}"
        + ("" if m.verdict is None or m.gates else " (not gating)")
        for m in reports
    )


def publish(got: Loaded, ctx: Context, out: IO[str], *, dry_run: bool = False) -> int:
    """Issues first (so the comment can link them), then the comment; dry without a token."""
    from bot.github.client import github_for
    from bot.github.issues import sync_regression_issues
    from bot.github.sticky import upsert_sticky_comment

    cfg = got.config
    issues: tuple[GuardIssue, ...] = ()
    with step("build issues", ExitCode.BAD_INPUT):
        if cfg.file_issues:
            for m in got.reports():  # a machine that does not gate: its issues are held
                if m.verdict is not None:
                    issues += guard_issues(
                        m.verdict,
                        ctx,
                        cfg.issue_repos,
                        cfg.issue_label,
                        held=m.held,
                        hints=m.hints,
                    )
    if dry_run or cfg.comment_token is None:
        why = "--dry-run" if dry_run else "no GITHUB_TOKEN"
        out.write(_dry(got, ctx, issues, why))
        return report_code(got)
    outcomes: list[tuple[GuardIssue, RepoIssueOutcome]] = []
    issue_failure: StepFailed | None = None
    if issues and cfg.issues_token is not None:
        token = cfg.issues_token
        try:
            gh_issues = github_for(cfg, token.reveal())
            for gi in issues:
                with step(f"sync linked issues ({_tag(gi, got)})", ExitCode.GITHUB_FAILURE):
                    got_outcomes = sync_regression_issues(
                        lambda _repo: gh_issues,
                        gi.spec,
                        gi.state,
                        gi.note,
                        bot_login=cfg.issues_login,
                    )
                outcomes += [(gi, o) for o in got_outcomes]
        except StepFailed as failure:  # still post the comment: the verdict is the main news
            issue_failure = failure
    with step("render comment", ExitCode.BAD_INPUT):
        body = render_report(got.reports(), ctx, _links(outcomes))
    with step(f"post comment on {ctx.repo}#{ctx.pr}", ExitCode.GITHUB_FAILURE):
        gh = github_for(cfg, cfg.comment_token.reveal())
        assert ctx.repo is not None and ctx.pr is not None
        posted = upsert_sticky_comment(
            gh, ctx.repo, ctx.pr, body, MARKER, bot_login=cfg.comment_login
        )
    removed = ""
    if posted.removed:
        ids = ", ".join(str(i) for i in posted.removed)
        removed = (
            f" (deleted {len(posted.removed)} duplicate(s) of it left by a concurrent run: {ids})"
        )
    out.write(f"verdict: {verdict_words(got)}\ncomment {posted.action}: {posted.url}{removed}\n")
    for gi, o in outcomes:
        if o.action == "absent":
            continue
        folded = ""
        if o.folded:
            numbers = ", ".join(f"#{n}" for n in o.folded)
            folded = f" (closed duplicate(s) {numbers} as not planned, pointing at this one)"
        line = f"issue ({_tag(gi, got)}) in {o.repo}: {o.action} {o.url or ''}".rstrip()
        out.write(line + folded + "\n")
    failed = [o for _, o in outcomes if o.action == "failed"]
    if issue_failure is not None:
        raise issue_failure
    if failed:
        detail = "; ".join(f"{o.repo}: {o.error}" for o in failed)
        raise StepFailed("sync linked issues", ExitCode.GITHUB_FAILURE, detail)
    return report_code(got)
