"""The bisect's section on the linked issue: one comment of the bot's, found again by its
marker and its author, created once and edited in place (bot/github/sticky.py does the
finding, the race and the duplicates, exactly as for the PR comment).

The issue is named by its number, or by the key the ``pr`` flow filed it under
(bot/tell/issue.py ``issue_key``): found by listing the issues that carry the bot's label and
the key's hidden marker, opened by the bot's own login (bot/github/issues.py's rule; a human's
issue that quotes the marker is never touched).
"""

from __future__ import annotations

import github

from bot.github.client import authenticated_login, github_step
from bot.github.issue_find import own_keyed_issues, standing_issue
from bot.github.sticky import CommentOutcome, upsert_sticky_comment


class IssueNotFound(LookupError):
    """No issue of the bot's carries the key: nothing to add a section to."""


def find_issue(gh: github.Github, repo: str, key: str, label: str, login: str) -> int:
    """The bot's issue for ``key`` in ``repo``, chosen as the pr flow chooses it: the oldest
    open one, else the newest closed."""
    with github_step(f"list '{label}' issues in {repo}"):
        picked = standing_issue(own_keyed_issues(gh.get_repo(repo), repo, key, label, login))
    if picked is None:
        raise IssueNotFound(f"no issue of {login} in {repo} carries the key {key!r}")
    return picked.number


def post_section(
    gh: github.Github,
    repo: str,
    body: str,
    marker: str,
    *,
    number: int | None = None,
    key: str | None = None,
    label: str = "perf-regression-bot",
    bot_login: str | None = None,
) -> tuple[int, CommentOutcome]:
    """Create or update the section on issue ``number`` (or the key's issue); safe to repeat:
    the same body again leaves the comment unchanged."""
    login = bot_login or authenticated_login(gh)
    if number is None:
        if key is None:
            raise ValueError("an issue number or a key is needed")
        number = find_issue(gh, repo, key, label, login)
    with github_step(f"read issue {repo}#{number}"):
        is_pull = gh.get_repo(repo).get_issue(number).pull_request is not None
    if is_pull:
        raise IssueNotFound(f"{repo}#{number} is a pull request, not the linked issue")
    return number, upsert_sticky_comment(gh, repo, number, body, marker, bot_login=login)
