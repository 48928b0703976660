"""The arrays and the screen compute exactly what the PR mode's scalar code does: run_stat's
``y`` and ``w`` for every series of every run, compare()'s change and statistic for every
series at every split, and a screen that never drops a split the full decision would flag."""

from __future__ import annotations

import math

import numpy as np
import pytest
from history_data import NVFUSER_2, STOCK, THUNDER_2, UNFUSED, real, shipped

from bot.decide.noise_model import samples_of
from bot.decide.stats import compare, run_stat
from bot.history.changepoint import DIRECTIONS, spans
from bot.history.method import Method
from bot.history.scan import Windows, screen, window_stats
from bot.history.table import build
from bot.history.window import decide_span

HISTORIES = {
    "a/a": STOCK,
    "thunder +2%": (*STOCK[:6], *THUNDER_2, *STOCK[6:9]),
    "nvfuser +2%": (*STOCK[:6], *NVFUSER_2),
    "unfused": (*STOCK[:4], UNFUSED, *STOCK[4:7]),
}


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_every_series_of_every_run_is_run_stat(name: str) -> None:
    s, model = shipped()
    h = real(HISTORIES[name])
    table = build(h, s, model)
    for ft in table.families.values():
        assert ft.keys
        for j, key in enumerate(ft.keys):
            for r, run in enumerate(h.runs):
                got = run_stat(samples_of(ft.kind, run, key) or (1.0,))
                assert ft.n[j, r] == got.n
                assert ft.y[j, r] == got.y and ft.w[j, r] == pytest.approx(got.w, rel=1e-12)


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_vectorised_statistic_is_compares(name: str) -> None:
    s, model = shipped()
    table = build(real(HISTORIES[name]), s, model)
    m = Method()
    all_spans = [sp for i in range(1, table.size - 1) for sp in spans(i, (), m, table.size)]
    w = Windows(
        *(np.asarray([getattr(sp, f) for sp in all_spans]) for f in ("split", "first", "last"))
    )
    lo, mid, hi = w.columns(table)
    for ft in table.families.values():
        d, t, nb, na = window_stats(ft.y, ft.w, ft.n, ft.between, lo, mid, hi)
        for k in range(len(all_spans)):
            for j in range(len(ft.keys)):
                b, a = ft.stats(j, int(lo[k]), int(mid[k])), ft.stats(j, int(mid[k]), int(hi[k]))
                c = compare(b, a, ft.between[j])
                assert (nb[j, k], na[j, k]) == (len(b), len(a))
                assert d[j, k] == pytest.approx(c.log_change, abs=1e-12)
                assert t[j, k] == pytest.approx(c.log_change / c.se, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_screen_never_drops_a_split_the_decision_flags(name: str) -> None:
    s, model = shipped()
    table = build(real(HISTORIES[name]), s, model)
    m = Method()
    alpha = s.alpha / (table.size - m.min_before)
    every = [
        sp for i in range(m.min_before - 1, table.size - 1) for sp in spans(i, (), m, table.size)
    ]
    w = Windows(*(np.asarray([getattr(sp, f) for sp in every]) for f in ("split", "first", "last")))
    passed = screen(table, w, alpha, m.min_before)
    flagged = 0
    for sp, ok in zip(every, passed, strict=True):
        v = decide_span(table, sp, alpha, m.min_before, m.min_after, "")
        moved = any(g.state in DIRECTIONS for g in v.guards)
        flagged += moved
        assert ok or not moved, sp
    if name in ("a/a", "unfused"):  # one commit 17x slower: its own spread outweighs it
        assert flagged == 0 and not passed.any()
    else:
        assert flagged > 0


def test_a_span_decision_is_a_verdict_of_first_bad_against_last_good() -> None:
    s, model = shipped()
    h = real(HISTORIES["thunder +2%"])
    table = build(h, s, model)
    v = decide_span(table, spans(5, (), Method(), table.size)[1], 1e-3, 2, 2, "note")
    assert (v.base, v.head) == (h.commits[5].sha, h.commits[6].sha)
    assert v.runs == (6, 2) and v.model == "note"
    assert [g.kind for g in v.guards] == ["broken", "nvfuser", "thunder", "ratio"]
    assert v.guard("thunder").state == "regressed"  # type: ignore[union-attr]
    assert math.isclose(
        v.worst.cmp.change.estimate, max(p.cmp.change.estimate for p in v.points if p.cmp)
    )  # type: ignore[union-attr]


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_search_decides_as_the_full_decision_does(name: str) -> None:
    """The search compares only rows whose p could be under alpha: every guard's state, every
    flagged row and its Holm-adjusted p-values are those of the full decision."""
    s, model = shipped()
    table = build(real(HISTORIES[name]), s, model)
    m = Method()
    alpha = s.alpha / (table.size - m.min_before)
    for i in range(m.min_before - 1, table.size - 1):
        for sp in spans(i, (), m, table.size):
            quick = decide_span(table, sp, alpha, m.min_before, m.min_after, "", full=False)
            full = decide_span(table, sp, alpha, m.min_before, m.min_after, "", full=True)
            assert [g.state for g in quick.guards] == [g.state for g in full.guards]
            for q, f in zip(
                (*quick.points, *quick.kernels), (*full.points, *full.kernels), strict=True
            ):
                assert (q.key, q.state in DIRECTIONS) == (f.key, f.state in DIRECTIONS)
                if q.cmp is not None:  # Holm is exact where the raw p is under alpha
                    assert (q.state, q.corroborated) == (f.state, f.corroborated)
                    assert f.cmp is not None
                    if f.cmp.p_up < alpha:
                        assert q.p_up_adj == f.p_up_adj
                    if f.cmp.p_down < alpha:
                        assert q.p_down_adj == f.p_down_adj


def test_holm_over_a_part_is_holm_when_the_part_is_everything() -> None:
    from bot.decide.stats import holm
    from bot.history.rows import holm_within

    ps = [0.04, 0.001, 0.2, 0.01, 0.5, 0.0004]
    assert holm_within(ps, len(ps)) == holm(ps)
    smallest = sorted(ps)[:3]
    assert holm_within(smallest, len(ps)) == sorted(holm(ps))[:3]


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_the_screen_is_its_stated_rule(name: str) -> None:
    """A split passes when some series or geometric mean, by compare()'s own arithmetic, has
    |t| at least the normal quantile of the per-split alpha and a change past its bar."""
    from statistics import NormalDist

    from bot.decide.stats import RunStat

    s, model = shipped()
    table = build(real(HISTORIES[name]), s, model)
    m = Method()
    alpha = s.alpha / (table.size - m.min_before)
    z = NormalDist().inv_cdf(1 - alpha)
    every = [
        sp for i in range(m.min_before - 1, table.size - 1) for sp in spans(i, (), m, table.size)
    ]
    w = Windows(*(np.asarray([getattr(sp, f) for sp in every]) for f in ("split", "first", "last")))
    lo, mid, hi = w.columns(table)
    passed = screen(table, w, alpha, m.min_before)

    def passes(before: list[RunStat], after: list[RunStat], prior: object, bar: float) -> bool:
        if len(before) < m.min_before or not after:
            return False
        c = compare(before, after, prior)  # type: ignore[arg-type]
        t = c.log_change / c.se if c.se else math.copysign(math.inf, c.log_change)
        return abs(t) >= z and abs(c.log_change) >= math.log1p(bar)

    for k in range(len(every)):
        a, b, e = int(lo[k]), int(mid[k]), int(hi[k])
        want = False
        for ft in table.families.values():
            for j in range(len(ft.keys)):
                want |= passes(
                    ft.stats(j, a, b), ft.stats(j, b, e), ft.between[j], ft.thresholds[j]
                )
            for g in ft.aggregates:
                stats = [RunStat(float(g.y[r]), float(g.w[r]), int(g.n[r])) for r in range(a, e)]
                want |= passes(stats[: b - a], stats[b - a :], g.between, s.broad_effect)
        assert bool(passed[k]) == want, every[k]


def test_a_split_one_commit_early_is_not_the_change() -> None:
    """The persistence rule: after a stock commit, three really slower ones; at the split
    before that stock commit the window's mean moved by the threshold, but its first commit
    did not: no change there (the change is at the next split, where it belongs)."""
    from history_data import THUNDER_5

    from bot.history.window import Span

    s, model = shipped()
    order = (*STOCK[:5], STOCK[9], *THUNDER_2, THUNDER_5)
    table = build(real(order), s, model)
    alpha = s.alpha / (table.size - 2)
    early = decide_span(table, Span(4, 0, 8), alpha, 2, 2, "", full=True)
    assert early.guard("ratio").state != "regressed"  # type: ignore[union-attr]
    right = decide_span(table, Span(5, 0, 8), alpha, 2, 2, "", full=True)
    assert right.guard("ratio").state == "regressed"  # type: ignore[union-attr]


def test_persistence_needs_data_at_min_after_commits_after_the_split() -> None:
    """A series confirmed with 2 commits after its split must have moved at 2 of them: one
    commit with data (the other's run failed for it) is one odd run, not a persistent change;
    a pending span (1 commit after) asks for its one."""
    from types import SimpleNamespace

    from bot.history.rows import Span, _persistent

    table = SimpleNamespace(runs=lambda first, last: (first, last + 1))  # a run per commit
    c = SimpleNamespace(base=SimpleNamespace(estimate=1.0), log_change=math.log(1.03))
    y = np.asarray([0.0, 0.0, 0.0, math.log(1.03), 0.0])
    moved_once = np.asarray([1, 1, 1, 1, 0])  # commit 4 has no data for this series
    both = np.ones(5, dtype=np.int64)
    span, pending = Span(2, 0, 4), Span(3, 0, 4)
    assert not _persistent(table, y, moved_once, span, c, 2)  # type: ignore[arg-type]
    y_both = np.asarray([0.0, 0.0, 0.0, math.log(1.03), math.log(1.03)])
    assert _persistent(table, y_both, both, span, c, 2)  # type: ignore[arg-type]
    assert _persistent(table, y_both, both, pending, c, 2)  # type: ignore[arg-type]
    assert not _persistent(table, y_both, moved_once, pending, c, 2)  # type: ignore[arg-type]
