"""GitHub's answer for the commits between two builds (bot/bisect/upstream.py reads it):
compare for two commits, the default branch's commits by date for two nightlies. Read-only:
the workflow's read token or none (the repositories are public)."""

from __future__ import annotations

import github

from bot.bisect.upstream import MAX_COMMITS, UpstreamCommit, UpstreamError, Window, in_order
from bot.github.client import github_step


def commits_between(gh: github.Github, window: Window) -> tuple[UpstreamCommit, ...]:
    with github_step(f"list the commits of {window.words}"):
        repo = gh.get_repo(window.repository)
        if window.base and window.head:
            found = repo.compare(window.base, window.head)
            if found.status not in ("ahead", "identical"):
                raise UpstreamError(
                    f"{window.head[:12]} does not descend from {window.base[:12]} in "
                    f"{window.repository} (compare says {found.status!r})"
                )
            if found.total_commits > MAX_COMMITS:
                raise UpstreamError(
                    f"{found.total_commits} commits between the builds: at most {MAX_COMMITS}"
                )
            items = [c.raw_data for c in found.commits]
            return in_order(window.repository, items, newest_first=False)
        assert window.since and window.until
        listing = repo.get_commits(sha="main", since=window.since, until=window.until)
        items = []
        for c in listing:
            items.append(c.raw_data)
            if len(items) > MAX_COMMITS:
                break
        return in_order(window.repository, items, newest_first=True)
