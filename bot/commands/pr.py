"""The ``pr`` command: sync the linked issues, then create or update the one sticky comment.

Issues go first so that the comment can link them; an issue failure still lets the comment be
posted (the verdict is the main news) and is reported after it, with exit code 4. Without a
token, or with ``--dry-run``, it prints everything it would post and touches nothing, so the
whole flow can be checked anywhere without write access.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import IO, Literal

from bot.commands.inputs import Loaded, verdict_code
from bot.commands.steps import StepFailed, step
from bot.exitcodes import ExitCode
from bot.github.issues import RepoIssueOutcome
from bot.tell.comment import MARKER, Context, render_comment
from bot.tell.issue import IssueSpec, issue_spec, update_note


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


def _dry(got: Loaded, ctx: Context, spec: IssueSpec | None, state: str, note: str, why: str) -> str:
    body = render_comment(got.verdict, ctx, got.base.provenance, got.head.provenance)
    lines = [
        f"DRY RUN ({why}): nothing was posted.",
        f"Would create or update the bot's comment on {ctx.repo}#{ctx.pr}:",
        "----- comment -----",
        body,
        "----- end of comment -----",
    ]
    if spec is None:
        lines.append("Would not touch linked issues (disabled, or no data).")
    elif state == "recovered":
        lines += [
            f"Would close any open linked issue with key {spec.key} in {', '.join(spec.repos)}",
            "after commenting:",
            note,
        ]
    else:
        lines += [
            f"Would open or update linked issues in {', '.join(spec.repos)}",
            f"key: {spec.key}",
            f"label: {spec.label}",
            f"title: {spec.title}",
            "----- issue body -----",
            spec.body,
            "----- note on existing issues -----",
            note,
            "----- end of issues -----",
        ]
    return "\n".join(lines) + "\n"


def _links(outcomes: Sequence[RepoIssueOutcome]) -> tuple[tuple[str, str], ...]:
    return tuple(
        (f"{o.repo}#{o.number}" + (" (closed)" if o.action == "closed" else ""), o.url)
        for o in outcomes
        if o.number is not None and o.url is not None
    )


def publish(got: Loaded, ctx: Context, out: IO[str], *, dry_run: bool = False) -> int:
    """Issues first (so the comment can link them), then the comment; dry without a token."""
    from bot.github.client import make_github
    from bot.github.issues import sync_regression_issues
    from bot.github.sticky import upsert_sticky_comment

    cfg, v = got.config, got.verdict
    spec: IssueSpec | None = None
    state: Literal["regressed", "recovered"] = "regressed" if v.regressed else "recovered"
    with step("build issue", ExitCode.BAD_INPUT):
        note = update_note(v, ctx)
        if cfg.file_issues and v.overall != "inconclusive (no data)":
            spec = issue_spec(v, ctx, cfg.issue_repos, cfg.issue_label)
    if dry_run or cfg.comment_token is None:
        why = "--dry-run" if dry_run else "no GITHUB_TOKEN"
        out.write(_dry(got, ctx, spec, state, note, why))
        return verdict_code(v)
    outcomes: tuple[RepoIssueOutcome, ...] = ()
    issue_failure: StepFailed | None = None
    if spec is not None and cfg.issues_token is not None:
        token = cfg.issues_token
        try:
            with step("sync linked issues", ExitCode.GITHUB_FAILURE):
                gh_issues = make_github(
                    cfg.api_url,
                    token.reveal(),
                    timeout=cfg.timeout_s,
                    max_retry_wait=cfg.max_retry_wait_s,
                )
                outcomes = sync_regression_issues(
                    lambda _repo: gh_issues, spec, state, note, bot_login=cfg.issues_login
                )
        except StepFailed as failure:  # still post the comment: the verdict is the main news
            issue_failure = failure
    with step("render comment", ExitCode.BAD_INPUT):
        body = render_comment(
            v, replace(ctx, issue_links=_links(outcomes)), got.base.provenance, got.head.provenance
        )
    with step(f"post comment on {ctx.repo}#{ctx.pr}", ExitCode.GITHUB_FAILURE):
        gh = make_github(
            cfg.api_url,
            cfg.comment_token.reveal(),
            timeout=cfg.timeout_s,
            max_retry_wait=cfg.max_retry_wait_s,
        )
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
    out.write(f"verdict: {v.overall}\ncomment {posted.action}: {posted.url}{removed}\n")
    for o in outcomes:
        folded = ""
        if o.folded:
            numbers = ", ".join(f"#{n}" for n in o.folded)
            folded = f" (closed duplicate(s) {numbers} as not planned, pointing at this one)"
        out.write(f"issue in {o.repo}: {o.action} {o.url or ''}".rstrip() + folded + "\n")
    failed = [o for o in outcomes if o.action == "failed"]
    if issue_failure is not None:
        raise issue_failure
    if failed:
        detail = "; ".join(f"{o.repo}: {o.error}" for o in failed)
        raise StepFailed("sync linked issues", ExitCode.GITHUB_FAILURE, detail)
    return verdict_code(v)
