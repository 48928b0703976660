"""What each confirmed regression's linked issue should do now (pure).

A regression found at a split stays news until what its guard tracks is back. So each one is
judged again, as one comparison at the configured alpha (no positions to correct for): its
before window (the last good level) against

* the first commits after the same guard's next confirmed improvement (at most a window of
  them, up to the next change point), when there is one: did that change bring it back?
* otherwise the newest commits (at most a window, after the newest change point): is it
  still regressed?

and the PR mode's rule turns that verdict into the issue's state (bot/tell/issue.py
``sync_state``): open on alarm; close only when every point of the guard was measured on both
sides and none is regressed or unsure (a lower ratio is no recovery while nvFuser's fusion is
slower); anything between holds. A later regression of the same guard after a recovery is a
change of its own, with its own issue, so an issue once closed is not reopened by it.

One case the level comparison would get wrong: nvFuser's fusion got slower (the ratio fell:
not a gain, never filed) and later got fast again (the ratio rose back). The ratio's rise is
then a regression against the low level before it, but only a return to where it was; a
ratio regression at the split where nvFuser's own confirmed regression recovered is read so
(its state "recovered", with the reason), and never files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.decide.types import Verdict
from bot.history.changepoint import Change, Method, Scan
from bot.history.table import Table, select
from bot.history.window import Span, decide_span
from bot.tell.issue import SyncState, sync_state


@dataclass(frozen=True)
class FollowUp:
    change: Change
    state: SyncState
    verdict: Verdict  # the change's before window against the commits it is judged on now
    back_at: str | None  # the first commit of the recovery, when a later change brought it
    reason: str | None = None  # why it is not news though the windows say regressed


def _target(change: Change, scan: Scan, m: Method, size: int) -> tuple[int, int, str | None]:
    later = [
        c
        for c in scan.changes
        if c.guard == change.guard
        and c.direction == "improved"
        and c.span.split > change.span.split
    ]
    if later:
        back = later[0].span.split
        nxt = min((k for k in scan.splits if k > back), default=size - 1)
        return back + 1, min(back + m.window, nxt), later[0].first_bad
    newest = max(k for k in (*scan.splits, change.span.split) if k >= change.span.split)
    return max(newest + 1, size - m.window), size - 1, None


def follow_up(table: Table, scan: Scan, change: Change, m: Method, model_note: str) -> FollowUp:
    start, end, back_at = _target(change, scan, m, table.size)
    before = list(range(change.span.first, change.span.split + 1))
    sub = select(table, [*before, *range(start, end + 1)])
    span = Span(len(before) - 1, 0, sub.size - 1)
    v = decide_span(sub, span, table.settings.alpha, m.min_before, m.min_after, model_note)
    guard = v.guard(change.guard)
    assert guard is not None
    return FollowUp(change, sync_state(guard, v), v, back_at)


def follow_ups(table: Table, scan: Scan, m: Method, model_note: str) -> tuple[FollowUp, ...]:
    """Every confirmed regression's follow-up, in commit order (see the module docstring for
    the ratio that returns when nvFuser's fusion does)."""
    out = [
        follow_up(table, scan, c, m, model_note) for c in scan.changes if c.direction == "regressed"
    ]
    nv_back = {f.back_at: f for f in out if f.change.guard == "nvfuser" and f.back_at}
    for i, f in enumerate(out):
        nv = nv_back.get(f.change.first_bad)
        if f.change.guard == "ratio" and nv is not None:
            why = (
                f"the ratio rose back as nvFuser's fusion, slower since "
                f"{nv.change.first_bad[:12]}, got fast again: a return, not a regression"
            )
            out[i] = replace(f, state="recovered", reason=why)
    return tuple(out)
