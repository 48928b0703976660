"""The fake's git history of a repository's default branch: what a test (or a saved
``git log`` of a real repository) says was committed, so that listing commits by date and
comparing two of them answer as GitHub does (the fake runs no git).

Its endpoints: fake/commits_routes.py (and compare in fake/pulls_routes.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.github.fake.state import State


@dataclass(frozen=True)
class GitCommit:
    sha: str
    message: str
    author_name: str
    date: datetime
    author_login: str | None = None  # None: the author's e-mail is no GitHub account's


@dataclass
class Commits:
    """Each repository's main line, oldest first; every method takes the state's lock."""

    state: State
    lines: dict[str, list[GitCommit]] = field(default_factory=dict)  # lower-case repo

    def add(self, repo: str, commits: Iterable[GitCommit]) -> None:
        """Append ``commits`` (oldest first) to ``repo``'s main line."""
        with self.state.lock:
            line = self.lines.setdefault(repo.lower(), [])
            for c in commits:
                if c.date.tzinfo is None:  # a naive time is UTC, as GitHub's are
                    c = replace(c, date=c.date.replace(tzinfo=timezone.utc))
                if c.author_login:
                    self.state.add_user(c.author_login)
                line.append(c)

    def line(self, repo: str) -> list[GitCommit]:
        with self.state.lock:
            return list(self.lines.get(repo.lower(), ()))

    def find(self, repo: str, sha: str) -> GitCommit | None:
        return next((c for c in self.line(repo) if c.sha == sha), None)

    def dated(self, repo: str, since: datetime | None, until: datetime | None) -> list[GitCommit]:
        """GitHub's ``since``/``until`` filter, newest first (both ends inclusive)."""
        hits = [
            c
            for c in self.line(repo)
            if (since is None or c.date >= since) and (until is None or c.date <= until)
        ]
        return hits[::-1]

    def between(self, repo: str, base: str, head: str) -> list[GitCommit] | None:
        """The commits after ``base`` up to ``head``, oldest first; None unless both are on
        the line with ``base`` first."""
        shas = [c.sha for c in self.line(repo)]
        if base not in shas or head not in shas or shas.index(base) > shas.index(head):
            return None
        return self.line(repo)[shas.index(base) + 1 : shas.index(head) + 1]
