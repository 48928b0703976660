"""The statistics, against brute force and against their own guarantees."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.decide.stats import (
    bootstrap_medians,
    compare,
    geometric_mean,
    holm,
    mann_whitney,
    point_seed,
)


def _brute_force_p(base: list[float], head: list[float]) -> tuple[float, float]:
    """Exact one-sided p-values by enumerating every relabelling of the pooled values."""
    pooled = base + head
    n = len(head)

    def u(h: list[float], b: list[float]) -> float:
        return sum((y > x) + 0.5 * (y == x) for y in h for x in b)

    observed = u(head, base)
    stats = []
    for chosen in itertools.combinations(range(len(pooled)), n):
        h = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        stats.append(u(h, b))
    total = len(stats)
    return (
        sum(s >= observed for s in stats) / total,
        sum(s <= observed for s in stats) / total,
    )


@pytest.mark.parametrize(("m", "n"), [(3, 3), (4, 6), (7, 5), (6, 6)])
def test_exact_mann_whitney_matches_enumeration(m: int, n: int) -> None:
    rng = np.random.default_rng(m * 10 + n)
    for shift in (0.0, 0.7, -1.5):
        base = list(rng.normal(size=m))
        head = list(rng.normal(shift, size=n))
        got = mann_whitney(base, head)
        want = _brute_force_p(base, head)
        assert got == pytest.approx(want, rel=1e-9)


def test_mann_whitney_with_ties_uses_the_tie_corrected_normal_approximation() -> None:
    base = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0] * 2
    head = [v + 2.0 for v in base]
    up, down = mann_whitney(base, head)
    assert up < 0.01 < 0.99 < down
    assert mann_whitney([1.0] * 10, [1.0] * 10) == (1.0, 1.0)


@given(
    st.lists(st.floats(0.5, 2.0), min_size=3, max_size=15),
    st.lists(st.floats(0.5, 2.0), min_size=3, max_size=15),
)
@settings(max_examples=60, deadline=None)
def test_mann_whitney_is_antisymmetric(base: list[float], head: list[float]) -> None:
    up, down = mann_whitney(base, head)
    rev_up, rev_down = mann_whitney(head, base)
    assert up == pytest.approx(rev_down) and down == pytest.approx(rev_up)
    assert 0 < up <= 1 and 0 < down <= 1
    assert up + down >= 1 - 1e-9  # both tails include the observed value


def test_holm_against_hand_computation() -> None:
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    assert holm([]) == []


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_the_order(ps: list[float]) -> None:
    adj = holm(ps)
    assert all(a >= p for a, p in zip(adj, ps, strict=True))
    assert all(a <= 1 for a in adj)
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    assert all(adj[i] <= adj[j] for i, j in itertools.pairwise(order))


@pytest.mark.parametrize("n", [1, 2, 5, 10, 11, 25])
def test_fast_bootstrap_medians_equal_the_plain_ones(n: int) -> None:
    x = np.random.default_rng(n).lognormal(size=n)
    fast = bootstrap_medians(x, 500, np.random.default_rng(7))
    idx = np.random.default_rng(7).integers(0, n, size=(500, n))
    plain = np.median(np.sort(x)[idx], axis=1)
    assert np.array_equal(fast, plain)


def test_compare_estimates_ci_and_reproducibility() -> None:
    rng = np.random.default_rng(3)
    base = list(rng.lognormal(0, 0.01, 25))
    head = list(np.array(base) * 1.05)
    c = compare(base, head, resamples=2000, seed=11)
    assert c.base.estimate == pytest.approx(float(np.median(base)))
    assert c.change.estimate == pytest.approx(1.05)
    for iv in (c.base, c.head, c.change):
        assert iv.low <= iv.estimate <= iv.high
    assert c.change.excludes_one() == 1
    assert c.p_up < 1e-6 < 0.99 < c.p_down
    again = compare(base, head, resamples=2000, seed=11)
    assert again.change == c.change


def test_ci_narrows_with_more_rounds() -> None:
    rng = np.random.default_rng(5)
    widths = []
    for n in (10, 40, 160):
        base, head = rng.lognormal(0, 0.02, n), rng.lognormal(0, 0.02, n)
        c = compare(list(base), list(head), resamples=2000, seed=1)
        widths.append(c.change.high - c.change.low)
    assert widths[0] > widths[1] > widths[2]


def test_geometric_mean_of_points() -> None:
    rng = np.random.default_rng(9)
    base = list(rng.lognormal(0, 0.01, 20))
    up = compare(base, list(np.array(base) * 1.10), resamples=1000, seed=1)
    down = compare(base, list(np.array(base) / 1.10), resamples=1000, seed=2)
    gm = geometric_mean([up, down])
    assert gm.estimate == pytest.approx(1.0)
    assert gm.low <= 1.0 <= gm.high
    assert geometric_mean([up]).estimate == pytest.approx(up.change.estimate)
    with pytest.raises(ValueError):
        geometric_mean([])


def test_point_seed_depends_on_name_not_order() -> None:
    assert point_seed(1, "a/b/c") == point_seed(1, "a/b/c") != point_seed(1, "a/b/d")
    assert point_seed(1, "x") != point_seed(2, "x")
    assert 0 <= point_seed(2**31, "x") < 2**32


def test_the_change_interval_covers_the_true_change_about_95_percent_of_the_time() -> None:
    """What a 95% interval promises, checked against the truth rather than against the code's
    own quantile: 400 pairs of 25 lognormal rounds whose true median ratio is 1.03; the
    percentile bootstrap of a median is known to run a little under nominal at n = 25."""
    rng = np.random.default_rng(7)
    covered = 0
    trials = 400
    for i in range(trials):
        base = rng.lognormal(0.0, 0.01, 25)
        head = 1.03 * rng.lognormal(0.0, 0.01, 25)
        c = compare(base, head, resamples=1000, seed=i)
        covered += c.change.low <= 1.03 <= c.change.high
    assert 0.88 <= covered / trials <= 0.99, covered


@given(st.floats(0.001, 0.2), st.integers(5, 30))
@settings(max_examples=30, deadline=None)
def test_log_change_replicates_carry_the_interval(scale: float, n: int) -> None:
    """The geometric mean is built from `log_change_reps`: they must be the replicates the
    interval came from (every one inside the range of change the resampling allows)."""
    rng = np.random.default_rng(n)
    base = list(rng.lognormal(0, scale, n))
    head = list(rng.lognormal(0, scale, n))
    c = compare(base, head, resamples=400, seed=n)
    reps = np.exp(c.log_change_reps)
    assert reps.shape == (400,)
    assert reps.min() >= min(head) / max(base) * (1 - 1e-12)
    assert reps.max() <= max(head) / min(base) * (1 + 1e-12)
    inside = np.mean((reps >= c.change.low) & (reps <= c.change.high))
    assert inside >= 0.95 - 1 / 400  # a percentile interval holds its central 95% (ties: more)
