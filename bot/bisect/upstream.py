"""The upstream commits between two builds of a package (pure): which range to ask GitHub
for, how its answer reads, and the git specs a bisect installs them from.

Two git builds of one repository: the commits of ``compare base...head``. Two nightlies
(``devYYYYMMDD``, built from the default branch on that date): the default branch's commits
from the known-good build's date to the known-bad build's, whole days, since a wheel says only
its day; a commit of the known-good build's own day may already be in it, and is then
measured good, which costs a step and never misleads (one step is assumed along the main
line, and the main line is what the commits are). Anything else has no range: it is said, and
the bisect runs over the builds it was given.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import Any

from benchmarks.under_test.keys import nightly_date
from benchmarks.under_test.spec import Spec
from bot.bisect.compare import REPOSITORIES
from bot.results.limits import REPOSITORY

_SHA = re.compile(r"[0-9a-f]{40}")
#: A longer range is not a nightly's week or two: the builds are too far apart to bisect.
MAX_COMMITS = 500


class UpstreamError(ValueError):
    """GitHub's answer is not a list of commits of the range asked for."""


@dataclass(frozen=True)
class UpstreamCommit:
    repository: str
    sha: str
    title: str  # the message's first line
    author_name: str
    author_login: str | None  # None where the author's e-mail is no GitHub account's
    date: str  # ISO 8601, the author's

    @property
    def url(self) -> str:
        """Made from the repository and the sha alone, never from an answer's own URL."""
        return f"https://github.com/{self.repository}/commit/{self.sha}"

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "sha": self.sha,
            "title": self.title,
            "author_name": self.author_name,
            "author_login": self.author_login,
            "date": self.date,
        }


@dataclass(frozen=True)
class Window:
    """The range of one repository's commits between two builds."""

    repository: str
    base: str | None = None  # compare base...head (git builds)
    head: str | None = None
    since: datetime | None = None  # the default branch's commits by date (nightlies)
    until: datetime | None = None

    @property
    def words(self) -> str:
        if self.base and self.head:
            return f"{self.repository} compare {self.base[:12]}...{self.head[:12]}"
        assert self.since and self.until
        return (
            f"{self.repository} commits on main from {self.since.date().isoformat()} to "
            f"{self.until.date().isoformat()} (the two nightlies' build dates)"
        )


def _day(spec: Spec) -> date | None:
    return nightly_date(spec.version) if spec.version else None


def window_of(package: str, good: Spec, bad: Spec) -> Window | str:
    """The commits' range, or why there is none."""
    if good.kind == "git" and bad.kind == "git":
        if good.repository is None or good.repository != bad.repository:
            return "the two git builds are not of one GitHub repository"
        assert good.commit and bad.commit
        return Window(good.repository, base=good.commit, head=bad.commit)
    repo = REPOSITORIES.get(package)
    gd, bd = _day(good), _day(bad)
    if repo is None or not REPOSITORY.fullmatch(repo):
        return f"no repository is known for {package}"
    if gd is None or bd is None:
        return (
            f"{good.shown()} and {bad.shown()} are not both nightlies (a devYYYYMMDD version) "
            "nor both git builds: their commits are not known"
        )
    if bd < gd:
        return f"{bad.shown()} was built before {good.shown()}"
    since = datetime.combine(gd, time(0, 0, 0), timezone.utc)
    until = datetime.combine(bd, time(23, 59, 59), timezone.utc)
    return Window(repo, since=since, until=until)


def _text(item: Mapping[str, Any], *keys: str) -> str | None:
    value: Any = item
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) else None


def read_commit(repository: str, item: Mapping[str, Any]) -> UpstreamCommit:
    """One commit of GitHub's answer (list commits, or compare's ``commits``)."""
    sha = _text(item, "sha")
    if sha is None or not _SHA.fullmatch(sha):
        raise UpstreamError(f"a commit of {repository} without a 40-hex sha: {str(sha)[:50]!r}")
    message = _text(item, "commit", "message") or ""
    login = _text(item, "author", "login")
    return UpstreamCommit(
        repository,
        sha,
        (message.splitlines() or [""])[0][:200],
        (_text(item, "commit", "author", "name") or "unknown")[:100],
        login[:39] if login else None,
        _text(item, "commit", "author", "date") or "",
    )


def in_order(
    repository: str, items: Sequence[Mapping[str, Any]], *, newest_first: bool
) -> tuple[UpstreamCommit, ...]:
    """The commits oldest first (list commits answers newest first, compare oldest first)."""
    commits = [read_commit(repository, i) for i in items]
    if len(commits) > MAX_COMMITS:
        raise UpstreamError(
            f"{len(commits)} commits between the builds: at most {MAX_COMMITS} are bisected"
        )
    if len({c.sha for c in commits}) != len(commits):
        raise UpstreamError(f"{repository}'s answer names a commit twice")
    return tuple(reversed(commits)) if newest_first else tuple(commits)


def commit_spec(commit: UpstreamCommit, git_url: str | None = None) -> str:
    """How a bisect installs the commit: ``git+URL@SHA`` of GitHub, or of a mirror (a runner
    that reaches no GitHub, a local clone)."""
    url = git_url or f"https://github.com/{commit.repository}"
    return f"git+{url}@{commit.sha}"


def read_commits(data: Sequence[Mapping[str, Any]]) -> tuple[UpstreamCommit, ...]:
    """The ``commits`` of a plan file, as ``UpstreamCommit.to_json`` wrote them."""
    out = []
    for item in data:
        repo = _text(item, "repository") or ""
        sha = _text(item, "sha") or ""
        if not REPOSITORY.fullmatch(repo) or not _SHA.fullmatch(sha):
            raise UpstreamError(
                f"a planned commit names no repository and sha: {dict(item)!r}"[:200]
            )
        out.append(
            UpstreamCommit(
                repo,
                sha,
                _text(item, "title") or "",
                _text(item, "author_name") or "unknown",
                _text(item, "author_login"),
                _text(item, "date") or "",
            )
        )
    return tuple(out)
