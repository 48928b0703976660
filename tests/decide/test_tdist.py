"""Student's t without SciPy: against printed tables, closed forms and its own guarantees.

The reference values are the familiar two-sided 95% (and 99%) table entries; the closed forms
are the Cauchy distribution (df 1), df 2 (``F(t) = 1/2 + t / (2 sqrt(2 + t^2))``) and the
normal (df inf), which pin the CDF far tighter than a four-digit table can.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.decide.tdist import betainc, t_cdf, t_quantile, t_sf

# -- quantiles against the printed table ------------------------------------------------------

TABLE_975 = [
    (1, 12.7062),
    (2, 4.3027),
    (3, 3.1824),
    (4, 2.7764),
    (5, 2.5706),
    (10, 2.2281),
    (20, 2.0860),
    (30, 2.0423),
    (60, 2.0003),
    (120, 1.9799),
    (math.inf, 1.9600),
]


@pytest.mark.parametrize(("df", "want"), TABLE_975)
def test_the_975_quantile_matches_the_table(df: float, want: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(want, abs=5e-5)
    assert t_quantile(0.025, df) == pytest.approx(-want, abs=5e-5)


@pytest.mark.parametrize(
    ("p", "df", "want"),
    [
        (0.95, 1, 6.3138),
        (0.95, 10, 1.8125),
        (0.995, 1, 63.6567),
        (0.995, 10, 3.1693),
        (0.995, math.inf, 2.5758),
        (0.9, 4, 1.5332),
    ],
)
def test_other_table_quantiles(p: float, df: float, want: float) -> None:
    assert t_quantile(p, df) == pytest.approx(want, abs=5e-5)


def test_the_quantile_is_exact_where_a_closed_form_exists() -> None:
    # df 1: tan(pi (p - 1/2)); df 2: (2p - 1) sqrt(2 / (4 p (1 - p))).
    for p in (0.6, 0.9, 0.975, 0.999):
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
        want = (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))
        assert t_quantile(p, 2) == pytest.approx(want, rel=1e-10)
    assert t_quantile(0.5, 3) == pytest.approx(0.0, abs=1e-10)


def test_fractional_and_large_degrees_of_freedom() -> None:
    """Welch-Satterthwaite gives fractional df; a huge df is the normal."""
    q10, q105, q11 = (t_quantile(0.975, df) for df in (10, 10.5, 11))
    assert q10 > q105 > q11
    assert t_quantile(0.975, 1e9) == pytest.approx(1.959963984540054, abs=1e-9)
    assert t_quantile(0.975, 1e6) == pytest.approx(1.959963984540054, abs=1e-5)


# -- the CDF ------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", [-30.0, -3.0, -1.0, -0.2, 0.0, 0.5, 1.0, 2.5, 40.0])
def test_cdf_matches_closed_forms(t: float) -> None:
    assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-13)
    assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-13)
    assert t_cdf(t, math.inf) == pytest.approx(0.5 * math.erfc(-t / math.sqrt(2)), abs=1e-15)


def test_cdf_at_zero_and_infinity() -> None:
    for df in (0.5, 1, 3, 30, math.inf):
        assert t_cdf(0.0, df) == pytest.approx(0.5, abs=1e-15)
        assert t_cdf(math.inf, df) == 1.0
        assert t_cdf(-math.inf, df) == 0.0
    assert math.isnan(t_cdf(math.nan, 5))


def test_tiny_upper_tails_keep_their_precision() -> None:
    """t_sf reads the lower tail of -t: 1 - cdf would give 0 below 1e-16."""
    # df 1: sf(t) = atan(1/t) / pi; df 2: sf(t) = 1 / ((sqrt(2 + t^2) + t) sqrt(2 + t^2)).
    for t in (10.0, 1e3, 1e6):
        assert t_sf(t, 1) == pytest.approx(math.atan(1 / t) / math.pi, rel=1e-10, abs=0)
        r = math.sqrt(2 + t * t)
        assert t_sf(t, 2) == pytest.approx(1 / ((r + t) * r), rel=1e-10, abs=0)
    # Reference values (SciPy's stats.t.sf), far below what 1 - cdf can represent.
    assert t_sf(30, 10) == pytest.approx(1.9808961710156623e-11, rel=1e-9, abs=0)
    assert t_sf(20, 100) == pytest.approx(4.9971339306685015e-37, rel=1e-9, abs=0)
    assert t_sf(40, 3) == pytest.approx(1.7190340394579253e-05, rel=1e-10, abs=0)
    assert t_sf(-40, 3) == pytest.approx(1 - 1.7190340394579253e-05, rel=1e-14)
    assert t_sf(30, math.inf) == pytest.approx(4.906713927148764e-198, rel=1e-12, abs=0)


@given(st.floats(-50, 50), st.floats(0.5, 1e4))
@settings(max_examples=200, deadline=None)
def test_cdf_is_symmetric(t: float, df: float) -> None:
    assert t_cdf(t, df) + t_cdf(-t, df) == pytest.approx(1.0, abs=1e-12)
    assert t_sf(t, df) == pytest.approx(1 - t_cdf(t, df), abs=1e-12)


@given(st.floats(-40, 40), st.floats(-40, 40), st.floats(0.5, 1e4))
@settings(max_examples=200, deadline=None)
def test_cdf_is_monotone_in_t_and_a_probability(a: float, b: float, df: float) -> None:
    lo, hi = sorted((a, b))
    assert 0.0 <= t_cdf(lo, df) <= t_cdf(hi, df) <= 1.0


@given(st.floats(0.01, 20), st.floats(0.5, 200), st.floats(1.01, 10))
@settings(max_examples=200, deadline=None)
def test_fewer_degrees_of_freedom_mean_heavier_tails(t: float, df: float, more: float) -> None:
    assert t_sf(t, df) >= t_sf(t, df * more) - 1e-15
    assert t_sf(t, df * more) >= t_sf(t, math.inf) - 1e-15


@given(st.floats(0.51, 1 - 1e-6), st.floats(0.5, 1e4))
@settings(max_examples=200, deadline=None)
def test_quantile_inverts_the_cdf(p: float, df: float) -> None:
    """(Away from p = 1/2; next to it, see test_cdf_keeps_its_accuracy_next_to_zero.)"""
    q = t_quantile(p, df)
    assert t_cdf(q, df) == pytest.approx(p, abs=1e-10)
    assert t_quantile(1 - p, df) == pytest.approx(-q, rel=1e-9)
    assert t_cdf(-q, df) == pytest.approx(1 - p, rel=1e-8, abs=1e-12)


@given(st.floats(0.51, 0.9999), st.floats(0.5, 1e4))
@settings(max_examples=100, deadline=None)
def test_the_quantile_shrinks_as_df_grows(p: float, df: float) -> None:
    assert t_quantile(p, df) >= t_quantile(p, 2 * df) - 1e-9


def _density_at_zero(df: float) -> float:
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi))


def test_cdf_keeps_its_accuracy_next_to_zero() -> None:
    assert t_cdf(1e-8, 1) - 0.5 == pytest.approx(1e-8 / math.pi, abs=1e-12)
    # Next to 0, F(t) - 1/2 = t f(0) up to t^3 (under 1e-18 here).
    for df in (30.0, 1e4):
        t = 1e-8 * math.sqrt(df)
        assert t_cdf(t, df) - 0.5 == pytest.approx(t * _density_at_zero(df), abs=1e-11)


def test_cdf_keeps_its_documented_accuracy_at_large_df() -> None:
    """The docstring's limit: the log-gamma difference cancels near 10^7 degrees of freedom."""
    assert t_cdf(1.5, 9.9e6) == pytest.approx(0.9331927827867412, abs=1e-8)  # SciPy's value


def test_betainc_closed_forms() -> None:
    for x in (0.0, 0.1, 0.5, 0.73, 1.0):
        assert betainc(1, 1, x) == pytest.approx(x, abs=1e-14)
        assert betainc(3, 1, x) == pytest.approx(x**3, abs=1e-14)
        assert betainc(1, 4, x) == pytest.approx(1 - (1 - x) ** 4, abs=1e-14)
        assert betainc(2.5, 1.5, x) + betainc(1.5, 2.5, 1 - x) == pytest.approx(1, abs=1e-13)
    assert betainc(2, 3, -0.5) == 0.0
    assert betainc(2, 3, 1.5) == 1.0


# -- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize("df", [0.0, -1.0, -1e-9])
def test_non_positive_degrees_of_freedom_raise(df: float) -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_cdf(1.0, df)
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(0.975, df)


def test_minus_infinite_degrees_of_freedom_raise() -> None:
    with pytest.raises(ValueError):
        t_cdf(1.0, -math.inf)


def test_nan_degrees_of_freedom_raise() -> None:
    with pytest.raises(ValueError):
        t_cdf(1.0, math.nan)
    with pytest.raises(ValueError):
        t_quantile(0.9, math.nan)


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5, math.nan, math.inf])
def test_a_quantile_outside_0_1_raises(p: float) -> None:
    with pytest.raises(ValueError, match="probability"):
        t_quantile(p, 5)


def test_cdf_keeps_its_tail_where_the_two_forms_meet() -> None:
    """Found by hypothesis: the mirrored form, used up to t^2 < df, cancelled to 0.0 at
    t = -10, df 107 while t = -11 gave 1.4e-19; the tails now always use the direct form."""
    assert 0.0 < t_cdf(-11.0, 107.0) < t_cdf(-10.0, 107.0) < t_cdf(-1.0, 107.0) < 0.5
    for t in (-0.999, -1.0, -1.001):  # both sides of the switch at |t| = 1
        assert t_cdf(t, 5.0) == pytest.approx(1 - t_cdf(-t, 5.0), rel=1e-12)
