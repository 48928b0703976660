"""An alert whose change point moved by a commit (pure): which open issue it moved from.

As commits arrive, a split confirmed on a short history can move to a neighbouring one
(docs/HISTORY.md: each window is then tested at a smaller alpha, and the strongest split
wins). The alert's key names its range, so the moved change has a new key, and without this
rule it would file a second pair of issues while the first stays open with a "no longer
shown" note: two open issues for one regression. Here an alert with no issue of its own takes
over the open issue of a range of the same unit (the machine, or a fusion on it) whose last
good commit is at most one commit away and which has a section of a guard the alert also has;
that issue is re-keyed (bot/commands/history_moved.py) and then updated in place like any
alert's issue.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from bot.decide.types import GuardKind
from bot.fusion.names import unit_words
from bot.history.stranded import index_of, parse_key
from bot.history.watch import Watch

#: How far a split may move and still be the same change: one commit, as the method moves it.
MOVE = 1


def moved_from(
    w: Watch,
    key: str,
    guards: Set[GuardKind],
    open_issues: Mapping[str, Set[GuardKind]],
    current: Set[str],
) -> str | None:
    """The key of the open issue alert `key` (of `guards`) moved from, or None. `open_issues`:
    the keys of the bot's open issues with the guards each has sections of; `current`: every
    alert's key this night (an issue a current alert owns moves to nobody)."""
    new = parse_key(key)
    if new is None or new[0] != w.history.unit or key in open_issues:
        return None
    here = index_of(w, new[1])
    if here is None:
        return None
    near = []
    for old, old_guards in open_issues.items():
        parsed = parse_key(old)
        if old in current or parsed is None or parsed[0] != new[0] or parsed[3] is not None:
            continue  # another unit, a current alert's issue, or one filed a guard each
        there = index_of(w, parsed[1])
        if there is not None and abs(there - here) <= MOVE and set(old_guards) & set(guards):
            near.append((abs(there - here), old))
    return min(near)[1] if near else None


def moved_note(unit: str, old: str, new: str) -> str:
    """The one comment a re-keyed issue gets (``unit``: the alert's, said in words)."""
    return (
        f"Main-branch history on {unit_words(unit)}: the change this issue tracks is now found one "
        f"commit away, at `{new}` (it was `{old}`): the more commits after it, the surer the "
        "split. This issue follows it there, so the change keeps one issue."
    )
