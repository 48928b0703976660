"""How the history store stays bounded: which stored runs are kept whole, stripped or retired.

A pure function of the rows (machine, commit, date, size) and a clock, so that it can be run
over a simulated year in a test and gives the same answer in the nightly job as on a laptop.

The rule, per machine (each machine is its own series on the website):

- **full** (age <= ``full_days``): kept whole, per-call samples (``kernel_us_calls``) included;
- **daily** (age <= ``daily_days``): every run kept, its per-call samples stripped (asv's
  per-round samples, which the verdicts and the website use, always stay);
- **weekly** (age <= ``weekly_days``): the first run of each ISO week, stripped;
- **monthly** (older): the first of those weekly survivors in each calendar month, stripped;
- a **pinned** commit (a change point, an open issue's commit) is kept whole whatever its age;
- then the **hard cap**: while the kept rows exceed ``cap_bytes``, the oldest unpinned row is
  retired, never a machine's newest one. Pins alone over the cap are kept, and said.

"First" (not last) of a week or month, counted over every run the store ever held (the retired
ones too, which the index keeps): so which run stands for a week never changes once chosen,
and thinning every night gives exactly what thinning once at the end would
(tests/store/test_store_policy.py checks this on simulated years). Counted over the survivors
alone, a week whose first run the monthly rule retired would elect its second, and so on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

MB = 1_000_000


class Action(str, Enum):
    KEEP = "keep"  # as it is (whole, or already stripped)
    STRIP = "strip"  # keep, without per-call samples
    RETIRE = "retire"  # remove from the store (recorded in the index)


@dataclass(frozen=True)
class Policy:
    full_days: int = 7
    daily_days: int = 30
    weekly_days: int = 365
    cap_bytes: int = 200 * MB

    def __post_init__(self) -> None:
        if not 0 <= self.full_days <= self.daily_days <= self.weekly_days:
            raise ValueError(
                "store policy: need 0 <= full_days <= daily_days <= weekly_days, got "
                f"{self.full_days}, {self.daily_days}, {self.weekly_days}"
            )
        if self.cap_bytes <= 0:
            raise ValueError(f"store policy: cap_bytes must be positive, got {self.cap_bytes}")

    def lines(self) -> list[str]:
        return [
            f"whole (per-call samples kept) for {self.full_days} days",
            f"every run for {self.daily_days} days, per-call samples stripped",
            f"then the first run of each ISO week up to {self.weekly_days} days",
            "then the first of those in each calendar month",
            f"hard cap {self.cap_bytes / MB:.0f} MB (oldest unpinned retired first)",
            "pinned commits kept whole",
        ]


@dataclass(frozen=True)
class Row:
    """What the policy needs of one stored run; sizes in bytes as stored and once stripped."""

    machine: str
    commit: str
    date: datetime  # asv's date of the commit (what the website orders by), timezone-aware
    size: int
    stripped_size: int
    stripped: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.machine, self.commit)


@dataclass(frozen=True)
class Thinning:
    actions: Mapping[tuple[str, str], Action]
    size_after: int
    over_cap: int  # bytes above the cap that only pinned or newest rows hold (0: within it)
    capped: frozenset[tuple[str, str]] = frozenset()  # retired by the cap, not by age

    def of(self, action: Action) -> list[tuple[str, str]]:
        return sorted(k for k, a in self.actions.items() if a is action)


def _week(d: datetime) -> tuple[int, int]:
    iso = d.isocalendar()
    return (iso[0], iso[1])


def _firsts(rows: Iterable[Row], bucket: str) -> set[tuple[str, str]]:
    """The earliest row (date, then commit) of each machine's week or month."""
    first: dict[tuple[str, tuple[int, int]], Row] = {}
    for row in rows:
        b = _week(row.date) if bucket == "week" else (row.date.year, row.date.month)
        k = (row.machine, b)
        if k not in first or (row.date, row.commit) < (first[k].date, first[k].commit):
            first[k] = row
    return {r.key for r in first.values()}


def _kept_by_age(
    rows: list[Row], history: list[Row], now: datetime, policy: Policy
) -> dict[tuple[str, str], bool]:
    """key -> whether the age rule keeps it (pins aside); `history` counts for the buckets."""
    everyone = [*rows, *history]
    weekly_old = [r for r in everyone if now - r.date > timedelta(days=policy.daily_days)]
    week_firsts = _firsts(weekly_old, "week")
    monthly_old = [r for r in weekly_old if now - r.date > _days(policy.weekly_days)]
    month_firsts = _firsts((r for r in monthly_old if r.key in week_firsts), "month")
    kept = {}
    for r in rows:
        age = now - r.date
        if age <= _days(policy.daily_days):
            kept[r.key] = True
        elif age <= _days(policy.weekly_days):
            kept[r.key] = r.key in week_firsts
        else:
            kept[r.key] = r.key in month_firsts
    return kept


def _days(n: int) -> timedelta:
    return timedelta(days=n)


def plan(
    rows: Iterable[Row],
    now: datetime,
    policy: Policy,
    pins: frozenset[str] = frozenset(),
    history: Iterable[Row] = (),
) -> Thinning:
    """What to do with each row; `pins` are full commit hashes (any machine); `history` the
    rows retired before (only their dates count: which run is a week's or a month's first)."""
    rows = sorted(rows, key=lambda r: (r.date, r.machine, r.commit))
    kept = _kept_by_age(rows, list(history), now, policy)
    actions: dict[tuple[str, str], Action] = {}
    for r in rows:
        if r.commit in pins:
            actions[r.key] = Action.KEEP
        elif not kept[r.key]:
            actions[r.key] = Action.RETIRE
        elif now - r.date > _days(policy.full_days) and not r.stripped:
            actions[r.key] = Action.STRIP
        else:
            actions[r.key] = Action.KEEP

    def size(r: Row) -> int:
        return r.stripped_size if actions[r.key] is Action.STRIP else r.size

    total = sum(size(r) for r in rows if actions[r.key] is not Action.RETIRE)
    newest = {r.machine: r.key for r in rows}  # sorted by date: the last one wins
    capped = set()
    for r in rows:  # oldest first
        if total <= policy.cap_bytes:
            break
        if actions[r.key] is Action.RETIRE or r.commit in pins or newest[r.machine] == r.key:
            continue
        total -= size(r)
        actions[r.key] = Action.RETIRE
        capped.add(r.key)
    return Thinning(actions, total, max(0, total - policy.cap_bytes), frozenset(capped))
