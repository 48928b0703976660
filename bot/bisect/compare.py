"""Where a maintainer reads what changed between the last good and the first bad build (pure).

Both builds at a known commit of the package's repository (git specs): GitHub's compare view
of the two commits. Both dated (a nightly's ``devYYYYMMDD``, a release's wheel build day as its
key carries it): the repository's commits between the two build dates, since a nightly is
built from the default branch on its date. Otherwise the two builds are named and nothing is
linked: a guessed link would send the reader to the wrong changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from bot.results.limits import REPOSITORY

if TYPE_CHECKING:  # the bisect's builds; the watch gives Ends (no spec parser where it runs)
    from bot.bisect.timeline import Build

#: Where each package's own history lives, when a spec does not say (a wheel, a version).
REPOSITORIES = {"thunder": "Lightning-AI/lightning-thunder", "nvfuser": "NVIDIA/Fuser"}
#: The only two links this module makes; a comment links nothing else of its making.
_SAFE = re.compile(
    r"https://github\.com/[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}/"
    r"(?:compare/[0-9a-f]{40}\.\.\.[0-9a-f]{40}"
    r"|commits/main/\?since=[0-9]{4}-[0-9]{2}-[0-9]{2}&until=[0-9]{4}-[0-9]{2}-[0-9]{2})"
)


@dataclass(frozen=True)
class Changes:
    """What changed between two builds: a link (None when none can be made honestly) and its
    words."""

    url: str | None
    text: str

    def markdown(self, label: str) -> str:
        """``label`` linked to the changes, where the link is one this module made."""
        return f"[{label}]({self.url})" if self.url and _SAFE.fullmatch(self.url) else label


@dataclass(frozen=True)
class End:
    """One end of a range, as much as is known of it: how it is named, its repository and
    commit (a git build), its build day (a nightly's name, a release's wheel) and whether that
    day is the nightly's own (its version names it)."""

    name: str
    repository: str | None = None
    commit: str | None = None
    day: date | None = None
    nightly: bool = False


def end_of(build: Build) -> End:
    spec = build.spec
    return End(build.name, spec.repository, spec.commit, build.day, build.named_day is not None)


def changes(package: str, last_good: Build, first_bad: Build) -> Changes:
    return changes_between(package, end_of(last_good), end_of(first_bad))


def changes_between(package: str, g: End, b: End) -> Changes:
    """The bisect's and the watch's: the watch knows its builds from their records (it runs
    where only the bot is installed, so nothing here reads a spec)."""
    if g.repository and g.repository == b.repository and g.commit and b.commit:
        return Changes(
            f"https://github.com/{g.repository}/compare/{g.commit}...{b.commit}",
            f"{g.repository} compare {g.commit[:12]}...{b.commit[:12]}",
        )
    repo = b.repository or g.repository or REPOSITORIES.get(package)
    if repo is None or not REPOSITORY.fullmatch(repo):
        return Changes(None, f"no repository is known for {package}")
    if g.day is not None and b.day is not None:
        # A release's day is its wheel's: a nightly built later that day may hold its commits.
        builds = "nightlies" if g.nightly and b.nightly else "builds"
        since, until = g.day.isoformat(), b.day.isoformat()
        return Changes(
            f"https://github.com/{repo}/commits/main/?since={since}&until={until}",
            f"{repo} commits on main from {since} to {until} (the two {builds}' build dates)",
        )
    return Changes(
        None,
        f"no commits or build dates are known for {g.name} and {b.name}: "
        "compare the two builds by hand",
    )
