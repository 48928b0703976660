"""Linked regression issues across repositories, one per key and repository, never two.

An issue is found again by LISTING the repository's issues that carry the bot's label (every
page, open and closed) and reading a hidden key marker in the body; search is never used,
because GitHub's index lags new issues by seconds to minutes and would let a quick second run
file a duplicate. Removing the label from an issue is how a maintainer detaches it from the
bot. Only issues the bot itself opened count: a human's issue is never edited or closed.

Each repository's issue links the others (primary first). The link section sits between
hidden markers and is rewritten from scratch every run, so a link that could not be made
(a repository failed, or a run crashed between two creates) is written down as missing and
repaired by the next run: the same call repeated converges instead of piling up.

A repeated `update_note` identical to the bot's latest comment on that issue, or to the note of
the run that opened it (kept as a digest in a hidden marker of the body), is not posted again
("unchanged"): a re-run of the same workflow (for instance after a partial failure) must not
touch the issue, while a changed note is news and is posted ("commented").
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote

import github
from github.Issue import Issue
from github.Repository import Repository

from bot.github.client import GitHubFailure, authenticated_login, github_step
from bot.github.sticky import newest_own, same_text
from bot.tell.issue import IssueSpec

Action = Literal["opened", "commented", "closed", "unchanged", "absent", "failed"]
KEY_MARKER = "<!-- fusion-perfbot-key: {} -->"
NOTE_MARKER = "<!-- fusion-perfbot-note: {} -->"
LINKS_START = "<!-- fusion-perfbot-links:start -->"
LINKS_END = "<!-- fusion-perfbot-links:end -->"
MAX_BODY = 65536
MAX_TITLE = 256
LINK_LINE_BUDGET = 600  # generous upper bound of one rendered link line
LABEL_COLOR = "d93f0b"
_REPO_NAME = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]]+")


@dataclass(frozen=True)
class RepoIssueOutcome:
    """What exists now in one repository.

    opened: a new issue was filed, or the key's closed issue was reopened. failed: a step
    failed (`error` says which); `number`/`url` are still set when the issue exists anyway.
    """

    repo: str
    action: Action
    number: int | None
    url: str | None
    error: str | None = None


def note_marker(note: str) -> str:
    """The hidden record, in an issue's body, of the note of the run that opened it."""
    digest = hashlib.sha256(note.strip().encode("utf-8")).hexdigest()[:16]
    return NOTE_MARKER.format(digest)


def escape_key(key: str) -> str:
    """Percent-encode `key` so it cannot end the HTML comment it sits in (no `--`, `<`, `>`)."""
    return quote(key, safe="|#/:@+=,;!*'()[]").replace("--", "-%2D")


def key_marker(key: str) -> str:
    return KEY_MARKER.format(escape_key(key))


@dataclass
class _Run:
    """One repository's progress during a sync."""

    name: str
    repo: Repository | None = None
    login: str = ""
    issue: Issue | None = None
    action: Action | None = None
    failure: GitHubFailure | None = None

    def outcome(self) -> RepoIssueOutcome:
        number = self.issue.number if self.issue is not None else None
        url = self.issue.html_url if self.issue is not None else None
        if self.failure is not None:
            return RepoIssueOutcome(self.name, "failed", number, url, str(self.failure))
        assert self.action is not None
        return RepoIssueOutcome(self.name, self.action, number, url)


def link_line(run: _Run, this_repo: str) -> str:
    if run.name == this_repo:
        return f"- {run.name}: this issue"
    if run.issue is not None:
        ref = f"{run.name}#{run.issue.number}"
        url = run.issue.html_url
        return f"- {run.name}: [{ref}]({url})" if _SAFE_URL.fullmatch(url) else f"- {ref}"
    if run.failure is not None:
        answer = f"HTTP {run.failure.status}" if run.failure.status else "no answer"
        why = f"GitHub gave {answer} when the bot tried; its next run retries"
    else:
        why = "the bot files it next; if this line stays, its next run does"
    return f"- {run.name}: not linked yet ({why})"


def links_section(runs: Sequence[_Run], this_repo: str) -> str:
    lines = [LINKS_START, "**Tracked in**", ""]
    lines += [link_line(run, this_repo) for run in runs]
    return "\n".join([*lines, LINKS_END])


def with_links(body: str, section: str) -> str:
    """`body` with its link section replaced (or appended); the rest stays as filed."""
    start, end = body.find(LINKS_START), body.find(LINKS_END)
    if start >= 0 and end > start:
        return body[:start] + section + body[end + len(LINKS_END) :]
    return f"{body.rstrip()}\n\n{section}"


def validate(spec: IssueSpec, state: str, update_note: str) -> None:
    if state not in ("regressed", "recovered"):
        raise ValueError(f"state must be 'regressed' or 'recovered', not {state!r}")
    names = [r.lower() for r in spec.repos]
    if not spec.repos or len(set(names)) != len(names):
        raise ValueError("spec.repos must name at least one repository, each once")
    for repo in spec.repos:
        if not _REPO_NAME.fullmatch(repo):
            raise ValueError(f"not an owner/name repository: {repo!r}")
    if not spec.key or not spec.label.strip() or len(spec.label) > 50:
        raise ValueError("spec.key must be non-empty and spec.label 1-50 characters")
    if not spec.title.strip() or len(spec.title) > MAX_TITLE:
        raise ValueError(f"spec.title must have 1-{MAX_TITLE} characters")
    worst = (
        len(key_marker(spec.key))
        + len(note_marker(""))
        + len(spec.body)
        + LINK_LINE_BUDGET * (len(spec.repos) + 1)
    )
    if worst > MAX_BODY:
        raise ValueError(f"spec.body is too long for a GitHub issue ({MAX_BODY} characters)")
    if not update_note.strip() or len(update_note) > MAX_BODY:
        raise ValueError(f"update_note must have 1-{MAX_BODY} characters")


def sync_regression_issues(
    gh_for_repo: Callable[[str], github.Github],
    spec: IssueSpec,
    state: Literal["regressed", "recovered"],
    update_note: str,
    *,
    bot_login: str | None = None,
) -> tuple[RepoIssueOutcome, ...]:
    """Bring every repository's issue for `spec.key` in line with `state`; safe to repeat.

    regressed: an open issue gets `update_note` as a comment; a closed one is reopened with
    it (unless closed as "not planned": a maintainer's decision stays); a missing one is
    opened. recovered: open issues get the note and are closed; none open gives "absent".
    `gh_for_repo` may raise GitHubFailure (e.g. no token for that repository): that
    repository fails, the others proceed. `bot_login` skips GET /user (see
    `authenticated_login`). Outcomes follow `spec.repos`' order.
    """
    validate(spec, state, update_note)
    runs = [_Run(name) for name in spec.repos]
    found = {run.name: _lookup(run, gh_for_repo, spec, bot_login) for run in runs}
    if state == "recovered":
        for run in runs:
            if run.failure is None:
                _recover(run, found[run.name], update_note)
        return tuple(run.outcome() for run in runs)
    for run in runs:  # known issues first, so that a new issue's first body links them
        run.issue = _pick(found[run.name])
    for run in runs:
        if run.failure is None:
            _ensure_open(run, spec, runs, update_note)
    for run in runs:
        if run.issue is not None and run.failure is None:
            _relink(run, runs)
    return tuple(run.outcome() for run in runs)


def _lookup(
    run: _Run,
    gh_for_repo: Callable[[str], github.Github],
    spec: IssueSpec,
    bot_login: str | None,
) -> list[Issue]:
    try:
        gh = gh_for_repo(run.name)
        run.login = bot_login or authenticated_login(gh)
        run.repo = gh.get_repo(run.name)
        return _find(run, spec)
    except GitHubFailure as failure:
        run.failure = failure
        return []


def _find(run: _Run, spec: IssueSpec) -> list[Issue]:
    """The bot's issues for this key, by listing (never search: its index lags)."""
    assert run.repo is not None
    marker = key_marker(spec.key)
    with github_step(f"list '{spec.label}' issues in {run.name}"):
        listed = list(run.repo.get_issues(state="all", labels=[spec.label]))
        return [
            issue
            for issue in listed
            if marker in (issue.body or "")
            and issue.user.login.lower() == run.login.lower()
            and "/pull/" not in issue.html_url
        ]


def _pick(matches: list[Issue]) -> Issue | None:
    """The issue that stands for the key: the oldest open one, else the newest closed one."""
    opened = sorted((i for i in matches if i.state == "open"), key=lambda i: i.number)
    closed = sorted((i for i in matches if i.state != "open"), key=lambda i: i.number)
    return opened[0] if opened else (closed[-1] if closed else None)


def _ensure_open(run: _Run, spec: IssueSpec, runs: list[_Run], note: str) -> None:
    issue = run.issue
    try:
        if issue is None:
            run.issue = _open_new(run, spec, runs, note)
            run.action = "opened"
        elif issue.state == "open":
            run.action = "commented" if _note(run, issue, note) else "unchanged"
        elif issue.state_reason == "not_planned":
            run.action = "unchanged"  # a maintainer closed it as not planned: leave it closed
        else:
            with github_step(f"reopen {run.name}#{issue.number}"):
                issue.edit(state="open")
            run.action = "opened"
            _note(run, issue, note)
    except GitHubFailure as failure:
        run.failure = failure


def _open_new(run: _Run, spec: IssueSpec, runs: list[_Run], note: str) -> Issue:
    assert run.repo is not None
    _ensure_label(run.repo, run.name, spec.label)
    body = (
        f"{key_marker(spec.key)}\n{note_marker(note)}\n{spec.body}\n\n"
        f"{links_section(runs, run.name)}"
    )
    try:
        with github_step(f"open issue in {run.name}"):
            return run.repo.create_issue(title=spec.title, body=body, labels=[spec.label])
    except GitHubFailure:
        # The issue may exist although the answer was an error: look before reporting.
        try:
            landed = _find(run, spec)
        except GitHubFailure:
            landed = []
        if not landed:
            raise
        return min(landed, key=lambda i: i.number)


def _ensure_label(repo: Repository, name: str, label: str) -> None:
    try:
        with github_step(f"look up label '{label}' in {name}"):
            repo.get_label(label).name  # noqa: B018 - the attribute read performs the GET
        return
    except GitHubFailure as failure:
        if failure.status != 404:
            raise
    try:
        with github_step(f"create label '{label}' in {name}"):
            repo.create_label(
                label, LABEL_COLOR, "Filed by fusion-perfbot (performance regression)"
            )
    except GitHubFailure as failure:
        if failure.status != 422:  # 422: created meanwhile by a concurrent run
            raise


def _note(run: _Run, issue: Issue, note: str) -> bool:
    """Post `note` unless it is already the bot's latest comment there; True when posted."""
    where = f"{run.name}#{issue.number}"
    with github_step(f"list comments on {where}"):
        latest = newest_own(list(issue.get_comments()), "", run.login)
    if latest is not None and same_text(latest.body, note):
        return False
    if latest is None and note_marker(note) in (issue.body or ""):
        return False  # the run that opened the issue said this already
    with github_step(f"comment on {where}"):
        issue.create_comment(note)
    return True


def _relink(run: _Run, runs: list[_Run]) -> None:
    assert run.issue is not None
    current = run.issue.body or ""
    wanted = with_links(current, links_section(runs, run.name))
    if same_text(current, wanted):
        return
    try:
        with github_step(f"link {run.name}#{run.issue.number} to the other issues"):
            run.issue.edit(body=wanted)
    except GitHubFailure as failure:
        run.failure = failure


def _recover(run: _Run, matches: list[Issue], note: str) -> None:
    opened = sorted((i for i in matches if i.state == "open"), key=lambda i: i.number)
    if not opened:
        run.action = "absent"
        return
    run.issue = opened[0]
    try:
        for issue in opened:  # duplicates left by older runs are the same regression
            _note(run, issue, note)
            with github_step(f"close {run.name}#{issue.number}"):
                issue.edit(state="closed", state_reason="completed")
        run.action = "closed"
    except GitHubFailure as failure:
        run.failure = failure
