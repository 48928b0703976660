"""Operations on one issue that the linked-issue sync is built from: the bot's label, a note
that is never posted twice, and the folding of a duplicate into the issue that stands.

Each takes the repository's name and the bot's login explicitly, so that it can be read (and
tested) without the sync's bookkeeping (bot/github/issues.py).
"""

from __future__ import annotations

from github.Issue import Issue
from github.Repository import Repository

from bot.github.client import GitHubFailure, github_step
from bot.github.issue_body import as_duplicate, note_marker, read_note
from bot.github.sticky import delete_own, newest_own, own_comments, same_text

LABEL_COLOR = "d93f0b"


def ensure_label(repo: Repository, name: str, label: str) -> None:
    """The bot's label exists in `name` (created when missing; a concurrent create is fine)."""
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


def post_note(repo_name: str, login: str, issue: Issue, note: str) -> bool:
    """Post `note` unless it is already the bot's latest comment there; True when posted.

    After posting, the comments are listed again: when a concurrent twin posted the same
    note, the newer copy is deleted (the older stays, as with the sticky comment).
    """
    where = f"{repo_name}#{issue.number}"
    with github_step(f"list comments on {where}"):
        latest = newest_own(list(issue.get_comments()), "", login)
    if latest is not None and same_text(latest.body, note):
        return False
    if latest is None and read_note(issue.body) == note_marker(note):
        return False  # the run that opened the issue said this already
    with github_step(f"comment on {where}"):
        posted = issue.create_comment(note)
    with github_step(f"list comments on {where}"):
        own = own_comments(list(issue.get_comments()), "", login)
    twins = [c for c in own if c.id > (latest.id if latest else 0) and same_text(c.body, note)]
    if len(twins) > 1 and posted.id != twins[0].id:
        delete_own(posted, where)
    return True


def fold_duplicate(
    repo_name: str, login: str, duplicate: Issue, canonical: Issue, key: str
) -> None:
    """Close one of the bot's duplicates, pointing at the issue that stands for the key, and
    retire its key marker so that no later run finds (or reopens) it by the key."""
    ref = f"{repo_name}#{canonical.number}"
    post_note(
        repo_name,
        login,
        duplicate,
        f"Closed as a duplicate of {ref}: two runs of the bot filed this regression at the "
        f"same moment, and {ref} (the older) tracks it.",
    )
    body = as_duplicate(duplicate.body or "", key, ref)
    with github_step(f"close duplicate {repo_name}#{duplicate.number}"):
        duplicate.edit(body=body, state="closed", state_reason="not_planned")
