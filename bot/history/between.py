"""Which upstream commits lie between a main-branch alert's two builds (pure), where the
history is of a package under test (builds measured by ``benchmarks.under_test``: nightlies,
releases, git commits): the two versions, and where their changes are on GitHub.

Why: a history of Thunder's nightlies has no commits of its own (each build's key is made, not
a commit anyone can open), so "last good 3f2a.., first bad 9c1d.." tells a maintainer nothing.
The builds' versions and the commits between their build dates do. The link is the bisect's
(bot/bisect/compare.py): GitHub's compare view of two git builds, else the commits on main
between the two build dates, each build dated by its key (the nightly's ``devYYYYMMDD``, a
release's wheel build day: benchmarks/under_test/keys.py), as asv stored it in the results.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timezone

from bot.bisect.compare import End, changes_between
from bot.history.series import Commit, History
from bot.tell.markdown import escape_md

PACKAGE_TITLES = {"thunder": "Thunder", "nvfuser": "nvFuser"}
#: A key's date when its build had none (benchmarks/under_test/keys.py ``UNDATED``, a test
#: holds the two equal): no day to link commits from. Not imported: the watch runs where only
#: the bot is installed.
UNDATED = date(2000, 1, 1)
_NIGHTLY = re.compile(r"dev20[0-9]{6}")
_HEX40 = re.compile(r"[0-9a-f]{40}")


def _build(commit: Commit) -> tuple[str, str, End] | None:
    """The package, version and end of a commit's first run; None for a commit of this
    repository (no package-under-test record)."""
    prov = commit.runs[0].provenance if commit.runs else None
    if prov is None:
        return None
    package, version = prov.text("under_test", "package"), prov.text("under_test", "version")
    if package is None or version is None:
        return None
    vcs = prov.text("under_test", "vcs_commit")
    git = prov.text("under_test", "kind") == "git" and vcs is not None and _HEX40.fullmatch(vcs)
    day = datetime.fromtimestamp(commit.date / 1000, timezone.utc).date() if commit.date else None
    end = End(
        prov.text("under_test", "spec") or version,
        prov.text("under_test", "repository") if git else None,
        vcs if git else None,
        None if day == UNDATED else day,
        _NIGHTLY.search(version) is not None,
    )
    return package, version, end


def between_builds(h: History, last_good: str, first_bad: str) -> str | None:
    """ "Thunder 0.2.7.dev20251109 → 0.2.7.dev20251116: [the commits between](url) (...)", or
    None where either commit is not a build of one package under test."""
    good_commit, bad_commit = h.commit(last_good), h.commit(first_bad)
    if good_commit is None or bad_commit is None:
        return None
    good, bad = _build(good_commit), _build(bad_commit)
    if good is None or bad is None or good[0] != bad[0]:
        return None
    package = good[0]
    title = PACKAGE_TITLES.get(package, package)
    found = changes_between(package, good[2], bad[2])
    versions = f"{escape_md(title)} {escape_md(good[1], 80)} → {escape_md(bad[1], 80)}"
    return f"{versions}: {found.markdown(escape_md(found.text, 300))}"
