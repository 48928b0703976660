"""Linked issues across repositories, one per key and repository, never two.

An issue is found again by listing the bot's labelled issues and reading a hidden key marker
(bot/github/issue_find.py: never search, whose index lags). Removing the label from an issue
is how a maintainer detaches it from the bot. Only issues the bot itself opened count: a
human's issue is never edited or closed.

The first repository gets the primary issue, the others a short linked one; each links the
others. The link section sits between hidden markers and is rewritten from scratch every run,
so a link that could not be made (a repository failed, or a run crashed between two creates)
is written down as missing and repaired by the next run: the same call repeated converges.

A closed issue stays closed, however it was closed: the bot never reopens one (a maintainer's
close is their decision). An open issue's body is kept up to date without a notification;
a comment is posted only when there is news (the caller's ``news``: a section joined or got
clearly worse), and on a close, with the reason. A note identical to the bot's latest comment
there is not posted again ("unchanged").

Two runs on the same PR at the same moment may both find nothing and both file. So a run that
filed an issue lists again, and where an older issue with the same key exists (from the same
bot account) it adopts the older one and folds its own: a closing comment that points at the
older issue, the key marker swapped for a duplicate-of mark, closed as not planned. Both runs
apply the same rule (the OLDEST open issue stands), so they agree; duplicates left by earlier
races are folded the same way by the next run, which says so in its outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import github
from github.Issue import Issue
from github.Repository import Repository

from bot.github.client import GitHubFailure, authenticated_login, github_step
from bot.github.issue_body import (
    Link,
    links_section,
    note_marker,
    read_note,
    read_sizes,
    sizes_marker,
    trailer,
    validate,
    with_hidden,
    with_links,
)
from bot.github.issue_find import open_ones, own_keyed_issues, standing_issue
from bot.github.issue_ops import ensure_label, fold_duplicate, post_note
from bot.github.sticky import same_text
from bot.tell.issue import IssueSpec
from bot.tell.markdown import no_markers

Action = Literal["opened", "commented", "closed", "left closed", "unchanged", "absent", "failed"]
#: file: open when missing, keep an open one up to date; update: the same but open nothing;
#: recover: close as completed; acknowledge, abandon: close as not planned; hold: touch nothing;
#: note: post the note on an open issue, open or close nothing (the main-branch watch's hold).
SyncAction = Literal["file", "update", "recover", "acknowledge", "abandon", "hold", "note"]
#: news(sizes the issue last showed, None when unknown; whether it is closed) -> a comment to
#: post, or None. Closed issues get one only when the alert got clearly worse.
News = Callable[[Mapping[str, float] | None, bool], str | None]
_CLOSE_REASON = {"recover": "completed", "acknowledge": "not_planned", "abandon": "not_planned"}


@dataclass(frozen=True)
class RepoIssueOutcome:
    """What exists now in one repository.

    opened: a new issue was filed. left closed: the key's issue is closed and stays so (the
    bot never reopens one). failed: a step failed (`error` says which); `number`/`url` are
    still set when the issue exists anyway. `folded`: numbers of the bot's own duplicates for
    this key that this run closed.
    """

    repo: str
    action: Action
    number: int | None
    url: str | None
    error: str | None = None
    folded: tuple[int, ...] = ()


@dataclass
class _Run:
    """One repository's progress during a sync."""

    name: str
    repo: Repository | None = None
    login: str = ""
    issue: Issue | None = None
    action: Action | None = None
    failure: GitHubFailure | None = None
    filed: bool = False  # this run created run.issue (so a concurrent twin may have too)
    told: bool = False  # this run posted news on a closed issue: its sizes marker moves on
    folded: list[int] = field(default_factory=list)

    def outcome(self) -> RepoIssueOutcome:
        number = self.issue.number if self.issue is not None else None
        url = self.issue.html_url if self.issue is not None else None
        folded = tuple(self.folded)
        if self.failure is not None:
            return RepoIssueOutcome(self.name, "failed", number, url, str(self.failure), folded)
        assert self.action is not None
        return RepoIssueOutcome(self.name, self.action, number, url, None, folded)

    def link(self) -> Link:
        if self.issue is not None:
            return Link(self.name, self.issue.number, self.issue.html_url)
        status = None if self.failure is None else (self.failure.status or 0)
        return Link(self.name, failed_status=status)


def _links(runs: Sequence[_Run], this_repo: str) -> str:
    return links_section([run.link() for run in runs], this_repo)


def sync_issues(
    gh_for_repo: Callable[[str], github.Github],
    spec: IssueSpec,
    action: SyncAction,
    note: str = "",
    *,
    bot_login: str | None = None,
    news: News | None = None,
) -> tuple[RepoIssueOutcome, ...]:
    """Bring every repository's issue for `spec.key` in line with `action`; safe to repeat.

    file/update: an open issue's body is brought up to date and it gets `news`'s comment, if
    any; a closed one stays closed (its comment only when clearly worse); a missing one is
    opened by "file" only; then each repository is left with one open issue for the key (the
    oldest; see the module docstring). recover/acknowledge/abandon: open issues get `note`
    and are closed (completed, not planned, not planned); none open gives "absent". hold
    touches nothing; note posts `note` on the oldest open issue. Only issues opened by the
    bot's own login are ever touched.
    `gh_for_repo` may raise GitHubFailure (e.g. no token for that repository): that
    repository fails, the others proceed. `bot_login` skips GET /user (see
    `authenticated_login`). Outcomes follow `spec.repos`' order.
    """
    validate(spec, action, note)
    runs = [_Run(name) for name in spec.repos]
    found = {run.name: _lookup(run, gh_for_repo, spec, bot_login) for run in runs}
    if action in _CLOSE_REASON or action in ("hold", "note"):
        for run in runs:
            if run.failure is None:
                matches = found[run.name]
                if action in _CLOSE_REASON:
                    _close(run, matches, note, _CLOSE_REASON[action])
                else:
                    _hold(run, matches, note if action == "note" else None)
        return tuple(run.outcome() for run in runs)
    for run in runs:  # known issues first, so that a new issue's first body links them
        run.issue = standing_issue(found[run.name])
    for run in runs:
        if run.failure is None:
            _ensure(run, spec, runs, action == "file", news)
    for run in runs:
        if run.failure is None and run.issue is not None and run.issue.state == "open":
            _settle(run, spec, found[run.name], news)
    _follow_the_primary(runs)
    for run in runs:
        if run.issue is not None and run.failure is None:
            _rewrite(run, spec, runs)
    return tuple(run.outcome() for run in runs)


def _follow_the_primary(runs: list[_Run]) -> None:
    """A linked issue closes with its primary one: a maintainer who closes the primary issue
    (the bot never does while the alert stands) has decided for both."""
    primary = runs[0].issue
    if primary is None or runs[0].failure is not None or primary.state == "open":
        return
    reason = primary.state_reason or "completed"
    ref = f"{runs[0].name}#{primary.number}"
    for run in runs[1:]:
        if run.failure is not None or run.issue is None or run.issue.state != "open":
            continue
        note = f"Closed with its primary issue {ref}, which a maintainer closed ({reason})."
        try:
            post_note(run.name, run.login, run.issue, note)
            with github_step(f"close {run.name}#{run.issue.number} with {ref}"):
                run.issue.edit(state="closed", state_reason=reason)
            run.action = "closed"
        except GitHubFailure as failure:
            run.failure = failure


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
    assert run.repo is not None
    return own_keyed_issues(run.repo, run.name, spec.key, spec.label, run.login)


def _ensure(
    run: _Run, spec: IssueSpec, runs: list[_Run], may_open: bool, news: News | None
) -> None:
    issue = run.issue
    try:
        if issue is None:
            if may_open:
                opening = news(None, False) if news is not None else None
                run.issue = _open_new(run, spec, runs, opening)
                run.action, run.filed = "opened", True
            else:
                run.action = "absent"
            return
        closed = issue.state != "open"
        told = news(read_sizes(issue.body or ""), closed) if news is not None else None
        if told and post_note(run.name, run.login, issue, told):
            run.action, run.told = "commented", closed
        else:
            run.action = "left closed" if closed else "unchanged"
    except GitHubFailure as failure:
        run.failure = failure


def _settle(run: _Run, spec: IssueSpec, found: list[Issue], news: News | None) -> None:
    """Leave one open issue for the key here: the oldest; fold the bot's other open ones.

    A run that filed lists again, since a concurrent twin may have filed too; otherwise the
    first listing shows every duplicate that an earlier race left.
    """
    assert run.issue is not None
    try:
        opened = open_ones(_find(run, spec) if run.filed else found)
        if not opened:
            return
        canonical = opened[0]
        if canonical.number != run.issue.number:  # the twin filed first: its issue stands
            run.issue, run.filed = canonical, False
            told = news(read_sizes(canonical.body or ""), False) if news is not None else None
            posted = bool(told) and post_note(run.name, run.login, canonical, str(told))
            run.action = "commented" if posted else "unchanged"
        for duplicate in opened[1:]:
            fold_duplicate(run.name, run.login, duplicate, canonical, spec.key)
            run.folded.append(duplicate.number)
    except GitHubFailure as failure:
        run.failure = failure


def _compose(
    spec: IssueSpec, repo: str, links: str, current: str = "", opening: str | None = None
) -> str:
    """The whole body: the evidence (no marker of the bot's can stand in it, whatever text
    reached it), the link section, then the hidden trailer (the digest of the note its opening
    made unneeded, kept from the current body; the sizes; the key the very last line)."""
    note = read_note(current) or (note_marker(opening) if opening else None)
    evidence = no_markers(spec.body_for(repo))
    return f"{evidence}\n\n{links}\n{trailer(spec.key, note, spec.sizes)}"


def _open_new(run: _Run, spec: IssueSpec, runs: list[_Run], opening: str | None) -> Issue:
    """A new issue; `opening`: the news a first run would post at once, recorded as said."""
    assert run.repo is not None
    ensure_label(run.repo, run.name, spec.label)
    body = _compose(spec, run.name, _links(runs, run.name), opening=opening)
    try:
        with github_step(f"open issue in {run.name}"):
            return run.repo.create_issue(
                title=spec.title_for(run.name), body=body, labels=[spec.label]
            )
    except GitHubFailure:
        # The issue may exist although the answer was an error: look before reporting.
        try:
            landed = _find(run, spec)
        except GitHubFailure:
            landed = []
        if not landed:
            raise
        return min(landed, key=lambda i: i.number)


def _rewrite(run: _Run, spec: IssueSpec, runs: list[_Run]) -> None:
    """An open issue's body and title as this run would write them (no notification); a
    closed one only when this run told it news (its sizes marker moves on), links alone."""
    assert run.issue is not None
    current = run.issue.body or ""
    links = _links(runs, run.name)
    if run.issue.state != "open":
        if not run.told:
            return
        wanted = with_links(_with_sizes(current, spec), links)
        title = run.issue.title
    else:
        wanted, title = _compose(spec, run.name, links, current), spec.title_for(run.name)
    if same_text(current, wanted) and run.issue.title == title:
        return
    try:
        with github_step(f"update {run.name}#{run.issue.number} (body and links)"):
            run.issue.edit(body=wanted, title=title)
    except GitHubFailure as failure:
        run.failure = failure


def _with_sizes(body: str, spec: IssueSpec) -> str:
    return with_hidden(body, "sizes", sizes_marker(spec.sizes))


def _adopt_open(run: _Run, matches: list[Issue]) -> list[Issue]:
    """The open ones of the matches, the oldest as the run's issue; none: "absent"."""
    opened = open_ones(matches)
    if opened:
        run.issue = opened[0]
    else:
        run.action = "absent"
        closed = [i for i in matches if i.state != "open"]
        if closed:
            run.issue, run.action = max(closed, key=lambda i: i.number), "left closed"
    return opened


def _close(run: _Run, matches: list[Issue], note: str, reason: str) -> None:
    opened = _adopt_open(run, matches)
    if not opened:
        return
    try:
        for issue in opened:  # duplicates left by older runs are the same regression
            post_note(run.name, run.login, issue, note)
            with github_step(f"close {run.name}#{issue.number}"):
                issue.edit(state="closed", state_reason=reason)
        run.action = "closed"
    except GitHubFailure as failure:
        run.failure = failure


def _hold(run: _Run, matches: list[Issue], note: str | None) -> None:
    opened = _adopt_open(run, matches)
    if not opened:
        return
    if note is None:
        run.action = "unchanged"
        return
    try:
        posted = post_note(run.name, run.login, opened[0], note)
        run.action = "commented" if posted else "unchanged"
    except GitHubFailure as failure:
        run.failure = failure
