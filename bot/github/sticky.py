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
    """What the PR shows now: the one comment kept, and the duplicates removed on the way."""

    action: Literal["created", "updated", "unchanged"]
    url: str
    comment_id: int
    removed: tuple[int, ...] = ()  # ids of the bot's own duplicates that were deleted


def same_text(a: str | None, b: str | None) -> bool:
    """Equal up to line endings (GitHub may hand back CRLF for text it stored)."""
    return (a or "").replace("\r\n", "\n") == (b or "").replace("\r\n", "\n")


def with_marker(body: str, marker: str) -> str:
    """`body` starting with `marker`, the marker's place (put there, on a line of its own,
    when absent)."""
    if not marker.strip() or "\n" in marker:
        raise ValueError("the comment marker must be a non-empty single line")
    full = body if body.startswith(marker) else f"{marker}\n{body}"
    if len(full) > MAX_COMMENT_CHARS:
        raise ValueError(
            f"comment body has {len(full)} characters; GitHub accepts at most "
            f"{MAX_COMMENT_CHARS} (the renderer must truncate)"
        )
    return full


def own_comments(comments: list[IssueComment], marker: str, login: str) -> list[IssueComment]:
    """The comments written by `login` that start with `marker` (any of its comments for ""),
    oldest first.

    The author check is what keeps the bot off a human's comment that quotes the marker; the
    place, off one of its own comments that holds the marker's text elsewhere.
    """
    own = [
        c
        for c in comments
        if c.user is not None
        and c.user.login.lower() == login.lower()
        and (c.body or "").startswith(marker)
    ]
    return sorted(own, key=lambda c: c.id)


def newest_own(comments: list[IssueComment], marker: str, login: str) -> IssueComment | None:
    """The newest comment written by `login` that carries `marker`."""
    own = own_comments(comments, marker, login)
    return own[-1] if own else None


def delete_own(comment: IssueComment, where: str) -> bool:
    """Delete one of the bot's own comments; False when it was gone already (404)."""
    try:
        with github_step(f"delete duplicate comment {comment.id} on {where}"):
            comment.delete()
        return True
    except GitHubFailure as failure:
        if failure.status != 404:
            raise
        return False


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

    Exactly one of the bot's comments with `marker` is left: the OLDEST. Two runs on one PR
    at the same moment may both find none and both post; so after posting, the comments are
    listed again, and a run whose comment is not the oldest moves its body into the oldest
    and deletes its own. Both runs apply the same rule, so they agree on which one stays;
    duplicates left by an earlier race are deleted the same way. `bot_login` skips GET /user,
    which App and GITHUB_TOKEN tokens may not call; pass the account the token posts as (e.g.
    "github-actions[bot]"). Raises ValueError for a body GitHub would reject and
    GitHubFailure (naming the step) when GitHub fails.
    """
    full = with_marker(body, marker)
    login = bot_login or authenticated_login(gh)
    where = f"{repo}#{pr_number}"
    issue = gh.get_repo(repo).get_issue(pr_number)

    def listed() -> list[IssueComment]:
        with github_step(f"list comments on {where}"):
            return own_comments(list(issue.get_comments()), marker, login)

    def create() -> IssueComment:
        with github_step(f"create comment on {where}"):
            return issue.create_comment(full)

    candidates, created = listed(), None
    if not candidates:
        created = create()
        candidates = listed() or [created]  # a concurrent run may have posted meanwhile
    action: Literal["created", "updated", "unchanged"] | None = None
    while candidates and action is None:
        keep = candidates[0]
        if created is not None and keep.id == created.id:
            action = "created"
        elif same_text(keep.body, full):
            action = "unchanged"
        else:
            try:
                with github_step(f"edit comment {keep.id} on {where}"):
                    keep.edit(full)
                action = "updated"
            except GitHubFailure as failure:
                if failure.status != 404:
                    raise
                candidates = candidates[1:]  # deleted meanwhile: the next oldest stays
    if action is None:  # every candidate was deleted under us: post it again
        created = create()
        candidates, action = [created], "created"
    keep = candidates[0]
    removed = tuple(c.id for c in candidates[1:] if delete_own(c, where))
    return CommentOutcome(action, keep.html_url, keep.id, removed)
