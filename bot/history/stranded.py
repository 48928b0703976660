"""The bot's open history issues that no current change matches (pure): what to say on each,
and whether to close it.

As the history grows, each window is tested at a smaller alpha, and a split confirmed on a
short history can move by a commit as commits arrive (docs/HISTORY.md), so a change confirmed
earlier may later no longer be confirmed, or be confirmed at a neighbouring split under
another key. Its issue then gets no follow-up from the changes and would stay open for ever.
Each such issue is judged here on its own range, as a confirmed regression is (follow.py): its
before window against the later changes of its guard and the newest commits. It gets one note
saying that the history no longer shows the change and what it shows near that range (said
once: the note carries a hidden marker, and an issue that has it gets no second one), and it
is closed as not planned only when the series at that range is back within the threshold;
otherwise it stays open with the note.

Only keys of the history's form for this machine whose two commits are in the history are
judged; anything else (another machine, a PR key, a range this history does not hold) is left
alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.decide.types import GuardKind
from bot.history.changepoint import Change
from bot.history.follow import range_state
from bot.history.issues import WHAT, history_key
from bot.history.watch import Watch
from bot.tell.issue import FAMILY

NOTE_MARK = "<!-- fusion-perfbot-stranded -->"
CLOSED_MARK = "<!-- fusion-perfbot-stranded-closed -->"
_KEY = re.compile(
    rf"{re.escape(FAMILY)}\|(?P<machine>[^|]+)\|(?P<good>[0-9a-f]{{12}})\.\."
    r"(?P<bad>[0-9a-f]{12})\|(?P<guard>ratio|nvfuser|thunder|broken)"
)
_GUARDS: dict[str, GuardKind] = {
    "ratio": "ratio",
    "nvfuser": "nvfuser",
    "thunder": "thunder",
    "broken": "broken",
}


@dataclass(frozen=True)
class Stranded:
    key: str
    guard: GuardKind
    back: bool  # the series at that range is back within the threshold: close as not planned
    note: str  # said once (carries NOTE_MARK)
    closed_note: str  # said when it closes after its note (carries CLOSED_MARK)


def parse_key(key: str) -> tuple[str, str, str, GuardKind] | None:
    """machine, last good, first bad (12 hex digits each) and guard of a history key."""
    m = _KEY.fullmatch(key)
    if m is None:
        return None
    return m["machine"], m["good"], m["bad"], _GUARDS[m["guard"]]


def _index(w: Watch, prefix: str) -> int | None:
    found = [i for i, c in enumerate(w.history.commits) if c.sha.startswith(prefix)]
    return found[0] if len(found) == 1 else None


def _near(w: Watch, guard: GuardKind, split: int) -> str:
    machine = w.history.machine
    if guard == "broken":
        near = [
            f"points failing from {b.first_bad[:12]} ("
            + (
                f"confirmed, key `{history_key(machine, b.last_good, b.first_bad, 'broken')}`"
                if b.confirmed
                else "pending"
            )
            + ")"
            for b in w.breaks
        ]
        return "; ".join(near) or "no break"

    def words(c: Change) -> str:
        where = f"{c.direction} between {c.last_good[:12]} and {c.first_bad[:12]}"
        if not c.confirmed:
            return f"{where} (pending)"
        if c.direction == "improved":
            return f"{where} (confirmed)"
        return f"{where} (confirmed, key `{history_key(machine, c.last_good, c.first_bad, guard)}`)"

    changes = sorted((*w.scan.changes, *w.scan.pending), key=lambda c: c.span.split)
    near = [
        words(c)
        for c in changes
        if c.guard == guard and abs(c.span.split - split) <= w.method.window
    ]
    return "; ".join(near) or "no change of this guard"


def _back(w: Watch, guard: GuardKind, split: int) -> bool:
    if guard == "broken":
        return all(b.follow == "recovered" for b in w.breaks)
    return range_state(w.table, w.scan, guard, split, w.method, w.model) == "recovered"


def stranded(w: Watch, key: str, current: frozenset[str]) -> Stranded | None:
    """What to do with the bot's open issue for ``key``, when it is one of ``w``'s history
    keys that no current change matches (``current``: the keys the history files now)."""
    parsed = parse_key(key)
    if key in current or parsed is None or parsed[0] != w.history.machine:
        return None
    machine, good, bad, guard = parsed
    i, j = _index(w, good), _index(w, bad)
    if i is None or j is None or j <= i:
        return None
    back = _back(w, guard, i)
    what = WHAT[guard]
    then = (
        "The series at that range is back within the threshold: closed as not planned."
        if back
        else "The series at that range is not back within the threshold: this issue stays "
        "open with this note, and is closed as not planned once it is."
    )
    note = (
        f"{NOTE_MARK}\nMain-branch history on {machine}: the history no longer shows this "
        f"change ({what} between {good} and {bad}). As commits arrive each window is tested "
        "at a smaller alpha and a split can move by a commit, so a change confirmed on a "
        "shorter history may no longer be confirmed, or be confirmed at a neighbouring split "
        f"under another key. Near that range it now shows: {_near(w, guard, i)}. {then}"
    )
    closed = (
        f"{CLOSED_MARK}\nMain-branch history on {machine}: the series at {good}..{bad} "
        f"({what}) is back within the threshold: closed as not planned (the history no "
        "longer shows this change)."
    )
    return Stranded(key, guard, back, note, closed)
