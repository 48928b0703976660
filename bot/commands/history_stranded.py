"""``history``'s second pass over GitHub: the bot's open history issues that no current alert
matches, and those filed before alerts, one a guard (bot/history/stranded.py says why they
happen and what is done): one note each, said once, and a close when every guard the issue
tracks is back within the threshold at its range (as not planned; as completed for an issue
filed before alerts whose change a current alert tracks). Run only with an issues token and
without ``--dry-run``; a rerun on the same results changes nothing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import github
from github.Issue import Issue

from bot.commands.steps import StepFailed, step
from bot.config import Config
from bot.exitcodes import ExitCode
from bot.github.client import authenticated_login, github_step
from bot.github.issue_body import read_sizes
from bot.github.issue_find import own_open_keyed
from bot.github.sticky import own_comments
from bot.history.issues import AlertIssue
from bot.history.stranded import CLOSED_MARK, NOTE_MARK, Stranded, stranded
from bot.history.watch import Watch


def settle(repo: str, login: str, issue: Issue, s: Stranded) -> str:
    """Note once; close when back (``s.reason``). An issue this rule closed once and a person
    reopened is left alone."""
    where = f"{repo}#{issue.number}"
    with github_step(f"list comments on {where}"):
        comments = list(issue.get_comments())
    if own_comments(comments, CLOSED_MARK, login):
        return "unchanged"
    said = bool(own_comments(comments, NOTE_MARK, login))
    if not said:
        note = f"{s.note}\n{CLOSED_MARK}" if s.back else s.note
        with github_step(f"comment on {where}"):
            issue.create_comment(note)
    if not s.back:
        return "unchanged" if said else "commented"
    if said:
        with github_step(f"comment on {where}"):
            issue.create_comment(s.closed_note)
    with github_step(f"close {where} ({s.reason})"):
        issue.edit(state="closed", state_reason=s.reason)
    return "closed"


def open_keyed_issues(
    gh: github.Github, cfg: Config, failures: list[str]
) -> Iterator[tuple[str, str, list[tuple[str, Issue]]]]:
    """(repository, the bot's login, its open keyed issues there) for each configured
    repository; a repository that cannot be listed is a failure appended to ``failures``, and
    the others still get their turn (none when the bot's account cannot be told)."""
    try:
        with step("identify the bot account", ExitCode.GITHUB_FAILURE):
            login = cfg.issues_login or authenticated_login(gh)
    except StepFailed as failure:
        failures.append(str(failure))
        return
    for repo in cfg.issue_repos:
        try:
            with step(f"find the bot's open issues in {repo}", ExitCode.GITHUB_FAILURE):
                found = own_open_keyed(gh, repo, cfg.issue_label, login)
        except StepFailed as failure:
            failures.append(str(failure))
            continue
        yield repo, login, found


def sync_stranded(
    gh: github.Github, cfg: Config, watches: Sequence[Watch], issues: Sequence[AlertIssue]
) -> tuple[list[str], list[str]]:
    """What was done to each stranded issue, and what failed (each repository in turn)."""
    current = {ai.spec.key: frozenset(p.guard for p in ai.alert.parts) for ai in issues}
    lines: list[str] = []
    failures: list[str] = []
    for repo, login, found in open_keyed_issues(gh, cfg, failures):
        for key, issue in found:
            sizes = read_sizes(issue.body or "")
            s = next(
                (x for w in watches if (x := stranded(w, key, current, sizes)) is not None), None
            )
            if s is None:
                continue
            try:
                with step(f"settle stranded issue {repo}#{issue.number}", ExitCode.GITHUB_FAILURE):
                    action = settle(repo, login, issue, s)
            except StepFailed as failure:
                failures.append(str(failure))
                continue
            lines.append(f"issue (no longer shown: {key}) in {repo}: {action} {issue.html_url}")
    return lines, failures
