"""One sticky comment per pull request: the bot edits its own comment instead of piling up new ones.

The comment is found by a hidden marker AND by its author: anybody can paste the marker into
a comment, and the bot must never edit what someone else wrote. Every page of comments is
read, because a busy PR pushes the bot's comment past the first page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import github
from github.IssueComment import IssueComment

from bot.github.client import GitHubFailure, authenticated_login, github_step

MAX_COMMENT_CHARS = 65536  # GitHub rejects longer bodies with 422


@dataclass(frozen=True)
class CommentOutcome:
    action: Literal["created", "updated", "unchanged"]
    url: str
    comment_id: int


def same_text(a: str | None, b: str | None) -> bool:
    """Equal up to line endings (GitHub may hand back CRLF for text it stored)."""
    return (a or "").replace("\r\n", "\n") == (b or "").replace("\r\n", "\n")


def with_marker(body: str, marker: str) -> str:
    """`body` guaranteed to carry `marker` (appended on its own line when absent)."""
    if not marker.strip() or "\n" in marker:
        raise ValueError("the comment marker must be a non-empty single line")
    full = body if marker in body else f"{body}\n\n{marker}"
    if len(full) > MAX_COMMENT_CHARS:
        raise ValueError(
            f"comment body has {len(full)} characters; GitHub accepts at most "
            f"{MAX_COMMENT_CHARS} (the renderer must truncate)"
        )
    return full


def newest_own(comments: list[IssueComment], marker: str, login: str) -> IssueComment | None:
    """The newest comment written by `login` that carries `marker`; older ones are history."""
    own = [
        c
        for c in comments
        if c.user is not None and c.user.login.lower() == login.lower() and marker in (c.body or "")
    ]
    return max(own, key=lambda c: c.id, default=None)


def upsert_sticky_comment(
    gh: github.Github,
    repo: str,
    pr_number: int,
    body: str,
    marker: str,
    *,
    bot_login: str | None = None,
) -> CommentOutcome:
    """Create, update in place, or leave unchanged the bot's comment on `repo`#`pr_number`.

    `bot_login` skips GET /user, which App and GITHUB_TOKEN tokens may not call; pass the
    account the token posts as (e.g. "github-actions[bot]"). Raises ValueError for a body
    GitHub would reject and GitHubFailure (naming the step) when GitHub fails.
    """
    full = with_marker(body, marker)
    login = bot_login or authenticated_login(gh)
    where = f"{repo}#{pr_number}"
    issue = gh.get_repo(repo).get_issue(pr_number)
    with github_step(f"list comments on {where}"):
        current = newest_own(list(issue.get_comments()), marker, login)
    if current is not None and same_text(current.body, full):
        return CommentOutcome("unchanged", current.html_url, current.id)
    if current is not None:
        try:
            with github_step(f"edit comment {current.id} on {where}"):
                current.edit(full)
            return CommentOutcome("updated", current.html_url, current.id)
        except GitHubFailure as failure:
            if failure.status != 404:
                raise
            # Deleted between listing and editing: post it again below.
    with github_step(f"create comment on {where}"):
        created = issue.create_comment(full)
    return CommentOutcome("created", created.html_url, created.id)
