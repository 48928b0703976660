"""Where a maintainer reads what changed between the last good and the first bad build (pure).

Both builds at a known commit of the package's repository (git specs): GitHub's compare view
of the two commits. Both nightlies (a ``devYYYYMMDD`` in the version): the repository's
commits between the two build dates, since a nightly is built from the default branch on its
date. Otherwise the two builds are named and nothing is linked: a guessed link would send the
reader to the wrong changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.bisect.timeline import Build
from bot.results.limits import REPOSITORY

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


def changes(package: str, last_good: Build, first_bad: Build) -> Changes:
    g, b = last_good.spec, first_bad.spec
    if g.repository and g.repository == b.repository and g.commit and b.commit:
        return Changes(
            f"https://github.com/{g.repository}/compare/{g.commit}...{b.commit}",
            f"{g.repository} compare {g.commit[:12]}...{b.commit[:12]}",
        )
    repo = b.repository or g.repository or REPOSITORIES.get(package)
    if repo is None or not REPOSITORY.fullmatch(repo):
        return Changes(None, f"no repository is known for {package}")
    gd, bd = last_good.day, first_bad.day
    if gd is not None and bd is not None:
        return Changes(
            f"https://github.com/{repo}/commits/main/?since={gd.isoformat()}&until={bd.isoformat()}",
            f"{repo} commits on main from {gd.isoformat()} to {bd.isoformat()} "
            "(the two nightlies' build dates)",
        )
    return Changes(
        None,
        f"no commits or build dates are known for {last_good.name} and {first_bad.name}: "
        "compare the two builds by hand",
    )
