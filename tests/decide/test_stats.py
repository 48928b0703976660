"""The two-level noise model's statistics, against hand computation and their own guarantees.

Every expected number below is worked out from the formulas of bot/decide/stats.py's docstring
(``d = mean(y_head) - mean(y_base)``, ``se^2 = (tau^2 + w_base)/n + (tau^2 + w_head)/m``,
Welch-Satterthwaite df), not read back from the code; the quantiles come from bot/decide/tdist.py,
which tests/decide/test_tdist.py checks against the printed tables.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.decide.stats import (
    MAD_EFFICIENCY,
    MAD_SCALE,
    MEDIAN_EFFICIENCY,
    Between,
    Comparison,
    Interval,
    RunStat,
    aggregate,
    compare,
    holm,
    job_between,
    paired_between,
    pooled,
    run_stat,
    satterthwaite,
)
from bot.decide.tdist import t_cdf, t_quantile

#: A model tau^2 known so well that pooling with a job's repeats leaves it where it is.
EXACT = 1e12


def rs(y: float, w: float = 0.0, n: int = 21) -> RunStat:
    return RunStat(y, w, n)


# -- one run --------------------------------------------------------------------------------------


def test_run_stat_is_the_log_median_and_the_mad_variance() -> None:
    offsets = [0.0, 0.01, -0.01, 0.02, -0.02]  # median 0, MAD 0.01
    s = run_stat([2e-5 * math.exp(o) for o in offsets])
    assert s.n == 5
    assert s.y == pytest.approx(math.log(2e-5), abs=1e-12)
    want_w = (math.pi / 2) * (1.4826 * 0.01) ** 2 / 5
    assert s.w == pytest.approx(want_w, rel=1e-9, abs=0)
    assert (1.4826, math.pi / 2) == (MAD_SCALE, MEDIAN_EFFICIENCY)


def test_one_odd_round_does_not_inflate_w() -> None:
    calm = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01]
    odd = [*calm[:-1], 50.0]  # one round 50x slower
    assert run_stat(odd).w <= 2 * run_stat(calm).w
    assert run_stat([3.0] * 9) == RunStat(math.log(3.0), 0.0, 9)


# -- the comparison -------------------------------------------------------------------------------


def test_a_known_shift_is_recovered_exactly() -> None:
    c = compare([rs(math.log(2.0))], [rs(math.log(2.2))], Between(1e-4, 10))
    assert c.change.estimate == pytest.approx(1.1, rel=1e-14)
    assert c.log_change == pytest.approx(math.log(1.1), rel=1e-14)
    assert c.base.estimate == pytest.approx(2.0, rel=1e-14)
    assert c.head.estimate == pytest.approx(2.2, rel=1e-14)
    assert c.runs == (1, 1)


def test_the_interval_and_df_by_hand() -> None:
    """tau^2 3e-4 known from 5 df, one run a side, w 1e-4 and 2e-4 from 11 rounds each:
    parts 6e-4, 1e-4, 2e-4 (se 0.03); the within parts have MAD_EFFICIENCY * 10 df each, so
    df = 9e-4^2 / (6e-4^2/5 + 1e-4^2/(10 E) + 2e-4^2/(10 E))."""
    d = math.log(1.08)
    c = compare([rs(0.0, 1e-4, 11)], [rs(d, 2e-4, 11)], Between(3e-4, 5))
    e = MAD_EFFICIENCY
    assert 0.0 < e <= 1.0
    df = 8.1e-7 / (3.6e-7 / 5 + 1e-8 / (10 * e) + 4e-8 / (10 * e))
    assert df < 5 + 2 * 10 * e  # never more than the parts' df together
    assert c.df == pytest.approx(df, rel=1e-12)
    assert c.se == pytest.approx(0.03, rel=1e-12)
    assert c.tau2 == pytest.approx(3e-4, rel=1e-12, abs=0)
    q = t_quantile(0.975, df)
    assert t_quantile(0.975, math.ceil(df)) < q < t_quantile(0.975, math.floor(df))
    assert c.change.low == pytest.approx(math.exp(d - q * 0.03), rel=1e-12)
    assert c.change.high == pytest.approx(math.exp(d + q * 0.03), rel=1e-12)
    assert c.p_up == pytest.approx(t_cdf(-d / 0.03, df), rel=1e-12, abs=0)
    assert c.p_down == pytest.approx(t_cdf(d / 0.03, df), rel=1e-12)
    assert c.p_up + c.p_down == pytest.approx(1.0, abs=1e-14)
    # Each side's level: its own tau^2 + w over its runs.
    assert c.base.high == pytest.approx(math.exp(q * math.sqrt(4e-4)), rel=1e-12)
    assert c.head.low == pytest.approx(1.08 * math.exp(-q * math.sqrt(5e-4)), rel=1e-12)


def test_the_within_parts_df_grow_with_runs_and_rounds() -> None:
    """No tau^2 (none in the model; identical repeats give the job's 0): the df are the
    within parts' alone, two equal parts of E * runs * (rounds - 1) each."""
    e = MAD_EFFICIENCY
    one = compare([rs(0.0, 1e-4, 11)], [rs(0.05, 1e-4, 11)], Between())
    assert one.tau2 == 0.0
    assert one.se == pytest.approx(math.sqrt(2e-4), rel=1e-12)
    assert one.df == pytest.approx(2 * 10 * e, rel=1e-12)
    two = compare([rs(0.0, 1e-4, 11)] * 2, [rs(0.05, 1e-4, 11)] * 2, Between())
    assert two.df == pytest.approx(2 * 2 * 10 * e, rel=1e-12)
    rounds = compare([rs(0.0, 1e-4, 21)], [rs(0.05, 1e-4, 21)], Between())
    assert rounds.df == pytest.approx(2 * 20 * e, rel=1e-12)
    # The fewest rounds of a side's runs count.
    mixed = compare([rs(0.0, 1e-4, 21), rs(0.0, 1e-4, 6)], [rs(0.05, 1e-4, 21)] * 2, Between())
    lo, hi = 2 * 5 * e, 2 * 20 * e  # base: two runs of at least 6 rounds; head: 2 of 21
    want = (1e-4) ** 2 / ((5e-5) ** 2 / lo + (5e-5) ** 2 / hi)
    assert mixed.df == pytest.approx(want, rel=1e-12)


def _width(c: Interval) -> float:
    return math.log(c.high) - math.log(c.low)


def test_the_interval_widens_as_tau2_grows() -> None:
    widths = [
        _width(compare([rs(0.0, 1e-5)], [rs(0.02, 1e-5)], Between(tau2, 8)).change)
        for tau2 in (0.0, 1e-5, 1e-4, 1e-3)
    ]
    assert widths == sorted(widths) and len(set(widths)) == 4


def test_the_interval_widens_as_the_df_of_tau2_shrinks() -> None:
    cmps = [compare([rs(0.0)], [rs(0.02)], Between(1e-4, df)) for df in (100, 10, 4, 1)]
    assert len({c.se for c in cmps}) == 1  # same se: only the quantile moves
    assert [c.df for c in cmps] == pytest.approx([100, 10, 4, 1])
    widths = [_width(c.change) for c in cmps]
    assert widths == sorted(widths) and len(set(widths)) == 4
    p_ups = [c.p_up for c in cmps]
    assert p_ups == sorted(p_ups)  # less known about tau^2: less confident


def test_t_not_normal_intervals_cover_95_percent_with_few_aa_runs() -> None:
    """What the t buys: tau^2 estimated from 3 A/A runs (2 df), then one base and one head run
    of unchanged code. With the t quantile the interval holds the true change (1) 95% of the
    time; with the normal's 1.96 it would hold it only ~82% of the time."""
    rng = np.random.default_rng(11)
    trials, k, sd = 2000, 3, 0.01
    covered = covered_normal = 0
    for _ in range(trials):
        tau2 = float(np.var(rng.normal(0, sd, k), ddof=1))
        b, h = rng.normal(0, sd, 2)
        c = compare([rs(float(b))], [rs(float(h))], Between(tau2, k - 1))
        covered += c.change.low <= 1.0 <= c.change.high
        covered_normal += abs(c.log_change) <= 1.959964 * c.se
    assert 0.93 <= covered / trials <= 0.97, covered
    assert covered_normal / trials < 0.88, covered_normal


def test_repeats_shrink_se_by_root_runs() -> None:
    """Four runs a side of the same y's and w: se^2 = w/4 + w/4 instead of w + w (no tau^2)."""
    one = compare([rs(0.0, 1e-4)], [rs(0.03, 1e-4)], Between())
    four = compare([rs(0.0, 1e-4)] * 4, [rs(0.03, 1e-4)] * 4, Between())
    assert four.log_change == pytest.approx(one.log_change, abs=1e-15)
    assert four.se == pytest.approx(one.se / 2, rel=1e-12)
    assert four.runs == (4, 4)


def test_repeats_with_the_models_spread_shrink_se_by_root_two() -> None:
    """Two runs a side at mean -+ delta with delta^2 = tau^2 / 2: the job's own tau^2 is
    exactly the model's, so pooling leaves it, and se^2 = tau^2 (1/2 + 1/2) vs 2 tau^2."""
    tau2 = 4e-4
    delta = math.sqrt(tau2 / 2)
    base = [rs(-delta), rs(delta)]
    head = [rs(0.05 - delta), rs(0.05 + delta)]
    assert job_between(base, head) == Between(pytest.approx(tau2, rel=1e-12), 2.0)  # type: ignore[arg-type]
    two = compare(base, head, Between(tau2, 6))
    one = compare([rs(0.0)], [rs(0.05)], Between(tau2, 6))
    assert two.tau2 == pytest.approx(tau2, rel=1e-12, abs=0)
    assert two.log_change == pytest.approx(0.05, rel=1e-12)
    assert two.se == pytest.approx(one.se / math.sqrt(2), rel=1e-12)
    # the model's 6 runs count as 4 once the job has repeats of its own (PRIOR_DF), + 2
    assert two.df == pytest.approx(6.0, rel=1e-12)
    assert two.model_df == 6.0


def test_zero_spread_everywhere_means_se_zero() -> None:
    same = compare([rs(0.1)], [rs(0.1)], Between())
    assert (same.se, same.df, same.p_up, same.p_down) == (0.0, math.inf, 1.0, 1.0)
    assert same.change == Interval(1.0, 1.0, 1.0)
    up = compare([rs(0.1)], [rs(0.2)], Between())
    assert (up.se, up.p_up, up.p_down) == (0.0, 0.0, 1.0)
    assert up.change.estimate == up.change.low == up.change.high == pytest.approx(math.exp(0.1))
    down = compare([rs(0.2)], [rs(0.1)], Between())
    assert (down.p_up, down.p_down) == (1.0, 0.0)
    # A known tau^2 of 0 (with df) is still no spread at all.
    assert compare([rs(0.0)], [rs(0.01)], Between(0.0, 10)).se == 0.0


def test_a_comparison_needs_a_run_a_side() -> None:
    with pytest.raises(ValueError):
        compare([], [rs(0.0)], Between())
    with pytest.raises(ValueError):
        compare([rs(0.0)], [], Between())


runstat = st.builds(
    RunStat,
    st.floats(-0.2, 0.2),
    st.one_of(st.just(0.0), st.floats(1e-8, 1e-3)),
    st.integers(2, 60),
)
between = st.one_of(
    st.just(Between()), st.builds(Between, st.floats(0.0, 1e-3), st.floats(0.5, 50))
)


@given(
    st.lists(runstat, min_size=1, max_size=4), st.lists(runstat, min_size=1, max_size=4), between
)
@settings(max_examples=300, deadline=None)
def test_comparison_properties(base: list[RunStat], head: list[RunStat], model: Between) -> None:
    c = compare(base, head, model)
    d = statistics.fmean(r.y for r in head) - statistics.fmean(r.y for r in base)
    assert c.log_change == pytest.approx(d, abs=1e-12)
    assert 0.0 <= c.p_up <= 1.0 and 0.0 <= c.p_down <= 1.0
    for iv in (c.base, c.head, c.change):
        assert iv.low <= iv.estimate <= iv.high
    if c.se > 0 and abs(c.log_change) > 1e-6 * c.se:
        assert (c.p_up < 0.5) == (c.log_change > 0)
        assert (c.p_down < 0.5) == (c.log_change < 0)
    elif c.se > 0:  # t_cdf resolves |t| < ~1e-8 as 0 (see test_tdist.py)
        assert c.p_up == pytest.approx(0.5, abs=1e-6)
    if c.se > 0:
        assert c.p_up + c.p_down == pytest.approx(1.0, abs=1e-9)
        assert c.df > 0
    # Swapping base and head inverts the change and swaps the tails.
    r = compare(head, base, model)
    assert r.change.estimate == pytest.approx(1 / c.change.estimate, rel=1e-12)
    assert r.change.low == pytest.approx(1 / c.change.high, rel=1e-12)
    assert r.change.high == pytest.approx(1 / c.change.low, rel=1e-12)
    assert (r.p_up, r.p_down) == pytest.approx((c.p_down, c.p_up), abs=1e-12)
    assert (r.se, r.tau2) == pytest.approx((c.se, c.tau2), rel=1e-12)
    assert r.df == pytest.approx(c.df, rel=1e-12)


# -- runs to settle -------------------------------------------------------------------------------


def _alternated(change: float, tau2: float, r: int, w: float = 0.0, n: int = 21) -> Comparison:
    """``r`` alternated repeats of a +``change`` shift whose per-repeat changes spread exactly
    as the model says (variance 2 tau^2): what runs_to_settle projects."""
    delta = math.sqrt(2 * tau2)
    signs = [(-1) ** k for k in range(r - r % 2)] + [0] * (r % 2)
    scale = math.sqrt((r - 1) / max(sum(c * c for c in signs), 1))
    head = [rs(math.log(change) + delta * scale * c, w, n) for c in signs]
    return compare([rs(0.0, w, n)] * r, head, Between(tau2, EXACT), paired=r > 1)


def _settled(c: Comparison, threshold: float, alpha: float) -> bool:
    """The verdict's own test: established (regressed) or ruled out."""
    ch = c.change
    established = ch.estimate >= 1 + threshold and c.p_up < alpha and ch.low > 1
    return established or ch.high < 1 + threshold


def test_runs_to_settle_by_hand_above_the_threshold() -> None:
    """+3% at a 2% threshold, tau^2 1e-4 known, no within noise, alpha 0.01. With r alternated
    repeats se = sqrt(2e-4 / r) and df = 4 + r - 1: at r = 2, t = 2.96 on 5 df (p 0.016);
    at r = 3, t = 3.62 on 6 df (p 0.005) and the interval's low end 0.96% above 0."""
    c = compare([rs(0.0)], [rs(math.log(1.03))], Between(1e-4, EXACT))
    assert c.runs_to_settle(0.02, 0.01) == 3
    assert _settled(_alternated(1.03, 1e-4, 3), 0.02, 0.01)
    assert not _settled(_alternated(1.03, 1e-4, 2), 0.02, 0.01)  # and 3 is the fewest


def test_runs_to_settle_by_hand_below_the_threshold() -> None:
    """+1% at 2%: ruled out once the interval's top drops under 1.02: t(0.975, 3 + r)
    sqrt(2e-4 / r) < 0.99% first at r = 10 (2.160 x 0.447%; at 9, 2.179 x 0.471%)."""
    c = compare([rs(0.0)], [rs(math.log(1.01))], Between(1e-4, EXACT))
    assert c.runs_to_settle(0.02, 0.01) == 10
    assert _alternated(1.01, 1e-4, 10).change.high < 1.02
    assert _alternated(1.01, 1e-4, 9).change.high >= 1.02


def test_runs_to_settle_just_under_the_threshold_or_out_of_reach_is_none() -> None:
    under = compare([rs(0.0)], [rs(math.log(1.0199))], Between(1e-4, EXACT))
    assert under.runs_to_settle(0.02, 0.01) is None  # can neither be established nor ruled out
    assert under.runs_to_settle(0.02, 0.01, most=100) is None
    far = compare([rs(0.0)], [rs(math.log(1.01))], Between(1e-4, EXACT))
    assert far.runs_to_settle(0.02, 0.01, most=9) is None  # 10 needed


def test_runs_to_settle_counts_beyond_what_the_job_has() -> None:
    c = compare([rs(0.0)] * 3, [rs(math.log(1.10))] * 3, Between(1e-4, EXACT))
    assert (c.runs_to_settle(0.02, 0.01) or 0) > 3


@given(
    change=st.floats(0.95, 1.10),
    tau2=st.floats(1e-6, 1e-3),
    w=st.floats(0.0, 1e-4),
    rounds=st.integers(10, 40),
    alpha=st.sampled_from([0.01, 0.01 / 18, 0.01 / 9]),
)
@settings(max_examples=60, deadline=None)
def test_runs_to_settle_really_settles(
    change: float, tau2: float, w: float, rounds: int, alpha: float
) -> None:
    """Whatever it answers, that many alternated repeats whose spread is the model's give a
    comparison that the verdict's own test settles: established or ruled out."""
    threshold = 0.02
    c = compare([rs(0.0, w, rounds)], [rs(math.log(change), w, rounds)], Between(tau2, EXACT))
    r = c.runs_to_settle(threshold, alpha, most=60)
    if r is None:
        return
    assert _settled(_alternated(change, tau2, r, w, rounds), threshold, alpha)


# -- job_between, pooled, satterthwaite -----------------------------------------------------------


def test_job_between_from_repeats_with_known_spread() -> None:
    """Base y 0, 0.02 (mean 0.01, SS 2e-4); head 0.10, 0.10, 0.13 (mean 0.11, SS 6e-4);
    df 2 + 3 - 2 = 3; tau^2 = 8e-4 / 3 - mean(w) = 2.6667e-4 - 5e-5."""
    base = [rs(0.0, 5e-5), rs(0.02, 5e-5)]
    head = [rs(0.10, 5e-5), rs(0.10, 5e-5), rs(0.13, 5e-5)]
    got = job_between(base, head)
    assert got.df == 3.0
    assert got.tau2 == pytest.approx(8e-4 / 3 - 5e-5, rel=1e-10, abs=0)


def test_job_between_without_repeats_or_spread() -> None:
    assert job_between([rs(0.0)], [rs(0.5)]) == Between()
    assert job_between([rs(0.0), rs(0.0)], [rs(0.5)]) == Between(0.0, 1.0)
    # Spread smaller than the within-run noise explains: tau^2 0, not negative.
    small = job_between([rs(0.0, 1e-3), rs(0.001, 1e-3)], [rs(0.5, 1e-3), rs(0.5, 1e-3)])
    assert small == Between(0.0, 2.0)


def test_pooled_weights_by_degrees_of_freedom() -> None:
    got = pooled(Between(1e-4, 6), Between(4e-4, 2))
    assert got.df == 8
    assert got.tau2 == pytest.approx((6e-4 + 8e-4) / 8, rel=1e-12, abs=0)
    assert pooled(Between(), Between()) == Between()
    assert pooled(Between(3e-4, 5), Between()) == Between(3e-4, 5)
    assert pooled(Between(9.0, 0.0), Between(1e-4, 2)) == Between(1e-4, 2)  # unknown: unused


def test_satterthwaite_by_hand() -> None:
    assert satterthwaite([1.0, 1.0], [2.0, 2.0]) == pytest.approx(4.0)
    assert satterthwaite([3.0], [7.0]) == pytest.approx(7.0)
    # (1 + 2)^2 / (1/4 + 4/9) = 9 / 0.69444 = 12.96
    assert satterthwaite([1.0, 2.0], [4.0, 9.0]) == pytest.approx(12.96, rel=1e-12)
    assert satterthwaite([0.0, 2.0], [0.0, 5.0]) == pytest.approx(5.0)  # a zero part drops out
    assert satterthwaite([0.0, 0.0], [1.0, 1.0]) == math.inf
    with pytest.raises(ValueError):
        satterthwaite([1.0, 2.0], [3.0])


@given(st.lists(st.tuples(st.floats(1e-8, 1.0), st.floats(0.5, 100)), min_size=1, max_size=5))
@settings(max_examples=100, deadline=None)
def test_satterthwaite_lies_between_the_smallest_df_and_their_sum(
    parts: list[tuple[float, float]],
) -> None:
    v, df = zip(*parts, strict=True)
    got = satterthwaite(v, df)
    assert min(df) * (1 - 1e-9) <= got <= sum(df) * (1 + 1e-9)


# -- holm, aggregate ------------------------------------------------------------------------------


def test_holm_against_a_worked_example() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([0.2]) == [0.2]
    assert holm([]) == []
    assert holm([0.01, 0.01]) == pytest.approx([0.02, 0.02])


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(ps: list[float]) -> None:
    adj = holm(ps)
    assert all(p <= a <= 1 for a, p in zip(adj, ps, strict=True))
    assert all(a <= min(1.0, len(ps) * p) for a, p in zip(adj, ps, strict=True))
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adj[i] <= adj[j] for i, j in itertools.pairwise(order))


def test_aggregate_means_y_and_divides_w_by_k_squared() -> None:
    a = [rs(0.10, 4e-4, 20), rs(0.20, 1e-4, 20)]  # series a in runs 0, 1
    b = [rs(0.30, 8e-4, 15), rs(0.00, 3e-4, 25)]
    c = [rs(0.20, 6e-4, 30), rs(0.10, 2e-4, 20)]
    two = aggregate([a, b])
    assert [r.y for r in two] == pytest.approx([0.20, 0.10])
    assert [r.w for r in two] == pytest.approx([12e-4 / 4, 4e-4 / 4], rel=1e-12, abs=0)
    assert [r.n for r in two] == [15, 20]
    three = aggregate([a, b, c])
    assert [r.y for r in three] == pytest.approx([0.20, 0.10])
    assert [r.w for r in three] == pytest.approx([18e-4 / 9, 6e-4 / 9], rel=1e-12, abs=0)
    assert aggregate([a]) == a


def test_interval_excludes_one() -> None:
    assert Interval(1.05, 1.01, 1.09).excludes_one() == 1
    assert Interval(0.95, 0.91, 0.99).excludes_one() == -1
    assert Interval(1.05, 1.0, 1.09).excludes_one() == 0  # touching 1 is not excluding it
    assert Interval(0.95, 0.91, 1.0).excludes_one() == 0


def test_paired_repeats_cancel_what_a_repeat_shares() -> None:
    """Repeat 2 runs 5% slower on both sides (a machine state): unpaired, that is between-run
    spread; paired by repeat, it cancels and only the +2% change remains."""
    base = [rs(0.0), rs(0.05)]
    head = [rs(0.02), rs(0.07)]
    unpaired = compare(base, head, Between())
    paired = compare(base, head, Between(), paired=True)
    assert unpaired.log_change == pytest.approx(paired.log_change) == pytest.approx(0.02)
    assert unpaired.tau2 == pytest.approx(0.05**2 / 2)
    assert paired.tau2 == pytest.approx(0.0, abs=1e-30) and paired.change.low > 1.0
    assert unpaired.change.low < 1.0
    with pytest.raises(ValueError, match="same number"):
        paired_between(base, head[:1])
