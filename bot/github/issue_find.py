"""Finding the bot's own issues for a key (bot/github/issues.py files and closes them).

Found by LISTING the repository's issues that carry the bot's label, every page, open and
closed, and reading the hidden key marker in each body: search is never used, as GitHub's
index lags new issues by seconds to minutes and a quick second run would file a duplicate.
Only an issue the bot's own login opened counts, never a pull request and never a human's
issue that quotes the marker (a lookalike).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote

import github
from github.Issue import Issue
from github.Repository import Repository

from bot.github.client import github_step
from bot.github.issue_body import KEY_MARKER, key_marker


def is_own_match(issue: Issue, marker: str, login: str) -> bool:
    """The bot's issue for a key: its key marker, opened by the bot's login, not a PR.

    The author check keeps the bot off a human's issue that quotes the marker (a lookalike):
    such an issue is never edited, commented on, closed or counted as a duplicate.
    """
    return (
        marker in (issue.body or "")
        and issue.user is not None
        and issue.user.login.lower() == login.lower()
        and "/pull/" not in issue.html_url
    )


def own_keyed_issues(
    repo: Repository, repo_name: str, key: str, label: str, login: str
) -> list[Issue]:
    """The bot's issues for this key, open or closed, by listing (never search: its index
    lags)."""
    marker = key_marker(key)
    with github_step(f"list '{label}' issues in {repo_name}"):
        listed = list(repo.get_issues(state="all", labels=[label]))
        return [issue for issue in listed if is_own_match(issue, marker, login)]


_MARKED_KEY = re.compile(re.escape(KEY_MARKER).replace(re.escape("{}"), r"(\S+)"))


def own_open_keyed(
    gh: github.Github, repo_name: str, label: str, login: str
) -> list[tuple[str, Issue]]:
    """The bot's open issues labelled `label` in `repo_name`, each with the key its marker
    names, found as a sync finds its own (by listing; the key marker AND the bot's login,
    never a PR, never a human's copy). A folded duplicate, its marker retired, is none."""
    with github_step(f"list open '{label}' issues in {repo_name}"):
        listed = list(gh.get_repo(repo_name).get_issues(state="open", labels=[label]))
    out = []
    for issue in sorted(listed, key=lambda i: i.number):
        found = _MARKED_KEY.search(issue.body or "")
        key = unquote(found.group(1)) if found else None
        if key and is_own_match(issue, key_marker(key), login):
            out.append((key, issue))
    return out


def open_ones(matches: Sequence[Issue]) -> list[Issue]:
    return sorted((i for i in matches if i.state == "open"), key=lambda i: i.number)


def standing_issue(matches: Sequence[Issue]) -> Issue | None:
    """The issue that stands for the key: the oldest open one, else the newest closed one."""
    opened = open_ones(matches)
    closed = sorted((i for i in matches if i.state != "open"), key=lambda i: i.number)
    return opened[0] if opened else (closed[-1] if closed else None)
