"""The bot's open history issues that no current alert matches (pure): what to say on each,
and whether to close it.

As the history grows, each window is tested at a smaller alpha, and a split confirmed on a
short history can move by a commit as commits arrive (docs/HISTORY.md), so a change confirmed
earlier may later no longer be confirmed, or be confirmed at a neighbouring split under
another key. Its issue then gets no follow-up from the alerts and would stay open for ever.
Each such issue is judged here on its own range, as a confirmed regression is (follow.py): its
before window against the later changes of its guard and the newest commits, for every guard
it has a section of (read from the sizes marker it was filed with, ``unit/guard`` names;
without one, every guard). It gets one note saying that the history no longer shows the change
and what it shows near that range (said once: the note carries a hidden marker, and an issue
that has it gets no second one), and it is closed as not planned only when every one of those
guards is back within the threshold there; otherwise it stays open with the note.

Issues filed before alerts have one guard each, ``|<guard>`` after the range. They are judged
the same way on that guard; when a current alert at the same range has a section of that guard,
the note says the change is now tracked there, and the issue closes as completed once its
guard is back (the alert's section closes the same night).

Only keys of the history's forms for its unit (the machine for RMSNorm backward, else
``machine:fusion``: each fusion is a history of its own) whose two commits are in the history
are judged; anything else (another machine or fusion, a PR key, a range this history does not
hold) is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from bot.alert.model import FAMILY
from bot.decide.types import GUARD_TITLES, GuardKind
from bot.fusion.names import unit_words
from bot.history.alerts import ORDER, alert_key
from bot.history.changepoint import Change
from bot.history.follow import range_state
from bot.history.render import shown_direction
from bot.history.sections import WHAT
from bot.history.watch import Watch

NOTE_MARK = "<!-- fusion-perfbot-stranded -->"
CLOSED_MARK = "<!-- fusion-perfbot-stranded-closed -->"
_KEY = re.compile(
    rf"{re.escape(FAMILY)}\|(?P<unit>[^|]+)\|(?P<good>[0-9a-f]{{12}})\.\."
    r"(?P<bad>[0-9a-f]{12})(?:\|(?P<guard>ratio|nvfuser|thunder|broken))?"
)
_GUARDS: dict[str, GuardKind] = {g: g for g in ORDER}
Reason = Literal["completed", "not_planned"]


@dataclass(frozen=True)
class Stranded:
    key: str
    guards: tuple[GuardKind, ...]  # what the issue tracks at its range
    back: bool  # every one of them is back within the threshold there: close it
    reason: Reason  # how it closes
    note: str  # said once (carries NOTE_MARK)
    closed_note: str  # said when it closes after its note (carries CLOSED_MARK)


def parse_key(key: str) -> tuple[str, str, str, GuardKind | None] | None:
    """unit (the machine, or ``machine:fusion``), last good, first bad (12 hex digits each)
    and, for a key of an issue filed before alerts, its guard."""
    m = _KEY.fullmatch(key)
    if m is None:
        return None
    return m["unit"], m["good"], m["bad"], _GUARDS[m["guard"]] if m["guard"] else None


def guards_of(sizes: Mapping[str, float] | None, unit: str) -> tuple[GuardKind, ...]:
    """The guards an alert's issue has sections of, from its sizes marker (``unit/guard``
    names); every guard when it names none (it cannot then say which, and closes only when
    all are back)."""
    named = {name.rpartition("/")[2] for name in sizes or {} if name.rpartition("/")[0] == unit}
    found = tuple(g for g in ORDER if g in named)
    return found or ORDER


def index_of(w: Watch, prefix: str) -> int | None:
    """The commit of `w` that `prefix` names, or None (none, or more than one)."""
    found = [i for i, c in enumerate(w.history.commits) if c.sha.startswith(prefix)]
    return found[0] if len(found) == 1 else None


def _near(w: Watch, guard: GuardKind, split: int) -> str:
    unit = w.history.unit
    if guard == "broken":
        near = [
            f"points failing from {b.first_bad[:12]} ("
            + (
                f"confirmed, key `{alert_key(unit, b.last_good, b.first_bad)}`"
                if b.confirmed
                else "pending"
            )
            + ")"
            for b in w.breaks
        ]
        return "; ".join(near) or "no break"

    def words(c: Change) -> str:
        where = f"{shown_direction(c)} between {c.last_good[:12]} and {c.first_bad[:12]}"
        if not c.confirmed:
            return f"{where} (pending)"
        if c.direction == "improved":
            return f"{where} (confirmed)"
        return f"{where} (confirmed, key `{alert_key(unit, c.last_good, c.first_bad)}`)"

    changes = sorted((*w.scan.changes, *w.scan.pending), key=lambda c: c.span.split)
    near = [
        words(c)
        for c in changes
        if c.guard == guard and abs(c.span.split - split) <= w.method.window
    ]
    return "; ".join(near) or "no change of this guard"


def _back(w: Watch, guard: GuardKind, split: int) -> bool:
    if guard == "broken":
        here = [b for b in w.breaks if b.confirmed and b.split == split]
        return all(b.follow == "recovered" for b in here or w.breaks)
    return range_state(w.table, w.scan, guard, split, w.method, w.model) == "recovered"


def _superseded(key: str, guard: GuardKind, alert: str, back: bool) -> Stranded:
    unit, good, bad, _ = parse_key(key) or ("", "", "", None)
    on = unit_words(unit)
    what = WHAT[guard]
    then = (
        "It is back within the threshold: closed as completed."
        if back
        else "It is not back within the threshold: this issue stays open with this note, and "
        "is closed as completed once it is."
    )
    note = (
        f"{NOTE_MARK}\nMain-branch history on {on}: this change ({what} between {good} "
        f"and {bad}) is now a section of one alert with every guard that moved at this range, "
        f"key `{alert}`: the bot files one issue per break on main, in the repository that "
        f"owns it, and a short linked one in the other. This issue, filed before, is followed "
        f"until its guard is back. {then}"
    )
    closed = (
        f"{CLOSED_MARK}\nMain-branch history on {on}: {what} at {good}..{bad} is back "
        f"within the threshold: closed as completed (the alert `{alert}` tracks this range)."
    )
    return Stranded(key, (guard,), back, "completed", note, closed)


def stranded(
    w: Watch,
    key: str,
    current: Mapping[str, frozenset[GuardKind]],
    sizes: Mapping[str, float] | None = None,
) -> Stranded | None:
    """What to do with the bot's open issue for ``key``, when it is of one of ``w``'s key
    forms and no current alert is under it (``current``: the alerts' keys and the guards of
    their sections; ``sizes``: the issue's sizes marker)."""
    parsed = parse_key(key)
    if key in current or parsed is None or parsed[0] != w.history.unit:
        return None
    unit, good, bad, guard = parsed
    on = unit_words(unit)  # for people: "Softmax backward on nvidia-h200"
    i, j = index_of(w, good), index_of(w, bad)
    if i is None or j is None or j <= i:
        return None
    guards = (guard,) if guard else guards_of(sizes, unit)
    unsettled = [g for g in guards if not _back(w, g, i)]
    back = not unsettled
    alert = alert_key(unit, good, bad)
    if guard is not None and guard in current.get(alert, frozenset()):
        return _superseded(key, guard, alert, back)
    what = ", ".join(WHAT[g] for g in guards)
    near = "; ".join(
        f"{GUARD_TITLES[g]}: {_near(w, g, i)}" if len(guards) > 1 else _near(w, g, i)
        for g in guards
    )
    which = f" ({', '.join(GUARD_TITLES[g] for g in unsettled)})" if len(guards) > 1 else ""
    then = (
        "The series at that range is back within the threshold: closed as not planned."
        if back
        else f"The series at that range is not back within the threshold{which}: this issue "
        "stays open with this note, and is closed as not planned once it is."
    )
    note = (
        f"{NOTE_MARK}\nMain-branch history on {on}: the history no longer shows this "
        f"change ({what} between {good} and {bad}). As commits arrive each window is tested "
        "at a smaller alpha and a split can move by a commit, so a change confirmed on a "
        "shorter history may no longer be confirmed, or be confirmed at a neighbouring split "
        f"under another key. Near that range it now shows: {near}. {then}"
    )
    closed = (
        f"{CLOSED_MARK}\nMain-branch history on {on}: the series at {good}..{bad} "
        f"({what}) is back within the threshold: closed as not planned (the history no "
        "longer shows this change)."
    )
    return Stranded(key, guards, back, "not_planned", note, closed)
