"""The method (pure): where along a history the four guards changed, confirmed or pending.

At every split between two commits (the last good commit and the first bad one), the commits
before it (at most ``window``) are compared with the commits after it (at most ``window``,
and also only the first ``min_after`` of them, so that a change that lasted only a few commits
is not diluted by the commits after its end) by bot/history/window.py: the PR mode's guards and
rules on the two windows, at alpha over the number of windows tested (Bonferroni over
positions; Holm within each guard's points, as in the PR mode). Only splits the screen
(bot/history/scan.py) lets through are decided in full.

Change points are then taken one at a time, strongest first (the largest |t| of a guard's
evidence), and every window stops at the change points found so far, as binary segmentation
does (E-Divisive means in MongoDB's and Apache Otava's hands): a step does not show up again at
the splits next to it, and a second change is tested against its own level. After the last,
each change point is decided once more with its final windows and dropped if it no longer
holds.

A change is **confirmed** when at least ``min_after`` commits follow it (with the persistence
rule of window.py), **pending** when fewer do (only at the newest commits): it is reported,
with how many more commits would let it speak, and never files an issue. A pending change far
beyond noise (its interval's near end past 4x the guard's threshold) is marked ``remeasure``
instead, and is confirmed once every run of a re-measurement of its first bad commit shows it
again (bot/history/remeasure.py); its split is then a change point like the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from bot.decide.types import GuardKind, Verdict
from bot.history.method import Method
from bot.history.remeasure import Remeasure, judge
from bot.history.scan import Windows, screen
from bot.history.table import Table
from bot.history.window import Span, decide_span, strength

Direction = Literal["regressed", "improved"]
DIRECTIONS: tuple[Direction, ...] = ("regressed", "improved")


@dataclass(frozen=True)
class Change:
    """One guard's change at one split, with the decision that found it."""

    guard: GuardKind
    direction: Direction
    confirmed: bool
    span: Span
    verdict: Verdict
    strength: float
    #: Far beyond noise at the newest commits (bot/history/remeasure.py): the commit to measure
    #: again, and what its re-measurement said; None for every other change.
    remeasure: Remeasure | None = None

    @property
    def confirmed_by(self) -> str | None:
        """How a confirmed change was: "commits" (min_after after it) or "remeasure"."""
        if not self.confirmed:
            return None
        return "remeasure" if self.remeasure is not None else "commits"

    @property
    def last_good(self) -> str:
        return self.verdict.base

    @property
    def first_bad(self) -> str:
        return self.verdict.head


@dataclass(frozen=True)
class Scan:
    changes: tuple[Change, ...]  # confirmed, in commit order
    pending: tuple[Change, ...]
    tested: int  # splits tested
    alpha: float  # per window tested (the configured alpha over ``windows``)
    splits: tuple[int, ...]  # the change points, in commit order
    decided: int  # splits decided in full (the rest the screen let go)
    windows: int = 0  # windows tested with no change point found (the Bonferroni count)


def flagged(v: Verdict) -> list[tuple[GuardKind, Direction, float]]:
    out = []
    for g in v.guards:
        for d in DIRECTIONS:
            if g.state == d:
                out.append((g.kind, d, strength(g, d)))
    return out


class _Decider:
    """Decides spans once each (the same span comes back as change points are added): in the
    search, only the rows that could be flagged (window.py, ``full=False``: the same states);
    the spans reported, in full."""

    def __init__(self, table: Table, m: Method, alpha: float, model_note: str) -> None:
        self.table, self.m, self.alpha, self.note = table, m, alpha, model_note
        self.cache: dict[tuple[Span, bool], Verdict] = {}

    def __call__(self, span: Span, full: bool = False) -> Verdict:
        if (span, full) not in self.cache:
            m = self.m
            self.cache[span, full] = decide_span(
                self.table, span, self.alpha, m.min_before, m.min_after, self.note, full
            )
        return self.cache[span, full]


def spans(i: int, splits: Iterable[int], m: Method, size: int) -> list[Span]:
    """The windows of split ``i`` given the change points found: the full one and the short
    one (``min_after`` commits after), each stopping at the change points either side."""
    cut = sorted(splits)
    before = max((k for k in cut if k < i), default=-1)
    after = min((k for k in cut if k > i), default=size - 1)
    first, last = max(i - m.window + 1, before + 1), min(i + m.window, after)
    out = [Span(i, first, last)]
    if last > i + m.min_after:
        out.append(Span(i, first, i + m.min_after))
    return out


def _best(v: Verdict) -> float:
    return max((s for _, _, s in flagged(v)), default=0.0)


def usable(i: int, splits: Iterable[int], m: Method, size: int) -> list[Span]:
    """The spans of split ``i`` that may confirm a change: enough commits either side."""
    return [
        s for s in spans(i, splits, m, size) if s.before >= m.min_before and s.after >= m.min_after
    ]


def _strongest(decide: _Decider, options: list[Span]) -> tuple[float, Span, Verdict] | None:
    found = []
    for span in options:
        v = decide(span)
        if flagged(v):
            found.append((_best(v), span, v))
    return max(found, key=lambda x: x[0], default=None)


def tested_windows(size: int, m: Method) -> int:
    """How many windows the search tests when nothing changed: a confirmable split's usable
    spans (the full window and the short one) and a newest split's one; the Bonferroni count,
    so that a false change anywhere, in any window, is at most alpha. A change point found only
    shortens windows (the short one may then be the full one): never more tests than this."""
    count = 0
    for i in range(m.min_before - 1, size - 1):
        if size - 1 - i >= m.min_after:
            count += len(usable(i, [], m, size))
        else:
            count += int(spans(i, [], m, size)[0].before >= m.min_before)
    return count


def find_changes(table: Table, m: Method, model_note: str = "") -> Scan:
    size = table.size
    positions = list(range(m.min_before - 1, size - 1))
    confirmable = [i for i in positions if size - 1 - i >= m.min_after]
    windows = tested_windows(size, m)
    if not positions or not windows:
        return Scan((), (), len(positions), table.settings.alpha, (), 0, windows)
    alpha = table.settings.alpha / windows
    decide = _Decider(table, m, alpha, model_note)
    splits: list[int] = []
    for _ in range(len(confirmable)):
        best: tuple[float, int] | None = None
        options = {i: usable(i, splits, m, size) for i in confirmable if i not in splits}
        for i in _screened(table, options, alpha, m):
            hit = _strongest(decide, options[i])
            if hit is not None and (best is None or hit[0] > best[0]):
                best = (hit[0], i)
        if best is None:
            break
        splits.append(best[1])
    splits = _settle(decide, splits, m, size)
    ends = [i for i in positions if i not in confirmable]
    splits, late, pending = _remeasured(decide, ends, splits, m, size, model_note)
    cuts = sorted({*splits, *(c.span.split for c in late)})
    changes = []
    for i in sorted(splits):
        hit = _strongest(decide, usable(i, cuts, m, size))
        assert hit is not None  # _settle kept only those that hold
        v = decide(hit[1], full=True)
        changes += [Change(g, d, True, hit[1], v, s) for g, d, s in flagged(v)]
    changes = sorted([*changes, *late], key=lambda c: c.span.split)
    return Scan(
        tuple(changes),
        tuple(pending),
        len(positions),
        alpha,
        tuple(cuts),
        len({span for span, _ in decide.cache}),
        windows,
    )


def _remeasured(
    decide: _Decider, ends: list[int], splits: list[int], m: Method, size: int, note: str
) -> tuple[list[int], list[Change], list[Change]]:
    """The change points, the pending changes confirmed by a re-measurement of their first bad
    commit, and the pending changes left (marked ``remeasure`` where far beyond noise).

    A confirmed one's split becomes a change point: the other change points are settled again
    with their windows stopping there too, which can move the pending windows; so this repeats
    until the confirmed splits stay the same. Were there none that stay (never seen), the old
    rule alone: nothing is confirmed by a re-measurement."""
    fixed: list[int] = []
    for _ in range(len(ends) + 2):
        kept = _settle(decide, splits, m, size, fixed)
        found = _pending(decide, ends, [*kept, *fixed], m, size)
        marked = [_mark(decide, c, m, note) for c in found]
        now = sorted({c.span.split for c in marked if c.confirmed})
        if now == fixed:
            return kept, [c for c in marked if c.confirmed], [c for c in marked if not c.confirmed]
        fixed = now
    found = _pending(decide, ends, splits, m, size)
    marked = [_mark(decide, c, m, note) for c in found]
    return splits, [], [replace(c, confirmed=False) for c in marked]


def _mark(decide: _Decider, c: Change, m: Method, note: str) -> Change:
    """A pending change with its ``remeasure`` mark (bot/history/remeasure.py), confirmed
    when every run of its re-measured first bad commit agrees."""
    mark = judge(decide.table, c.span, c.verdict, c.guard, c.direction, decide.alpha, m, note)
    if mark is None:
        return c
    return replace(c, confirmed=bool(mark.agreed), remeasure=mark)


def _screened(table: Table, options: dict[int, list[Span]], alpha: float, m: Method) -> list[int]:
    """The splits whose spans could flag a guard (bot/history/scan.py)."""
    flat = [(i, s) for i, ss in options.items() for s in ss]
    if not flat:
        return []
    windows = Windows(
        np.asarray([s.split for _, s in flat], dtype=np.int64),
        np.asarray([s.first for _, s in flat], dtype=np.int64),
        np.asarray([s.last for _, s in flat], dtype=np.int64),
    )
    passed = screen(table, windows, alpha, m.min_before)
    return sorted({i for (i, _), ok in zip(flat, passed, strict=True) if ok})


def _settle(
    decide: _Decider, splits: list[int], m: Method, size: int, fixed: Iterable[int] = ()
) -> list[int]:
    """Drop, one at a time, change points that no longer hold with their final windows (which
    stop at the ``fixed`` ones too: splits confirmed by a re-measurement)."""
    kept = list(splits)
    pinned = list(fixed)
    while True:
        cuts = [*kept, *pinned]
        weak = [i for i in kept if _strongest(decide, usable(i, cuts, m, size)) is None]
        if not weak:
            return kept
        kept.remove(weak[0])


def _pending(
    decide: _Decider, ends: list[int], splits: list[int], m: Method, size: int
) -> list[Change]:
    """Changes at the newest commits, with fewer than ``min_after`` commits after them."""
    best: dict[tuple[GuardKind, Direction], Change] = {}
    for i in ends:
        span = spans(i, splits, m, size)[0]
        if span.before < m.min_before:
            continue
        if not flagged(decide(span)):  # the search's decision flags what the full one does
            continue
        v = decide(span, full=True)
        for g, d, s in flagged(v):
            if (g, d) not in best or s > best[g, d].strength:
                best[g, d] = Change(g, d, False, span, v, s)
    return sorted(best.values(), key=lambda c: (c.span.split, c.guard))
