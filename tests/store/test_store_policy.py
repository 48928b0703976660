"""The store's retention policy (bot/store/policy.py), pure, on simulated years of nightlies."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_runs import sha

from bot.store.policy import MB, Action, Policy, Row, plan

START = datetime(2026, 1, 1, 3, tzinfo=timezone.utc)
WHOLE, STRIPPED = 4 * MB, 2 * MB


def night(n: int, machine: str = "h200") -> Row:
    return Row(machine, sha(n), START + timedelta(days=n), WHOLE, STRIPPED)


def apply(
    rows: list[Row],
    now: datetime,
    policy: Policy,
    pins: frozenset[str] = frozenset(),
    retired: list[Row] | None = None,
) -> list[Row]:
    """What the store holds after thinning, as bot/store/thin.py applies a plan; the rows it
    retires join `retired` (the index's list), which the next night's plan counts."""
    retired = [] if retired is None else retired
    actions = plan(rows, now, policy, pins, list(retired)).actions
    out = []
    for r in rows:
        if actions[r.key] is Action.STRIP:
            r = Row(r.machine, r.commit, r.date, r.stripped_size, r.stripped_size, True)
        if actions[r.key] is Action.RETIRE:
            retired.append(r)
        else:
            out.append(r)
    return out


def nightly(days: int, policy: Policy, pins: frozenset[str] = frozenset()) -> list[Row]:
    rows: list[Row] = []
    retired: list[Row] = []
    for n in range(days):
        rows = apply([*rows, night(n)], START + timedelta(days=n), policy, pins, retired)
    return rows


POLICIES = [Policy(), Policy(2, 10, 60), Policy(0, 0, 0), Policy(7, 30, 365 * 2)]


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_thinning_every_night_is_thinning_once(policy: Policy) -> None:
    """The first run of a week or month never changes once it left the daily window, so the
    nightly job's answer does not depend on how often it ran."""
    policy = Policy(policy.full_days, policy.daily_days, policy.weekly_days, 10**6 * MB)
    days = 500
    once = apply([night(n) for n in range(days)], START + timedelta(days=days - 1), policy)
    assert nightly(days, policy) == once


@settings(max_examples=40, deadline=None)
@given(
    nights=st.sets(st.integers(0, 600), min_size=1, max_size=120),
    windows=st.tuples(st.integers(0, 20), st.integers(0, 60), st.integers(0, 400)),
)
def test_any_history_thinned_nightly_is_thinned_once(
    nights: set[int], windows: tuple[int, int, int]
) -> None:
    """Nights with no run (a missed nightly, a build already stored) and any windows."""
    full, daily, weekly = sorted(windows)
    policy = Policy(full, daily, weekly, 10**6 * MB)
    order = sorted(nights)
    rows: list[Row] = []
    retired: list[Row] = []
    for n in order:
        rows = apply([*rows, night(n)], START + timedelta(days=n), policy, frozenset(), retired)
    now = START + timedelta(days=order[-1])
    assert rows == apply([night(n) for n in order], now, policy)


def test_a_year_keeps_every_recent_night_then_weeks_then_months() -> None:
    policy = Policy(full_days=7, daily_days=30, weekly_days=365, cap_bytes=10**6 * MB)
    rows = nightly(730, policy)
    now = START + timedelta(days=729)
    ages = {r.commit: (now - r.date).days for r in rows}
    whole = [r for r in rows if not r.stripped]
    assert sorted(ages[r.commit] for r in whole) == list(range(8))  # ages 0..7
    assert {a for a in ages.values() if a <= 30} == set(range(31))  # every night of the month
    weekly = [r for r in rows if 30 < ages[r.commit] <= 365]
    assert all(r.date.isocalendar()[2] == 1 for r in weekly)  # the week's first night: Monday
    weeks = {r.date.isocalendar()[:2] for r in weekly}
    assert len(weeks) == len(weekly) and 46 <= len(weekly) <= 48
    monthly = [r for r in rows if ages[r.commit] > 365]
    assert len({(r.date.year, r.date.month) for r in monthly}) == len(monthly)
    assert 11 <= len(monthly) <= 13
    # A month's first week-first: its first Monday (the history's first night, a Thursday, is
    # its own week's first).
    assert all(r.date.isocalendar()[2] == 1 and r.date.day <= 7 for r in monthly[1:])
    assert monthly[0].date == START


def test_pinned_commits_stay_whole_at_any_age() -> None:
    """A change point's commit (a Wednesday: the weekly rule alone would retire it)."""
    pinned = night(45)
    assert pinned.date.isocalendar()[2] != 1
    rows = nightly(400, Policy(), frozenset({pinned.commit}))
    (kept,) = [r for r in rows if r.commit == pinned.commit]
    assert not kept.stripped and kept.size == WHOLE
    assert pinned.commit not in {r.commit for r in nightly(400, Policy())}


def test_the_cap_retires_the_oldest_first_and_never_the_newest() -> None:
    rows = [night(n) for n in range(10)]
    now = rows[-1].date
    thinning = plan(rows, now, Policy(cap_bytes=20 * MB))
    retired = thinning.of(Action.RETIRE)
    assert retired == sorted(r.key for r in rows[:5]) and thinning.capped == set(retired)
    assert thinning.size_after == 20 * MB and thinning.over_cap == 0
    # The newest run alone over the cap: kept, and the excess said.
    lone = plan(rows[-1:], now, Policy(cap_bytes=MB))
    assert lone.of(Action.RETIRE) == [] and lone.over_cap == WHOLE - MB
    # Pins over the cap are kept too, the excess said.
    pinned = plan(rows, now, Policy(cap_bytes=MB), frozenset(r.commit for r in rows))
    assert pinned.of(Action.RETIRE) == [] and pinned.over_cap == 10 * WHOLE - MB


def test_machines_are_thinned_apart() -> None:
    """Each machine is its own series: the first run of a week is per machine."""
    rows = [night(n, "h200") for n in range(60)]
    rows += [
        Row("b200", sha(1000 + n), START + timedelta(days=n, hours=1), WHOLE, STRIPPED)
        for n in range(60)
    ]
    kept = apply(rows, START + timedelta(days=59), Policy(0, 10, 365, 10**6 * MB))
    for machine in ("h200", "b200"):
        old = [r for r in kept if r.machine == machine and r.date < START + timedelta(days=49)]
        assert len(old) == len({r.date.isocalendar()[:2] for r in old}) > 5


def test_the_policy_refuses_windows_out_of_order() -> None:
    with pytest.raises(ValueError, match="full_days <= daily_days"):
        Policy(full_days=40, daily_days=30)
    with pytest.raises(ValueError, match="cap_bytes"):
        Policy(cap_bytes=0)
