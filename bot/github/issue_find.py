"""Finding the bot's own issues for a key (bot/github/issues.py files and closes them).

Found by LISTING the repository's issues that carry the bot's label, every page, open and
closed, and reading the key from the hidden trailer of each body, its place (never a search of
the body for the marker's text, which untrusted text in it could carry). Search is never used:
GitHub's index lags new issues by seconds to minutes and a quick second run would file a
duplicate. Only an issue the bot's own login opened counts, never a pull request and never a
human's issue that quotes the marker (a lookalike).
"""

from __future__ import annotations

from collections.abc import Sequence

import github
from github.Issue import Issue
from github.Repository import Repository

from bot.github.client import github_step
from bot.github.issue_body import key_of


def is_own_match(issue: Issue, key: str, login: str) -> bool:
    """The bot's issue for a key: the key its own marker names (read from its place in the
    body, bot/github/issue_body.py ``hidden``, and compared for equality: a marker quoted
    anywhere else in a body is text), opened by the bot's login, not a PR.

    The author check keeps the bot off a human's issue that quotes the marker (a lookalike):
    such an issue is never edited, commented on, closed or counted as a duplicate.
    """
    return (
        key_of(issue.body) == key
        and issue.user is not None
        and issue.user.login.lower() == login.lower()
        and "/pull/" not in issue.html_url
    )


def own_keyed_issues(
    repo: Repository, repo_name: str, key: str, label: str, login: str
) -> list[Issue]:
    """The bot's issues for this key, open or closed, by listing (never search: its index
    lags)."""
    with github_step(f"list '{label}' issues in {repo_name}"):
        listed = list(repo.get_issues(state="all", labels=[label]))
        return [issue for issue in listed if is_own_match(issue, key, login)]


def own_open_keyed(
    gh: github.Github, repo_name: str, label: str, login: str
) -> list[tuple[str, Issue]]:
    """The bot's open issues labelled `label` in `repo_name`, each with the key its marker
    names, found as a sync finds its own (by listing; the key in its place AND the bot's
    login, never a PR, never a human's copy). A folded duplicate, its marker retired, is none."""
    with github_step(f"list open '{label}' issues in {repo_name}"):
        listed = list(gh.get_repo(repo_name).get_issues(state="open", labels=[label]))
    out = []
    for issue in sorted(listed, key=lambda i: i.number):
        key = key_of(issue.body)
        if key and is_own_match(issue, key, login):
            out.append((key, issue))
    return out


def open_ones(matches: Sequence[Issue]) -> list[Issue]:
    return sorted((i for i in matches if i.state == "open"), key=lambda i: i.number)


def standing_issue(matches: Sequence[Issue]) -> Issue | None:
    """The issue that stands for the key: the oldest open one, else the newest closed one."""
    opened = open_ones(matches)
    closed = sorted((i for i in matches if i.state != "open"), key=lambda i: i.number)
    return opened[0] if opened else (closed[-1] if closed else None)
