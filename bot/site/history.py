"""Which history ``asv publish`` should see: the git repository's, or the recorded one.

asv draws a result only if its commit is on a configured branch. When every results commit is
on one (results measured at real commits of this repository, with full history checked out),
stock asv with git is used as it is. Otherwise (lab runs at throwaway commits) the results
become their own linear history, oldest commit date first (bot/site/asv_history.py), so
nothing measured is dropped. ``auto`` picks the first when it can and says why it did not.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.results.types import CommitInfo

Mode = Literal["auto", "git", "recorded"]


@dataclass(frozen=True)
class History:
    mode: Literal["git", "recorded"]
    reason: str
    #: (full hash, commit date in ms) oldest first; for "git" only those asv will draw.
    commits: tuple[tuple[str, int], ...]
    #: Results commits asv will not draw (not on a configured branch): empty for "recorded".
    dropped: tuple[str, ...] = ()
    #: Results commits that are on a configured branch of the repository (linkable there).
    on_branch: frozenset[str] = frozenset()


def results_order(infos: Sequence[CommitInfo]) -> list[tuple[str, int]]:
    """Each commit once, by the commit date asv stored (ties: by hash, for a stable order)."""
    dates: dict[str, int] = {}
    for info in infos:
        dates[info.commit] = min(dates.get(info.commit, info.date), info.date)
    return sorted(dates.items(), key=lambda item: (item[1], item[0]))


def branch_commits(repo: Path, branch: str) -> list[str] | None:
    """First-parent history of ``branch`` (what asv's git plugin uses); None if unreadable."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "rev-list", "--first-parent", branch, "--"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.split() if done.returncode == 0 else None


def choose(mode: Mode, infos: Sequence[CommitInfo], repo: Path, branches: Sequence[str]) -> History:
    """Pure apart from reading ``git rev-list`` of each branch."""
    order = results_order(infos)
    branch_set: set[str] = set()
    unreadable = []
    for branch in branches:
        found = branch_commits(repo, branch)
        if found is None:
            unreadable.append(branch)
        else:
            branch_set.update(found)
    on_branch = frozenset(h for h, _ in order if h in branch_set)
    if mode == "recorded":
        return History("recorded", "asked for the recorded history", tuple(order), (), on_branch)
    missing = tuple(h for h, _ in order if h not in on_branch)
    kept = tuple((h, d) for h, d in order if h in on_branch)
    if mode == "git":
        return History("git", "asked for git history", kept, missing, on_branch)
    if not missing:
        why = f"every results commit is on {', '.join(branches)} in {repo}"
        return History("git", why, kept, (), on_branch)
    if unreadable:
        why = f"{repo} has no readable branch {', '.join(unreadable)}"
    else:
        why = f"{len(missing)} of {len(order)} results commits are not on {', '.join(branches)}"
    why += ": using the results' own recorded order"
    return History("recorded", why, tuple(order), (), on_branch)
