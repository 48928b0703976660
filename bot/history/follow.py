"""What each confirmed regression's section of its alert (bot/history/alerts.py) says now (pure).

A regression found at a split stays news until what its guard tracks is back, and each one is
judged on its own change: its before window (the last good level), as one comparison at the
configured alpha (no positions to correct for), against its checkpoints, in commit order:

* after each later confirmed change of the same guard: when an improvement, the first commits
  after it (at most a window of them, up to the next change point): did that change bring it
  back? when a regression, the last commits before it (at most a window, after the change
  point before it): was it back by then, so that the new regression is a change of its own?
* the newest commits (at most a window, after the newest change point).

The first checkpoint where it is back decides: recovered (so an issue closed on a return is
never reopened by a later regression of the same guard, which has its own alert and key; and a
regression with a later one stacked on it closes once a later improvement brings the guard
back to where the first one started, not when the second one alone recovers). Back nowhere:
the newest commits decide (still regressed, or neither). The PR mode's rule turns each verdict
into the issue's state (bot/tell/issue.py ``sync_state``): open on alarm; close only when every
point of the guard was measured on both sides and none is regressed or unsure (a lower ratio
is no recovery while nvFuser's fusion is slower); anything between holds.

One case the level comparison would get wrong: nvFuser's fusion got slower (the ratio fell:
not a gain, never filed) and later got fast again (the ratio rose back). The ratio's rise is
then a regression against the low level before it, but only a return to where it was; a
ratio regression at the split where nvFuser's own confirmed regression recovered is read so
(its state "recovered", with the reason), and never files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.decide.types import GuardKind, Verdict
from bot.history.changepoint import Change, Scan
from bot.history.method import Method
from bot.history.table import Table, select
from bot.history.window import Span, decide_span
from bot.tell.issue import SyncState, sync_state


@dataclass(frozen=True)
class FollowUp:
    change: Change
    state: SyncState
    verdict: Verdict  # the change's before window against the commits that decided its state
    back_at: str | None  # the first commit of the recovery, when a later change brought it
    reason: str | None = None  # why it is not news though the windows say regressed
    #: back before the same guard's next confirmed regression (its first bad commit), which
    #: is a change of its own
    back_before: str | None = None


@dataclass(frozen=True)
class Checkpoint:
    """Commits ``start..end`` that a regression is judged against, and what they follow."""

    start: int
    end: int
    back_at: str | None = None  # after this improvement's first bad commit
    before: str | None = None  # just before this regression's first bad commit


def checkpoints(guard: GuardKind, split: int, scan: Scan, m: Method, size: int) -> list[Checkpoint]:
    """Where a regression of ``guard`` at ``split`` is judged, in commit order (see the module
    docstring); the newest commits last, always."""
    cuts = sorted({*scan.splits, split})
    out: list[Checkpoint] = []
    for c in scan.changes:
        k = c.span.split
        if c.guard != guard or k <= split:
            continue
        if c.direction == "improved":
            nxt = min((j for j in cuts if j > k), default=size - 1)
            out.append(Checkpoint(k + 1, min(k + m.window, nxt), back_at=c.first_bad))
        else:
            prev = max(j for j in cuts if j < k)
            out.append(Checkpoint(max(prev + 1, k - m.window + 1), k, before=c.first_bad))
    out = [at for at in out if at.end - at.start + 1 >= m.min_after]  # enough to speak
    newest = max(k for k in cuts if k >= split)
    last = Checkpoint(max(newest + 1, size - m.window), size - 1)
    if not out or (out[-1].start, out[-1].end) != (last.start, last.end):
        out.append(last)
    return out


class _Judge:
    """A regression's before window against a checkpoint, decided once: the regressions of
    one split (a ratio and the kernel guard that moved it) share their windows, and a
    decision of ~900 series is most of a follow-up's time."""

    def __init__(self, table: Table, m: Method, note: str) -> None:
        self.table, self.m, self.note = table, m, note
        self.decided: dict[tuple[int, int, int, int], Verdict] = {}

    def __call__(
        self, guard: GuardKind, first: int, split: int, at: Checkpoint
    ) -> tuple[SyncState, Verdict]:
        known = (first, split, at.start, at.end)
        if known not in self.decided:
            before = list(range(first, split + 1))
            sub = select(self.table, [*before, *range(at.start, at.end + 1)])
            span = Span(len(before) - 1, 0, sub.size - 1)
            alpha, m = self.table.settings.alpha, self.m
            self.decided[known] = decide_span(
                sub, span, alpha, m.min_before, m.min_after, self.note
            )
        v = self.decided[known]
        g = v.guard(guard)
        assert g is not None
        return sync_state(g, v), v


def _follow(
    judge: _Judge, scan: Scan, guard: GuardKind, first: int, split: int
) -> tuple[SyncState, Verdict, Checkpoint]:
    """The state of a regression of ``guard`` at ``split`` whose before window starts at
    ``first``: the first checkpoint where it is back, else the newest commits."""
    *earlier, newest = checkpoints(guard, split, scan, judge.m, judge.table.size)
    for at in (*earlier, newest):
        state, v = judge(guard, first, split, at)
        if state == "recovered" or at is newest:
            return state, v, at
    raise AssertionError("unreachable: the newest commits always decide")


def _follow_up(judge: _Judge, scan: Scan, change: Change) -> FollowUp:
    span = change.span
    state, v, at = _follow(judge, scan, change.guard, span.first, span.split)
    return FollowUp(change, state, v, at.back_at, back_before=at.before)


def range_state(
    table: Table, scan: Scan, guard: GuardKind, last_good: int, m: Method, model_note: str
) -> SyncState:
    """The follow-up of a regression of ``guard`` after commit ``last_good`` that the history
    no longer confirms (a stranded issue's range): its before window (at most a window, after
    the change point before it) judged as a confirmed regression's is."""
    prev = max((k for k in scan.splits if k < last_good), default=-1)
    first = max(last_good - m.window + 1, prev + 1)
    return _follow(_Judge(table, m, model_note), scan, guard, first, last_good)[0]


def follow_ups(table: Table, scan: Scan, m: Method, model_note: str) -> tuple[FollowUp, ...]:
    """Every confirmed regression's follow-up, in commit order (see the module docstring for
    the ratio that returns when nvFuser's fusion does)."""
    judge = _Judge(table, m, model_note)
    out = [_follow_up(judge, scan, c) for c in scan.changes if c.direction == "regressed"]
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
